"""Budget exhaustion and failure paths: limits come from the template's parameters, every
exhaustion ends in escalate, and a failing node ends in escalate with reason system_error."""

from __future__ import annotations

import json

import pytest
from agent_local import moto_patches
from insurance_agent.errors import TransientError

pytestmark = pytest.mark.stack

KNOWLEDGE = "دوره انتظار زایمان در بیمه تکمیلی درمان چقدر است؟"


@pytest.fixture(scope="module")
def variants(stack):
    """State machines built from the same ASL file with other budget parameters."""
    return {
        "few_calls": stack.create_state_machine({"MaxLlmCalls": "2"}, suffix="-few-calls"),
        "strict_confidence": stack.create_state_machine({"MinConfidence": "1.01"}, suffix="-strict"),
        "no_clarify": stack.create_state_machine({"MaxClarifications": "0"}, suffix="-no-clarify"),
        "one_round": stack.create_state_machine({"MaxRetrievalRounds": "1"}, suffix="-one-round"),
    }


def test_model_call_budget_escalates(conversation, variants):
    reply = conversation(arn=variants["few_calls"]).say(KNOWLEDGE)
    assert reply["status"] == "escalate" and reply["reason"] == "budget_exhausted"
    assert reply["trace"]["llm_calls"] <= 2
    # triage and generate spent the budget (grade took its deterministic shortcut): no verify call
    assert "Verify" not in reply["trace"]["path"]


def test_a_decisive_top_hit_is_no_shortcut_for_a_provider_that_cannot_read(conversation):
    from insurance_agent.store import turns

    # The waiting-period passage is far ahead of the rest, which would let grade skip a reading
    # model's call. The offline provider cannot tell whether it answers, so it is asked, judges every
    # passage, and the passages are offered rather than the top one quoted.
    chat = conversation()
    reply = chat.say(KNOWLEDGE)
    assert reply["status"] == "clarify" and reply["options"][0]["chunk_id"], reply
    grade = turns.get_parts(reply["turn_id"], chat.thread_id)["grade"]
    assert len(grade["relevance"]) > 1  # the shortcut judges the top hit alone


def test_confidence_threshold_comes_from_parameters(conversation, variants):
    chat = conversation(arn=variants["strict_confidence"])
    assert chat.say(KNOWLEDGE)["status"] == "clarify"
    reply = chat.say("1")  # the picked passage is quoted with confidence 1.0, under MinConfidence 1.01
    assert reply["status"] == "escalate" and reply["reason"] == "low_confidence"
    assert "Verify" not in reply["trace"]["path"]


def test_clarification_budget_zero_escalates_instead_of_asking(conversation, variants):
    reply = conversation(arn=variants["no_clarify"]).say("حق بیمه چقدر است؟")
    assert reply["status"] == "escalate" and reply["reason"] == "budget_exhausted"


def test_retrieval_round_budget_comes_from_parameters(conversation, variants):
    reply = conversation(arn=variants["one_round"]).say("آیا بیمه حیوانات خانگی برای سگ و گربه دارید؟")
    assert reply["reason"] == "insufficient_retrieval"
    assert reply["trace"]["retrieval_rounds"] == 1


@pytest.fixture
def failing(stack):
    """Make a node's Lambda raise, as a crashed function would; restored afterwards."""
    originals = {}

    def make(logical, error, times=None):
        name = stack.function_names[f"{logical}Function"]
        original = moto_patches.handlers()[name]
        originals[name] = original
        calls = {"n": 0}

        def handler(event, context):
            calls["n"] += 1
            if times is None or calls["n"] <= times:
                raise error
            return original(event, context)

        moto_patches.register_handler(name, handler)
        return calls

    yield make
    for name, handler in originals.items():
        moto_patches.register_handler(name, handler)


@pytest.mark.parametrize("node", ["Triage", "Retrieve", "Generate", "WriteMemory", "LoadMemory"])
def test_a_failing_node_escalates_with_system_error(conversation, failing, node):
    failing(node, RuntimeError("boom: internal detail"))
    chat = conversation()
    if node == "Generate":
        assert chat.say(KNOWLEDGE)["status"] == "clarify"  # it is the pick of a passage that reaches generate
    reply = chat.say("1" if node == "Generate" else KNOWLEDGE)
    assert reply["status"] == "escalate" and reply["reason"] == "system_error"
    assert "boom" not in json.dumps(reply, ensure_ascii=False)


def test_transient_errors_are_retried(conversation, failing):
    calls = failing("Retrieve", TransientError("qdrant busy"), times=1)
    chat = conversation()
    reply = chat.say(KNOWLEDGE)
    assert reply["status"] == "clarify" and reply["options"]  # retrieval's hits, after the retry
    assert calls["n"] == 2
    events = chat.stack.history(chat.responses[-1]["executionArn"])
    assert any(e["type"] == "LambdaFunctionFailed" for e in events)


def test_even_a_failing_escalate_still_signals_a_handoff(conversation, failing):
    failing("Escalate", RuntimeError("table gone"))
    reply = conversation().say("می‌خواهم با یک کارشناس صحبت کنم")
    assert reply["status"] == "escalate" and reply["reason"] == "system_error"
    assert reply["trace"]["path"] == ["EscalateFallback"]


def test_execution_payload_stays_small(conversation):
    chat = conversation()
    chat.say("حق بیمه چقدر است؟")
    chat.say("1")
    chat.say("برای همسرم چطور؟")
    largest = 0
    for response in chat.responses:
        for event in chat.stack.history(response["executionArn"]):
            for details in event.values():
                if isinstance(details, dict):
                    for key in ("input", "output"):
                        if isinstance(details.get(key), str):
                            largest = max(largest, len(details[key].encode()))
    assert 0 < largest < 8 * 1024, largest
