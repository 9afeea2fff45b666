"""Every execution of the local stack lands in the CloudWatch-shaped execution log, and `agent trace`
shows its graph from there, from the local file or from a CloudWatch Logs group (moto's Logs)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid

import pytest
from conftest import Conversation  # module-scoped fixtures cannot use the `conversation` fixture
from agent_local import moto_patches
from agent_local.cli import main
from agent_local.execution_log import CloudWatchExecutionLog, LocalExecutionLog, log_group_of_stack
from agent_local.trace import find_executions, local_definition, render_text
from insurance_agent.errors import TransientError

pytestmark = pytest.mark.stack

KNOWLEDGE = "دوره انتظار زایمان در بیمه تکمیلی درمان چقدر است؟"
PHONE = "09121234567"
LOG_KEYS = ["id", "type", "details", "previous_event_id", "event_timestamp", "execution_arn", "redrive_count"]


def _fail(stack, logical, error, times=None):
    """Make a node's Lambda raise (the first `times` calls, or always); returns the restore function."""
    name = stack.function_names[f"{logical}Function"]
    original = moto_patches.handlers()[name]
    calls = {"n": 0}

    def handler(event, context):
        calls["n"] += 1
        if times is None or calls["n"] <= times:
            raise error
        return original(event, context)

    moto_patches.register_handler(name, handler)
    return lambda: moto_patches.register_handler(name, original)


@pytest.fixture(scope="module")
def turns(stack, agent_home):
    """Real turns: the passages offered for a question and the pick answered, a follow-up, a retried
    node, a failed node, and a message with a phone number."""
    out = {}
    chat = Conversation(stack)
    out["offer"] = (chat, chat.say(KNOWLEDGE))
    out["answer"] = (chat, chat.say("۱"))
    out["follow_up"] = (chat, chat.say("برای همسرم چطور؟"))
    restore = _fail(stack, "Retrieve", TransientError("qdrant busy"), times=1)
    try:
        retried = Conversation(stack)
        out["retried"] = (retried, retried.say(KNOWLEDGE))
    finally:
        restore()
    restore = _fail(stack, "Triage", RuntimeError("boom: model endpoint refused"))
    try:
        failed = Conversation(stack)
        out["failed"] = (failed, failed.say(KNOWLEDGE))
    finally:
        restore()
    pii = Conversation(stack)
    out["pii"] = (pii, pii.say(f"سلام. شماره من {PHONE} است"))
    return out


def _arn(entry):
    chat, reply = entry
    return next(r["executionArn"] for r in chat.responses if json.loads(r["output"])["turn_id"] == reply["turn_id"])


def _lines(agent_home, arn):
    folder = agent_home / "logs" / "executions"
    return [json.loads(line) for path in sorted(folder.glob("*.jsonl"))
            for line in path.read_text(encoding="utf-8").splitlines() if arn in line]


def test_each_execution_is_logged_in_the_cloudwatch_shape(turns, agent_home):
    events = _lines(agent_home, _arn(turns["answer"]))
    assert [e["id"] for e in events] == [str(n) for n in range(1, len(events) + 1)]
    for event in events:
        assert [k for k in LOG_KEYS if k in event] == [k for k in event], event  # AWS's key order, nothing else
        assert all(isinstance(event[k], str) for k in LOG_KEYS if k != "details")
        assert int(event["previous_event_id"]) < int(event["id"])
    kinds = [e["type"] for e in events]
    assert kinds[0] == "ExecutionStarted" and kinds[-1] == "ExecutionSucceeded"
    assert {"PassStateEntered", "TaskStateEntered", "LambdaFunctionScheduled", "LambdaFunctionSucceeded",
            "ChoiceStateEntered", "ChoiceStateExited", "TaskStateExited"} <= set(kinds)
    entered = next(e for e in events if e["type"] == "TaskStateEntered")
    assert entered["details"]["name"] == "LoadMemory"
    assert json.loads(events[0]["details"]["input"])["turn_id"] == turns["answer"][1]["turn_id"]


def test_the_path_durations_and_route_decisions_match_the_reply(turns, agent_home):
    definition = local_definition()
    _, reply = turns["answer"]
    (trace,) = find_executions(LocalExecutionLog(agent_home), reply["turn_id"], definition)
    assert [v.name for v in trace.visits if v.type == "Task"] == reply["trace"]["path"]
    assert trace.status == "SUCCEEDED" and trace.reply["status"] == "answer"
    assert all(v.duration_ms(None) is not None for v in trace.visits)
    decisions = {v.name: v.decision for v in trace.visits if v.type == "Choice"}
    assert decisions["RouteIntent"] == "default"  # knowledge is the default route
    assert decisions["RouteVerdict"] == '$.grade == "sufficient"'
    assert decisions["RouteVerification"].startswith("$.verify.grounded")
    text = render_text(trace, definition)
    assert "-> GenerateBudget [$.grade == \"sufficient\"]" in text and "=> WriteMemory" in text


def test_a_retried_node_shows_its_retry_and_error(turns, agent_home):
    _, reply = turns["retried"]
    assert reply["status"] == "clarify"
    (trace,) = find_executions(LocalExecutionLog(agent_home), _arn(turns["retried"]), local_definition())
    retrieve = next(v for v in trace.visits if v.name == "Retrieve")
    assert retrieve.retries == 1 and not retrieve.failed
    assert retrieve.errors[0]["error"] == "TransientError" and "qdrant busy" in retrieve.errors[0]["cause"]


def test_a_failed_node_shows_error_cause_and_the_catch(turns, agent_home):
    _, reply = turns["failed"]
    assert reply["reason"] == "system_error"
    (trace,) = find_executions(LocalExecutionLog(agent_home), reply["turn_id"], local_definition())
    triage = next(v for v in trace.visits if v.name == "Triage")
    assert triage.failed and triage.next == "RecordSystemError"
    assert triage.errors[-1]["error"] == "RuntimeError"
    text = render_text(trace, local_definition())
    assert "FAILED RuntimeError: boom: model endpoint refused" in text
    assert "=> RecordSystemError [catch States.ALL]" in text


def test_a_thread_shows_every_turn_in_order(turns, agent_home):
    chat, _ = turns["answer"]
    traces = find_executions(LocalExecutionLog(agent_home), chat.thread_id, local_definition())
    assert [t.turn_id for t in traces] == [turns[name][1]["turn_id"] for name in ("offer", "answer", "follow_up")]


def test_personal_data_is_masked_in_the_log(turns, agent_home):
    text = "".join(p.read_text(encoding="utf-8") for p in (agent_home / "logs" / "executions").glob("*.jsonl"))
    assert PHONE not in text
    events = _lines(agent_home, _arn(turns["pii"]))
    assert "[masked phone]" in events[0]["details"]["input"]


def test_agent_trace_reads_the_log_without_a_running_stack(turns, agent_home):
    """A separate process (no moto, no stack): the log on disk is all it needs."""
    _, reply = turns["failed"]
    env = os.environ | {"AGENT_HOME": str(agent_home)}
    done = subprocess.run([sys.executable, "-m", "agent_local.cli", "trace", reply["turn_id"]],
                          capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "path taken:" in done.stdout and "FAILED RuntimeError" in done.stdout
    missing = subprocess.run([sys.executable, "-m", "agent_local.cli", "trace", "turn-that-never-ran"],
                             capture_output=True, text=True, env=env, timeout=120)
    assert missing.returncode == 1 and "no execution" in missing.stderr and "Traceback" not in missing.stderr


def test_trace_list_and_json(turns, agent_home, capsys):
    assert main(["--home", str(agent_home), "trace", "--list", "--limit", "500", "--json"]) == 0
    listed = {t["turn_id"] for t in json.loads(capsys.readouterr().out)}
    assert {entry[1]["turn_id"] for entry in turns.values()} <= listed
    assert main(["--home", str(agent_home), "trace", turns["answer"][1]["turn_id"], "--json"]) == 0
    (graph,) = json.loads(capsys.readouterr().out)
    visited = {n["name"] for n in graph["nodes"] if n["visited"]}
    assert set(turns["answer"][1]["trace"]["path"]) <= visited and "Clarify" not in visited


def _put_in_log_group(stack, group, agent_home, arns):
    logs = stack.client("logs")
    logs.create_log_group(logGroupName=group)
    stream = f"states/insurance-agent-turn-local/{uuid.uuid4().hex[:8]}/00000000"
    logs.create_log_stream(logGroupName=group, logStreamName=stream)
    events = sorted((e for arn in arns for e in _lines(agent_home, arn)), key=lambda e: int(e["event_timestamp"]))
    logs.put_log_events(logGroupName=group, logStreamName=stream, logEvents=[
        {"timestamp": int(e["event_timestamp"]), "message": json.dumps(e, ensure_ascii=False)} for e in events])


def test_the_same_reader_reads_a_cloudwatch_log_group(stack, turns, agent_home):
    group = f"/aws/vendedlogs/states/test-{uuid.uuid4().hex[:8]}"
    _put_in_log_group(stack, group, agent_home, [_arn(turns[k]) for k in ("answer", "failed", "retried")])
    remote = CloudWatchExecutionLog(stack.client("logs"), group, hours=48)
    local = LocalExecutionLog(agent_home)
    for key in ("answer", "failed", "retried"):
        turn_id = turns[key][1]["turn_id"]
        (aws,) = find_executions(remote, turn_id, local_definition())
        (here,) = find_executions(local, turn_id, local_definition())
        assert [(v.name, v.retries, v.failed, v.decision, v.errors) for v in aws.visits] == \
               [(v.name, v.retries, v.failed, v.decision, v.errors) for v in here.visits]
    # Only what the filter pattern names comes back: the follow-up turn was never put there.
    with pytest.raises(LookupError):
        find_executions(remote, turns["follow_up"][1]["turn_id"], local_definition())


def test_agent_trace_resolves_a_deployed_stacks_log_group(stack, turns, agent_home, capsys):
    name = f"agent-ops-{uuid.uuid4().hex[:6]}"
    group = f"/aws/vendedlogs/states/{name}"
    template = {
        "Resources": {"TurnStateMachineLogGroup": {"Type": "AWS::Logs::LogGroup",
                                                   "Properties": {"LogGroupName": group}}},
        "Outputs": {"TurnStateMachineArn": {"Value": stack.state_machine_arn}},
    }
    cloudformation = stack.client("cloudformation")
    cloudformation.create_stack(StackName=name, TemplateBody=json.dumps(template))
    assert log_group_of_stack(name, cloudformation) == group
    logs = stack.client("logs")
    stream = "states/insurance-agent-turn-local/2026-01-01-00-00/00000000"
    logs.create_log_stream(logGroupName=group, logStreamName=stream)
    events = _lines(agent_home, _arn(turns["failed"]))
    logs.put_log_events(logGroupName=group, logStreamName=stream, logEvents=[
        {"timestamp": int(e["event_timestamp"]), "message": json.dumps(e, ensure_ascii=False)} for e in events])
    # boto3 reaches moto through AWS_ENDPOINT_URL, as it would reach AWS with real credentials.
    assert main(["trace", "--stack", name, "--hours", "48", turns["failed"][1]["turn_id"]]) == 0
    out = capsys.readouterr().out
    assert "FAILED RuntimeError" in out and "=> RecordSystemError" in out
    assert main(["trace", "--stack", "no-such-stack", "x"]) == 2
    assert "could not read the execution log from AWS" in capsys.readouterr().err
