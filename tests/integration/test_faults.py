"""Fault injection through the real ASL: every fault ends in a retry that succeeds or in a `system_error`
hand-off with the fixed message, and the thread is consistent afterwards (no half-written turn, the
clarification counter and history right, a replay returns what the user was told).

Faults enter at boundaries only: DynamoDB errors as wire responses on the real boto3 client
(botocore's retries and the store's error handling run as against a throttled table), Qdrant as an
unreachable or silent loopback server behind the real qdrant-client (or a delayed client call), the
Lambda service's own errors (a timeout) as the invoke result, Bedrock in test_bedrock_turns.py.
The table in docs/resilience.md lists these cases.
"""

from __future__ import annotations

import socket
import time

import pytest
from agent_local import moto_patches
from insurance_agent.errors import TransientError
from insurance_agent.models.turn import EscalationReason
from insurance_agent.nodes import messages
from insurance_agent.store import handoffs
from probes import assert_thread_consistent, dynamo_tap, states_entered, thread_state, turn_parts  # noqa: F401

pytestmark = pytest.mark.stack

KNOWLEDGE = "دوره انتظار زایمان در بیمه تکمیلی درمان چقدر است؟"
AMBIGUOUS = "حق بیمه چقدر است؟"
GREETING = "سلام، وقت بخیر"
SYSTEM_ERROR_FA = messages.escalation(EscalationReason.SYSTEM_ERROR, "fa")
THROTTLED = "ProvisionedThroughputExceededException"
CONDITION = "ConditionalCheckFailedException"


def _is_system_error(reply):
    return reply["status"] == "escalate" and reply["reason"] == "system_error" and reply["message"] == SYSTEM_ERROR_FA


def _assert_handed_off_once(chat, reply):
    """The escalation is the thread's last entry, recorded once, and a replay returns it."""
    record = assert_thread_consistent(chat.thread_id)
    assert record.status == "handed_off"
    assert [t.turn_id for t in record.turns].count(reply["turn_id"]) == 1
    assert record.turns[-1].turn_id == reply["turn_id"] and record.turns[-1].status == "escalate"
    assert turn_parts(reply["turn_id"], chat.thread_id)["reply"]["status"] == "escalate"
    return record


@pytest.fixture
def lambda_fault(stack):
    """Replace what the Lambda service returns for a node's invocation; restored afterwards."""
    originals = {}

    def install(logical, fault, *, times=None, after_work=False):
        name = stack.function_names[f"{logical}Function"]
        original = originals.setdefault(name, moto_patches.handlers()[name])
        calls = {"n": 0}

        def handler(event, context):
            calls["n"] += 1
            if times is not None and calls["n"] > times:
                return original(event, context)
            if after_work:
                original(event, context)  # the function did its work; its result never reached the ASL
            raise fault

        moto_patches.register_handler(name, handler)
        return calls

    yield install
    for name, handler in originals.items():
        moto_patches.register_handler(name, handler)


def lambda_timeout() -> Exception:
    """What Step Functions receives when the Lambda service stops a function at its timeout."""
    return type("Sandbox.Timedout", (Exception,), {})("Task timed out after 30.00 seconds")


def _offer_passages(chat) -> str:
    """Ask KNOWLEDGE, which the offline provider answers with the passages it found, and return the
    pick of the first: the message whose turn reaches generate and verify."""
    offer = chat.say(KNOWLEDGE)
    assert offer["status"] == "clarify" and offer["options"][0]["chunk_id"], offer
    return "۱"


# -- DynamoDB ---------------------------------------------------------------------------------------


def test_throttled_thread_write_is_retried_by_botocore(conversation, dynamo_tap):
    dynamo_tap.fail("PutItem", "threads", THROTTLED, times=1)
    chat = conversation()
    reply = chat.say(KNOWLEDGE)
    assert reply["status"] == "clarify" and dynamo_tap.injected
    record = assert_thread_consistent(chat.thread_id)
    assert [t.turn_id for t in record.turns] == [reply["turn_id"]] and record.version == 1


def test_thread_writes_throttled_past_every_retry_escalate_and_latch(conversation, dynamo_tap):
    chat = conversation()
    # botocore's 4 sends (max_attempts=3 retries) in each of the ASL's 3 WriteMemory attempts;
    # Escalate's write then lands.
    dynamo_tap.fail("PutItem", "threads", THROTTLED, times=12)
    reply = chat.say(KNOWLEDGE)
    assert _is_system_error(reply), reply
    assert len(dynamo_tap.injected) == 12
    assert reply["trace"]["path"][-1] == "Escalate" and "WriteMemory" not in reply["trace"]["path"]
    history = chat.stack.history(chat.responses[-1]["executionArn"])
    assert sum(e["type"] == "LambdaFunctionFailed" for e in history) == 3
    _assert_handed_off_once(chat, reply)
    assert chat.say(GREETING)["error"] == "thread_handed_off"
    assert chat.say(KNOWLEDGE, turn_id=reply["turn_id"]) == reply  # replay: the recorded hand-off


def test_throttled_reads_at_admission_escalate(conversation, dynamo_tap):
    chat = conversation()
    dynamo_tap.fail("GetItem", "threads", THROTTLED, times=12)
    reply = chat.say(KNOWLEDGE)
    assert _is_system_error(reply)
    assert reply["trace"]["path"] == ["Escalate"] and reply["trace"]["llm_calls"] == 0
    _assert_handed_off_once(chat, reply)


def test_state_store_down_for_the_whole_turn_still_signals_a_handoff(conversation, dynamo_tap):
    chat = conversation()
    dynamo_tap.fail("UpdateItem", "turns", THROTTLED, times=1000)
    dynamo_tap.fail("PutItem", "turns", THROTTLED, times=1000)
    dynamo_tap.fail("PutItem", "threads", THROTTLED, times=1000)
    reply = chat.say(KNOWLEDGE)
    assert reply["status"] == "escalate" and reply["reason"] == "system_error"
    assert reply["trace"]["path"] == ["EscalateFallback"]
    # Nothing was written, so nothing is half-written; not even the pending hand-off could be.
    assert thread_state(chat.thread_id) is None
    assert turn_parts(reply["turn_id"] or "-", chat.thread_id) == {}
    assert handoffs.get(chat.thread_id) is None
    # The known limit: with no write of the turn stored anywhere, the next turn (store back) runs.
    _store_back(dynamo_tap)
    assert chat.say(GREETING)["status"] == "answer"


def _store_back(dynamo_tap):
    for fault in dynamo_tap.faults:
        fault["left"] = 0


def test_thread_writes_down_for_the_whole_turn_latch_on_the_next_turn(conversation, dynamo_tap):
    chat = conversation()
    first = chat.say(GREETING)
    assert first["status"] == "answer"
    # Every Threads write fails for the whole turn (3 WriteMemory and 3 Escalate attempts): the user
    # is told a person takes over, and the pending hand-off written before the latch survives.
    dynamo_tap.fail("PutItem", "threads", THROTTLED, times=1000)
    turn_id = f"turn-{chat.thread_id}-2"
    reply = chat.say(KNOWLEDGE + " شماره من ۰۹۱۲۳۴۵۶۷۸۹ است", turn_id=turn_id)
    assert reply["status"] == "escalate" and reply["trace"]["path"] == ["EscalateFallback"]
    assert [t.turn_id for t in thread_state(chat.thread_id).turns] == [first["turn_id"]]  # not latched
    pending = handoffs.get(chat.thread_id)
    assert pending is not None and pending.turn_id == turn_id and "۰۹۱۲" not in pending.message
    _store_back(dynamo_tap)

    # The next turn latches the thread and is refused; so is every later one.
    assert chat.say(GREETING)["error"] == "thread_handed_off"
    record = assert_thread_consistent(chat.thread_id)
    assert record.status == "handed_off" and record.handed_off_reason == "system_error"
    assert [(t.turn_id, t.status) for t in record.turns] == [(first["turn_id"], "answer"), (turn_id, "escalate")]
    assert "[phone]" in record.turns[-1].message and "۰۹۱۲" not in record.turns[-1].message
    assert handoffs.get(chat.thread_id) is None  # consumed
    assert chat.say(KNOWLEDGE)["error"] == "thread_handed_off"
    # A replay of the handed-off turn returns the recorded escalation, and writes nothing.
    writes = dynamo_tap.writes()
    replay = chat.say(KNOWLEDGE, turn_id=turn_id)
    assert (replay["status"], replay["reason"]) == ("escalate", "system_error")
    assert dynamo_tap.writes() == writes
    assert assert_thread_consistent(chat.thread_id).version == record.version


def test_a_new_thread_whose_first_turn_could_not_latch_is_latched_by_the_second(conversation, dynamo_tap):
    chat = conversation()
    dynamo_tap.fail("PutItem", "threads", THROTTLED, times=1000)
    reply = chat.say(KNOWLEDGE)
    assert reply["trace"]["path"] == ["EscalateFallback"] and thread_state(chat.thread_id) is None
    _store_back(dynamo_tap)
    # Another user's turn on that thread id meets the thread of the user who was handed off.
    stranger = conversation(user="u-1002")
    stranger.thread_id = chat.thread_id
    assert stranger.say(GREETING)["error"] == "thread_not_owned"
    record = assert_thread_consistent(chat.thread_id)
    assert record.status == "handed_off" and record.user_id == chat.user and len(record.turns) == 1
    assert chat.say(GREETING)["error"] == "thread_handed_off"


def test_a_latched_hand_off_leaves_no_pending_marker(conversation):
    chat = conversation()
    reply = chat.say("می‌خواهم با یک کارشناس صحبت کنم")
    assert reply["status"] == "escalate"
    assert thread_state(chat.thread_id).status == "handed_off"
    assert handoffs.get(chat.thread_id) is None


def test_lost_write_races_are_re_read_and_re_applied(conversation, dynamo_tap):
    chat = conversation()
    first = chat.say(AMBIGUOUS)
    assert first["status"] == "clarify", first
    dynamo_tap.fail("PutItem", "threads", CONDITION, times=2)
    second = chat.say("بیمه بدنه خودرو")
    assert len(dynamo_tap.injected) == 2
    assert second["status"] in ("answer", "clarify"), second
    record = assert_thread_consistent(chat.thread_id)
    assert [t.turn_id for t in record.turns] == [first["turn_id"], second["turn_id"]]
    assert record.version == 2


def test_endless_write_conflicts_escalate(conversation, dynamo_tap):
    chat = conversation()
    chat.say(GREETING)
    # update_thread's 6 conflict rounds in each of the 3 WriteMemory attempts.
    dynamo_tap.fail("PutItem", "threads", CONDITION, times=18)
    reply = chat.say(KNOWLEDGE)
    assert _is_system_error(reply)
    assert len(dynamo_tap.injected) == 18
    record = _assert_handed_off_once(chat, reply)
    assert len(record.turns) == 2


# -- Qdrant -----------------------------------------------------------------------------------------


@pytest.fixture
def remote_qdrant(monkeypatch):
    """Point retrieval at a Qdrant URL on loopback (as production does) for one test."""
    from insurance_search import index

    def use(url, timeout=None):
        monkeypatch.setenv("AGENT_QDRANT_URL", url)
        if timeout is not None:
            real = index.QdrantClient
            monkeypatch.setattr(index, "QdrantClient", lambda *a, **k: real(*a, **(k | {"timeout": timeout})))
        index.reset_caches()

    yield use
    monkeypatch.undo()
    index.reset_caches()


def _closed_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_qdrant_unreachable_escalates_after_retries(conversation, remote_qdrant):
    remote_qdrant(f"http://127.0.0.1:{_closed_port()}")
    chat = conversation()
    reply = chat.say(KNOWLEDGE)
    assert _is_system_error(reply)
    events = chat.stack.history(chat.responses[-1]["executionArn"])
    failures = [e for e in events if e["type"] == "LambdaFunctionFailed"]
    assert len(failures) == 3 and all(f["lambdaFunctionFailedEventDetails"]["error"] == "TransientError"
                                      for f in failures)
    _assert_handed_off_once(chat, reply)


def test_qdrant_that_never_answers_times_out_and_escalates(conversation, remote_qdrant):
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(16)  # accepts connections (the kernel does) and never answers
    try:
        remote_qdrant(f"http://127.0.0.1:{silent.getsockname()[1]}", timeout=1)
        chat = conversation()
        started = time.monotonic()
        reply = chat.say(KNOWLEDGE)
        assert _is_system_error(reply)
        assert time.monotonic() - started >= 3  # three attempts, each waited for its read timeout
        _assert_handed_off_once(chat, reply)
    finally:
        silent.close()


def test_slow_qdrant_within_the_timeout_still_answers(conversation, monkeypatch):
    from insurance_search import index

    store = type(index.get_client())  # the embedded engine the stack's turns read
    real = store.query_points
    delays = []

    def slow(self, *args, **kwargs):
        delays.append(0.8)
        time.sleep(0.8)
        return real(self, *args, **kwargs)

    monkeypatch.setattr(store, "query_points", slow)
    chat = conversation()
    reply = chat.say(KNOWLEDGE)
    assert reply["status"] == "clarify" and reply["options"] and delays
    assert [t.status for t in assert_thread_consistent(chat.thread_id).turns] == ["clarify"]


# -- Lambda -----------------------------------------------------------------------------------------


def test_lambda_timeout_is_not_retried_and_escalates(conversation, lambda_fault):
    calls = lambda_fault("Generate", lambda_timeout())
    chat = conversation()
    reply = chat.say(_offer_passages(chat))
    assert _is_system_error(reply) and calls["n"] == 1
    failed = [e for e in chat.stack.history(chat.responses[-1]["executionArn"]) if e["type"] == "LambdaFunctionFailed"]
    assert failed[0]["lambdaFunctionFailedEventDetails"]["error"] == "Sandbox.Timedout"
    _assert_handed_off_once(chat, reply)


def test_task_timeout_of_the_state_machine_escalates(conversation, stack, lambda_fault):
    """The ASL's own TimeoutSeconds (States.Timeout) on a Lambda that hangs."""
    import json

    definition = json.loads(stack.definition())
    definition["States"]["Retrieve"]["TimeoutSeconds"] = 1
    arn = stack.client("stepfunctions").create_state_machine(
        name="insurance-agent-turn-local-short-timeout", definition=json.dumps(definition),
        roleArn=stack.role_arn, type="EXPRESS")["stateMachineArn"]
    name = stack.function_names["RetrieveFunction"]
    original = moto_patches.handlers()[name]

    def hangs(event, context):
        time.sleep(2.5)
        raise TransientError("killed by the Lambda service at its own timeout")  # never reaches the ASL

    moto_patches.register_handler(name, hangs)
    try:
        chat = conversation(arn=arn)
        reply = chat.say(KNOWLEDGE)
    finally:
        time.sleep(2)  # let the abandoned invocation finish before restoring the handler
        moto_patches.register_handler(name, original)
    assert _is_system_error(reply)
    events = stack.history(chat.responses[-1]["executionArn"])
    assert [e["type"] for e in events].count("LambdaFunctionTimedOut") == 1  # States.Timeout is not retried
    assert "SetSystemError" in states_entered(stack, chat.responses[-1])
    _assert_handed_off_once(chat, reply)


def test_timeout_after_the_commit_is_consistent(conversation, lambda_fault):
    """WriteMemory committed the turn, then the Lambda service timed it out: the user is told what
    the thread records, once."""
    lambda_fault("WriteMemory", lambda_timeout(), times=1, after_work=True)
    chat = conversation()
    reply = chat.say(GREETING)
    record = assert_thread_consistent(chat.thread_id)
    entries = [t for t in record.turns if t.turn_id == reply["turn_id"]]
    assert len(entries) == 1
    assert entries[0].status == reply["status"]
    assert reply["status"] == "answer"  # what was committed
    assert chat.say(GREETING, turn_id=reply["turn_id"]) == reply


def test_transient_failure_after_the_commit_does_not_count_a_clarification_twice(conversation, lambda_fault):
    calls = lambda_fault("WriteMemory", TransientError("connection reset after the write"), times=1, after_work=True)
    chat = conversation()
    reply = chat.say(AMBIGUOUS)
    assert reply["status"] in ("clarify", "answer"), reply
    assert calls["n"] == 2  # the ASL retried the node whose result was lost
    record = assert_thread_consistent(chat.thread_id)
    assert [t.turn_id for t in record.turns] == [reply["turn_id"]] and record.version == 1
    assert record.clarify_count == (1 if reply["status"] == "clarify" else 0)


@pytest.mark.parametrize("node", ["Triage", "Contextualize", "Retrieve", "Grade", "Generate", "Verify", "Account"])
def test_a_node_raising_escalates_and_latches_once(conversation, lambda_fault, node):
    lambda_fault(node, RuntimeError("internal detail that must not leak"))
    chat = conversation(user="u-1001")
    message = "بیمه‌نامه شخص ثالث من کی تمام می‌شود؟" if node == "Account" else KNOWLEDGE
    before = 0
    if node in ("Generate", "Verify"):
        message, before = _offer_passages(chat), 1
    reply = chat.say(message)
    assert _is_system_error(reply), reply
    assert "internal detail" not in str(reply)
    record = _assert_handed_off_once(chat, reply)
    assert len(record.turns) == before + 1
