"""The CloudWatch-shaped execution log: conversion from execution history, masking, the local file,
and the one reader (path, durations, retries, Choice decisions, failures) on AWS-shaped events."""

from __future__ import annotations

import datetime as dt
import json

import pytest
from agent_local.execution_log import LocalExecutionLog, history_to_log_events, mask_text
from agent_local.trace import (
    TraceError,
    describe_rule,
    evaluate_rule,
    find_executions,
    graph_json,
    layout,
    local_definition,
    parse_execution,
    render_text,
)
from insurance_agent.policy.pii import find_pii

ARN = "arn:aws:states:eu-central-1:123456789012:express:turns:run-1:4135929f"
T0 = 1_713_959_670_000

# A small machine: Start (Pass) -> Work (Task, retried then caught) -> Route (Choice) -> End / Recover
DEFINITION = {
    "StartAt": "Start",
    "States": {
        "Start": {"Type": "Pass", "Next": "Work"},
        "Work": {"Type": "Task", "Resource": "arn:aws:states:::lambda:invoke", "Next": "Route",
                 "Catch": [{"ErrorEquals": ["States.ALL"], "Next": "Recover"}]},
        "Route": {"Type": "Choice", "Choices": [{"Variable": "$.ok", "BooleanEquals": True, "Next": "End"}],
                  "Default": "Recover"},
        "Recover": {"Type": "Pass", "Next": "End"},
        "End": {"Type": "Pass", "End": True},
    },
}


def event(number, kind, at, details=None, previous=None):
    """One log line as Step Functions writes it (every value a string, details as the API body)."""
    record = {"id": str(number), "type": kind}
    if details is not None:
        record["details"] = details
    return record | {"previous_event_id": str(number - 1 if previous is None else previous),
                     "event_timestamp": str(T0 + at), "execution_arn": ARN, "redrive_count": "0"}


def failing_task_events():
    turn = json.dumps({"turn_id": "turn-7", "thread_id": "thread-3", "tenant_id": "sepehr", "message": "hi"})
    cause = json.dumps({"errorType": "ModelTimeout", "errorMessage": "model took too long"})
    return [
        event(1, "ExecutionStarted", 0, {"input": turn, "inputDetails": {"truncated": False}, "roleArn": "r"}, 0),
        event(2, "PassStateEntered", 1, {"name": "Start", "input": turn}),
        event(3, "PassStateExited", 2, {"name": "Start", "output": turn}),
        event(4, "TaskStateEntered", 3, {"name": "Work", "input": turn}),
        event(5, "TaskScheduled", 4, {"resource": "invoke", "resourceType": "lambda", "region": "eu-central-1"}),
        event(6, "TaskStarted", 5, {"resource": "invoke", "resourceType": "lambda"}),
        event(7, "TaskFailed", 400, {"resource": "invoke", "resourceType": "lambda", "error": "ModelTimeout", "cause": cause}),
        event(8, "TaskScheduled", 1400, {"resource": "invoke", "resourceType": "lambda", "region": "eu-central-1"}),
        event(9, "TaskStarted", 1401, {"resource": "invoke", "resourceType": "lambda"}),
        event(10, "TaskFailed", 1900, {"resource": "invoke", "resourceType": "lambda", "error": "ModelTimeout", "cause": cause}),
        event(11, "PassStateEntered", 1901, {"name": "Recover", "input": turn}),
        event(12, "PassStateExited", 1902, {"name": "Recover", "output": turn}),
        event(13, "PassStateEntered", 1903, {"name": "End", "input": turn}),
        event(14, "PassStateExited", 1904, {"name": "End", "output": '{"status": "escalate", "reason": "system_error"}'}),
        event(15, "ExecutionSucceeded", 1905, {"output": '{"status": "escalate", "reason": "system_error"}'}),
    ]


def test_a_failed_task_shows_its_retries_error_cause_and_the_catch_taken():
    trace = parse_execution(reversed(failing_task_events()), DEFINITION)  # order comes from the ids
    assert [v.name for v in trace.visits] == ["Start", "Work", "Recover", "End"]
    work = trace.visits[1]
    assert work.attempts == 2 and work.retries == 1 and work.failed
    assert work.errors[-1] == {"error": "ModelTimeout", "cause": json.dumps({"errorType": "ModelTimeout",
                                                                          "errorMessage": "model took too long"})}
    assert work.next == "Recover" and work.duration_ms(trace.visits[2].entered_ms) == 1898
    assert (trace.turn_id, trace.thread_id, trace.status, trace.duration_ms) == ("turn-7", "thread-3", "SUCCEEDED", 1905)
    text = render_text(trace, DEFINITION)
    assert "retries 1" in text and "FAILED ModelTimeout: model took too long" in text and "caught -> Recover" in text
    assert "=> Recover [catch States.ALL]" in text  # the catch edge is the one taken
    graph = graph_json(trace, DEFINITION)
    nodes = {n["name"]: n for n in graph["nodes"]}
    assert nodes["Work"]["failed"] and nodes["Work"]["retries"] == 1
    assert not nodes["Route"]["visited"] and nodes["Route"]["duration_ms"] is None
    assert {(e["source"], e["target"]) for e in graph["edges"] if e["taken"]} == {
        ("Start", "Work"), ("Work", "Recover"), ("Recover", "End")}


def test_choice_decisions_are_evaluated_from_the_state_input():
    ok, not_ok = json.dumps({"ok": True}), json.dumps({"ok": False})
    events = [
        event(1, "ExecutionStarted", 0, {"input": ok}, 0),
        event(2, "ChoiceStateEntered", 1, {"name": "Route", "input": ok}),
        event(3, "ChoiceStateExited", 2, {"name": "Route", "output": ok}),
        event(4, "PassStateEntered", 3, {"name": "End", "input": ok}),
        event(5, "PassStateExited", 4, {"name": "End", "output": ok}),
        event(6, "ExecutionSucceeded", 5, {"output": ok}),
    ]
    assert parse_execution(events, DEFINITION).visits[0].decision == "$.ok == true"
    events[1]["details"]["input"] = not_ok
    events[3]["details"]["name"] = "Recover"
    assert parse_execution(events, DEFINITION).visits[0].decision == "default"


@pytest.mark.parametrize("rule,data,expected", [
    ({"Variable": "$.a.b", "StringEquals": "x"}, {"a": {"b": "x"}}, True),
    ({"Variable": "$.a.b", "StringEquals": "x"}, {"a": {}}, False),
    ({"Variable": "$.n", "NumericGreaterThanEqualsPath": "$.max"}, {"n": 8, "max": 8}, True),
    ({"Variable": "$.n", "NumericLessThanPath": "$.max"}, {"n": 0.4, "max": 0.5}, True),
    ({"Variable": "$.n", "NumericLessThanPath": "$.max"}, {"n": True, "max": 0.5}, False),
    ({"Variable": "$.reply", "IsPresent": True}, {"reply": {}}, True),
    ({"Or": [{"Variable": "$.r", "StringEquals": "a"}, {"Variable": "$.r", "StringEquals": "b"}]}, {"r": "b"}, True),
    ({"Not": {"Variable": "$.r", "StringEquals": "a"}}, {"r": "a"}, False),
    ({"Variable": "$.r", "StringMatches": "a*"}, {"r": "ab"}, None),  # not evaluated: the reader says so
])
def test_choice_rules(rule, data, expected):
    assert evaluate_rule(rule, data) is expected


def test_rules_are_described_readably():
    rule = {"Or": [{"Variable": "$.route", "StringEquals": "chitchat"}, {"Variable": "$.g", "BooleanEquals": False}]}
    assert describe_rule(rule) == '($.route == "chitchat") or ($.g == false)'


def test_history_events_become_cloudwatch_log_events():
    when = dt.datetime(2024, 4, 24, 11, 54, 30, 672000, tzinfo=dt.timezone.utc)
    history = [
        {"id": 1, "previousEventId": 0, "type": "ExecutionStarted", "timestamp": when,
         "executionStartedEventDetails": {"input": '{"message": "call me on 09121234567"}',
                                          "inputDetails": {"truncated": False}, "roleArn": "arn:aws:iam::1:role/r"}},
        {"id": 2, "previousEventId": 1, "type": "LambdaFunctionStarted", "timestamp": "2024-04-24T11:54:30.680000+00:00"},
    ]
    started, lambda_started = history_to_log_events(history, ARN)
    assert list(started) == ["id", "type", "details", "previous_event_id", "event_timestamp", "execution_arn",
                             "redrive_count"]
    assert (started["id"], started["previous_event_id"], started["event_timestamp"]) == ("1", "0", "1713959670672")
    assert started["details"]["roleArn"] == "arn:aws:iam::1:role/r"
    assert started["details"]["inputDetails"] == {"truncated": False}
    assert "09121234567" not in started["details"]["input"] and "[masked phone]" in started["details"]["input"]
    assert "details" not in lambda_started and lambda_started["event_timestamp"] == "1713959670680"


def test_masking_keeps_clean_clauses_and_ids():
    text = "My policy covers fire. Call me on 0912 123 4567, thanks"
    masked = mask_text(text)
    assert masked.startswith("My policy covers fire.") and not find_pii(masked)
    assert mask_text("حق بیمه بدنه چقدر است؟") == "حق بیمه بدنه چقدر است؟"
    converted = history_to_log_events([{
        "id": 1, "previousEventId": 0, "type": "PassStateEntered", "timestamp": 0,
        "stateEnteredEventDetails": {"name": "Init", "input": json.dumps(
            {"turn_id": "turn-1234567890", "message": "e-mail me at a.b@example.com"})}}], ARN)[0]
    data = json.loads(converted["details"]["input"])
    assert data["turn_id"] == "turn-1234567890" and data["message"] == "[masked email]"


def test_local_log_appends_per_day_and_skips_torn_lines(tmp_path):
    log = LocalExecutionLog(tmp_path)
    path = log.append(failing_task_events())
    assert path.name == "2024-04-24.jsonl"
    with path.open("a", encoding="utf-8") as handle:
        handle.write('{"id": "1", "type": "Execution')  # a writer killed mid-line
    assert len(list(log.events())) == 15
    assert [t.turn_id for t in find_executions(log, "turn-7", DEFINITION)] == ["turn-7"]
    assert [t.turn_id for t in find_executions(log, "thread-3", DEFINITION)] == ["turn-7"]
    # The ARN matches whether it reads :express: (AWS) or :execution: (moto)
    assert find_executions(log, ARN.replace(":express:", ":execution:"), DEFINITION)[0].execution_arn == ARN
    with pytest.raises(TraceError):
        find_executions(log, "turn-8", DEFINITION)
    with pytest.raises(TraceError):
        find_executions(log, "turn-", DEFINITION)  # a substring of an id is not a match


def test_invalid_unicode_in_a_turn_is_logged_not_lost(tmp_path):
    log = LocalExecutionLog(tmp_path)
    events = failing_task_events()
    events[0]["details"]["input"] = json.dumps({"turn_id": "turn-7", "message": "a\ud800b"}, ensure_ascii=False)
    log.append(events)
    (first, *_) = log.events()
    assert json.loads(first["details"]["input"])["message"] == "a\ud800b"


def test_an_invalid_turn_id_is_listed_and_served(tmp_path, capsys):
    from agent_local.cli import main
    from agent_local.ui import UiServer

    events = failing_task_events()
    events[0]["details"]["input"] = json.dumps({"turn_id": "t\ud800x", "thread_id": "th"}, ensure_ascii=False)
    LocalExecutionLog(tmp_path).append(events)
    assert main(["--home", str(tmp_path), "trace", "--list", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)[0]["turn_id"] == "t\ud800x"
    assert main(["--home", str(tmp_path), "trace", "--list"]) == 0
    server = UiServer(tmp_path).start()
    try:
        import urllib.request

        listed = json.loads(urllib.request.urlopen(server.url + "/api/turns", timeout=30).read())
    finally:
        server.stop()
    assert listed[0]["turn_id"] == "t\ud800x"


def test_an_over_long_text_is_scanned_and_masked_whole():
    # A 100 KB word run (the e-mail pattern once rescanned it from every character) with personal
    # data behind it: all of it is scanned, the data masked, the rest kept.
    run = "a" * 100_000
    assert mask_text(run) == run
    masked = mask_text(run + ". Mail ali@example.com, or call ۰۹۱۲۳۴۵۶۷۸۹")
    assert masked == run + ". [masked email] [masked phone]"


def test_layout_places_every_state_once_and_the_start_on_top():
    definition = local_definition()
    coords = layout(definition)
    assert set(coords) == set(definition["States"])
    assert coords[definition["StartAt"]]["y"] == 0
    assert len({(c["x"], c["y"]) for c in coords.values()}) == len(coords)
    # Done is below every state that leads to it
    assert all(coords["Done"]["y"] > coords[name]["y"] for name in ("WriteMemory", "Escalate", "EscalateFallback"))
