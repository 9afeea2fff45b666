"""$AGENT_HOME/dynamodb.json: a broken file stops the stack with a message naming it, and is never written over."""

from __future__ import annotations

import json

import pytest
from agent_local import cli
from agent_local.stack import LocalStack
from agent_local.state import StateFileError, keep_backup, read_snapshot, write_snapshot

KEYS = {"ThreadsTable": ["thread_id"], "AccountsTable": ["user_key", "policy_number"]}
GOOD_ITEM = {"thread_id": {"S": "t-1"}, "version": {"N": "3"}, "turns": {"L": [{"M": {"role": {"S": "user"}}}]}}


@pytest.mark.parametrize(("content", "expected"), [
    ("[1, 2]", "expected a JSON object of table name -> items, found a JSON list"),
    ('"text"', "found a JSON str"),
    ("{", "not valid JSON (line 1"),
    ('{"Nope": []}', "unknown table 'Nope' (known: AccountsTable, ThreadsTable)"),
    ('{"ThreadsTable": {}}', "table 'ThreadsTable' holds a dict, expected a list"),
    ('{"ThreadsTable": [5]}', "item 0 of table 'ThreadsTable' is a int"),
    ('{"ThreadsTable": [{"thread_id": "t-1"}]}', "attribute 'thread_id' of item 0 of table 'ThreadsTable' is not a typed"),
    ('{"ThreadsTable": [{"thread_id": {"Q": "t"}}]}', "is not a typed DynamoDB value"),
    ('{"ThreadsTable": [{"thread_id": {"S": "t"}, "version": {"N": "three"}}]}', "attribute 'version'"),
    ('{"ThreadsTable": [{"version": {"N": "1"}}]}', "lacks its key attribute(s) thread_id"),
])
def test_unreadable_snapshot_names_file_and_remedy(tmp_path, content, expected):
    path = tmp_path / "dynamodb.json"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(StateFileError) as caught:
        read_snapshot(path, KEYS)
    message = str(caught.value)
    assert expected in message
    assert str(path) in message and "nothing was changed" in message and f"mv {path}" in message


def test_valid_snapshot_round_trips(tmp_path):
    path = tmp_path / "dynamodb.json"
    write_snapshot(path, {"ThreadsTable": [GOOD_ITEM]})
    assert read_snapshot(path, KEYS) == {"ThreadsTable": [GOOD_ITEM]}
    assert read_snapshot(tmp_path / "absent.json", KEYS) == {}
    assert [p.name for p in tmp_path.iterdir()] == ["dynamodb.json"]  # no temporary file left behind


def test_backup_keeps_the_state_found_at_start(tmp_path):
    path = tmp_path / "dynamodb.json"
    write_snapshot(path, {"ThreadsTable": [GOOD_ITEM]})
    keep_backup(path)
    write_snapshot(path, {"ThreadsTable": []})
    backup = json.loads((tmp_path / "dynamodb.json.bak").read_text(encoding="utf-8"))
    assert backup == {"ThreadsTable": [GOOD_ITEM]}
    path.write_text("[]", encoding="utf-8")
    with pytest.raises(StateFileError, match=r"cp .*dynamodb\.json\.bak"):  # the advice points at the backup
        read_snapshot(path, KEYS)


def test_stack_refuses_to_start_on_broken_state_and_leaves_it(tmp_path):
    path = tmp_path / "dynamodb.json"
    path.write_text('{"ThreadsTable": [{"thread_id": "raw"}]}', encoding="utf-8")
    before = path.read_bytes()
    stack = LocalStack(tmp_path)
    with pytest.raises(StateFileError):
        stack.start()
    assert stack.server is None  # failed before anything listened or wrote
    stack.stop()
    assert path.read_bytes() == before
    assert not (tmp_path / "dynamodb.json.bak").exists()


def test_cli_reports_broken_state_without_traceback(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("AGENT_HOME", str(tmp_path))
    path = tmp_path / "dynamodb.json"
    path.write_text('{"Sessions": []}', encoding="utf-8")
    code = cli.main(["--home", str(tmp_path), "memory", "--user", "u-1", "--tenant", "sepehr"])
    err = capsys.readouterr().err
    assert code == 1
    assert err.startswith("agent: cannot read the local state") and "unknown table 'Sessions'" in err
    assert "Traceback" not in err
    assert path.read_text(encoding="utf-8") == '{"Sessions": []}'
    # The home is free again for the next command.
    assert (tmp_path / "agent.lock").read_text(encoding="utf-8") == ""
