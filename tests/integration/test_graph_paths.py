"""Graph paths that only rare turns take, driven through the real ASL on the local stack.

Each test asserts the states the execution entered (the execution history) or the node path of the
reply's trace, so a change of edge or budget in statemachine/turn.asl.json makes it fail. Budgets
come from template parameters: each variant is the same ASL file with other DefinitionSubstitutions.
"""

from __future__ import annotations

import json

import pytest
from agent_local import moto_patches
from probes import (  # noqa: F401 - bedrock and dynamo_tap are fixtures
    assert_thread_consistent,
    bedrock,
    dynamo_tap,
    states_entered,
    thread_state,
)
from scripted_bedrock import none_supported

pytestmark = pytest.mark.stack

KNOWLEDGE = "دوره انتظار زایمان در بیمه تکمیلی درمان چقدر است؟"
AMBIGUOUS = "حق بیمه چقدر است؟"
ACCOUNT = "بیمه‌نامه شخص ثالث من کی تمام می‌شود؟"
GREETING = "سلام، وقت بخیر"
HANDOFF = "می‌خواهم با یک کارشناس صحبت کنم"


@pytest.fixture(scope="module")
def machines(stack):
    return {
        "no_calls": stack.create_state_machine({"MaxLlmCalls": "0"}, suffix="-paths-calls0"),
        "one_call": stack.create_state_machine({"MaxLlmCalls": "1"}, suffix="-paths-calls1"),
        "two_calls": stack.create_state_machine({"MaxLlmCalls": "2"}, suffix="-paths-calls2"),
        "no_regen": stack.create_state_machine({"MaxRegenerations": "0"}, suffix="-paths-regen0"),
        "two_regen": stack.create_state_machine({"MaxRegenerations": "2", "MaxLlmCalls": "12"},
                                                suffix="-paths-regen2"),
        "any_confidence": stack.create_state_machine({"MinConfidence": "0"}, suffix="-paths-conf0"),
    }


def _run(conversation, arn, message, **kwargs):
    chat = conversation(arn=arn, **kwargs)
    reply = chat.say(message)
    return chat, reply, states_entered(chat.stack, chat.responses[-1])


def _before_escalate(entered):
    return entered[entered.index("SetBudgetExhausted") - 1]


# -- model-call budget checks before each model node ------------------------------------------------


def test_triage_budget_escalates_before_any_model_call(conversation, machines):
    chat, reply, entered = _run(conversation, machines["no_calls"], KNOWLEDGE)
    assert reply["status"] == "escalate" and reply["reason"] == "budget_exhausted"
    assert reply["trace"]["path"] == ["LoadMemory", "Escalate"] and reply["trace"]["llm_calls"] == 0
    assert _before_escalate(entered) == "TriageBudget"
    assert thread_state(chat.thread_id).status == "handed_off"


def test_contextualize_budget(conversation, machines):
    _, reply, entered = _run(conversation, machines["one_call"], KNOWLEDGE)
    assert reply["reason"] == "budget_exhausted"
    assert reply["trace"]["path"] == ["LoadMemory", "Triage", "Escalate"]
    assert _before_escalate(entered) == "ContextualizeBudget"
    assert "RetrievalBudget" in entered  # a knowledge turn, not small talk


def test_generate_budget_on_small_talk(conversation, machines):
    _, reply, entered = _run(conversation, machines["one_call"], GREETING)
    assert reply["reason"] == "budget_exhausted"
    assert reply["trace"]["path"] == ["LoadMemory", "Triage", "Escalate"]
    assert _before_escalate(entered) == "GenerateBudget"
    assert "RetrievalBudget" not in entered


def test_grade_budget_on_an_account_question(conversation, machines):
    _, reply, entered = _run(conversation, machines["one_call"], ACCOUNT, user="u-1001")
    assert reply["reason"] == "budget_exhausted"
    assert reply["trace"]["path"] == ["LoadMemory", "Triage", "Account", "Retrieve", "Escalate"]
    assert _before_escalate(entered) == "GradeBudget"


def test_clarify_budget_when_grade_spent_the_last_call(conversation, machines):
    chat, reply, entered = _run(conversation, machines["two_calls"], AMBIGUOUS)
    assert reply["reason"] == "budget_exhausted"
    assert reply["trace"]["path"] == ["LoadMemory", "Triage", "Contextualize", "Retrieve", "Grade", "Escalate"]
    assert reply["trace"]["llm_calls"] == 2
    # The clarification budget itself (consecutive questions on the thread) was not the one exhausted.
    assert _before_escalate(entered) == "ClarifyBudget"
    assert entered[entered.index("ClarifyBudget") - 1] == "ClarificationBudget"
    assert_thread_consistent(chat.thread_id)


# -- generate / verify loop -------------------------------------------------------------------------


def test_regenerate_loop_recovers_after_one_ungrounded_draft(conversation, bedrock):
    bedrock.script("ClaimCheck", none_supported)  # first draft rejected, the default accepts the second
    chat, reply, entered = _run(conversation, None, KNOWLEDGE)
    assert reply["status"] == "answer", reply
    assert reply["trace"]["path"][-5:] == ["Generate", "Verify", "Generate", "Verify", "WriteMemory"]
    assert "CountRegeneration" in entered and "SetUngrounded" not in entered
    # The second draft was asked with the first one's problems as feedback.
    second = [r for r in bedrock.requests if r["toolConfig"]["tools"][0]["toolSpec"]["name"] == "GroundedAnswer"][1]
    assert "<previous_problems>" in json.dumps(second, ensure_ascii=False)
    assert thread_state(chat.thread_id).turns[-1].status == "answer"


@pytest.mark.parametrize(("machine", "generations"), [("no_regen", 1), (None, 2), ("two_regen", 3)])
def test_max_regenerations_then_ungrounded(conversation, bedrock, machines, machine, generations):
    bedrock.script("ClaimCheck", *[none_supported] * generations)
    chat, reply, entered = _run(conversation, machines.get(machine), KNOWLEDGE)
    assert reply["status"] == "escalate" and reply["reason"] == "ungrounded", reply
    path = reply["trace"]["path"]
    assert path.count("Generate") == generations and path.count("Verify") == generations
    assert entered.count("CountRegeneration") == generations - 1
    assert entered[entered.index("SetUngrounded") - 1] == "RouteVerification"
    assert bedrock.count("ClaimCheck") == generations
    record = assert_thread_consistent(chat.thread_id)
    assert record.status == "handed_off"


def test_route_draft_with_answered_false_escalates_without_verify(conversation, bedrock, machines):
    # MinConfidence 0: only answered=false can send the draft to SetLowConfidence.
    bedrock.script("GroundedAnswer", {"answered": False, "answer": "", "confidence": 0.95})
    _, reply, entered = _run(conversation, machines["any_confidence"], KNOWLEDGE)
    assert reply["status"] == "escalate" and reply["reason"] == "low_confidence"
    assert reply["trace"]["path"][-2:] == ["Generate", "Escalate"]
    assert entered[entered.index("SetLowConfidence") - 1] == "RouteDraft"
    assert "Verify" not in entered and bedrock.count("ClaimCheck") == 0


# -- refusals ---------------------------------------------------------------------------------------


def test_duplicate_turn_when_the_committed_turn_record_is_gone(conversation, stack, dynamo_tap):
    chat = conversation()
    first = chat.say(GREETING)
    assert first["status"] == "answer"
    turn_id = first["turn_id"]
    # The turn record expired (TTL) while the thread still lists the turn as applied.
    stack.client("dynamodb").delete_item(TableName=stack.table_names["TurnsTable"], Key={"turn_id": {"S": turn_id}})
    before = thread_state(chat.thread_id)
    writes = dynamo_tap.writes()
    again = chat.say(GREETING, turn_id=turn_id)
    assert again["status"] == "refused" and again["error"] == "duplicate_turn"
    assert again["trace"]["path"] == ["LoadMemory"] and again["trace"]["llm_calls"] == 0
    assert dynamo_tap.writes() == writes
    assert thread_state(chat.thread_id) == before


@pytest.fixture
def before_node(stack):
    """Run `action` just before a node's Lambda runs (what a concurrent turn does meanwhile)."""
    originals = {}

    def install(logical, action):
        name = stack.function_names[f"{logical}Function"]
        original = originals.setdefault(name, moto_patches.handlers()[name])
        done, started = [], []

        def handler(event, context):
            if not started:  # once: the action's own turn passes through this node too
                started.append(True)
                done.append(action())
            return original(event, context)

        moto_patches.register_handler(name, handler)
        return done

    yield install
    for name, handler in originals.items():
        moto_patches.register_handler(name, handler)


def test_write_memory_refuses_when_the_thread_was_handed_off_meanwhile(conversation, before_node):
    chat = conversation()
    other = conversation()
    other.thread_id = chat.thread_id
    done = before_node("WriteMemory", lambda: other.say(HANDOFF))
    reply = chat.say(GREETING)
    assert done[0]["status"] == "escalate" and done[0]["reason"] == "user_requested"
    assert reply["status"] == "refused" and reply["error"] == "thread_handed_off"
    assert reply["trace"]["path"][-1] == "WriteMemory"
    record = assert_thread_consistent(chat.thread_id)
    # The escalation's latch won: our answer was not committed to the thread.
    assert [t.turn_id for t in record.turns] == [done[0]["turn_id"]]
    assert record.status == "handed_off"


def test_write_memory_refuses_when_another_user_claimed_the_new_thread(conversation, before_node):
    chat = conversation(user="u-1001")
    intruder = conversation(user="u-1002")
    intruder.thread_id = chat.thread_id
    done = before_node("WriteMemory", lambda: intruder.say(GREETING))
    reply = chat.say(GREETING)
    assert done[0]["status"] == "answer"
    assert reply["status"] == "refused" and reply["error"] == "thread_not_owned"
    record = assert_thread_consistent(chat.thread_id)
    assert record.user_id == "u-1002" and [t.turn_id for t in record.turns] == [done[0]["turn_id"]]


@pytest.fixture
def crashing(stack):
    originals = {}

    def install(logical):
        name = stack.function_names[f"{logical}Function"]
        originals.setdefault(name, moto_patches.handlers()[name])

        def handler(event, context):
            raise RuntimeError("node crashed")

        moto_patches.register_handler(name, handler)

    yield install
    for name, handler in originals.items():
        moto_patches.register_handler(name, handler)


def test_escalate_refuses_invalid_input_when_load_memory_crashed(stack, crashing, dynamo_tap):
    crashing("LoadMemory")
    writes = dynamo_tap.writes()
    reply = stack.run_turn({"thread_id": "t-x", "turn_id": "bad id with spaces", "user_id": "u-1",
                            "tenant_id": "sepehr", "roles": ["user"], "message": "سلام"})
    assert reply["status"] == "refused" and reply["error"] == "invalid_input"
    assert reply["trace"]["path"] == ["Escalate"]
    assert dynamo_tap.writes() == writes


def test_escalate_refuses_someone_elses_thread_when_load_memory_crashed(conversation, crashing, dynamo_tap):
    owner = conversation(user="u-1001")
    owner.say(GREETING)
    before = thread_state(owner.thread_id)
    intruder = conversation(user="u-1002")
    intruder.thread_id = owner.thread_id
    crashing("LoadMemory")
    reply = intruder.say(HANDOFF)
    assert reply["status"] == "refused" and reply["error"] == "thread_not_owned"
    assert reply["trace"]["path"] == ["Escalate"]
    assert thread_state(owner.thread_id) == before
