"""Whole turns with MODEL_PROVIDER=bedrock through the real ASL, the model answering over a Stubber.

Counting: `trace.llm_calls` counts role runs (the ASL's budget); `trace.model_invocations` counts the
Converse requests sent by the node runs the turn used; the Stubber sees every request, including
those of Lambda attempts that failed and were retried by the ASL (which no trace can carry). One role
run is bounded by 2 turns (one corrective) x MODEL_MAX_ATTEMPTS (3) x the ASL's 3 attempts = 18.
"""

from __future__ import annotations

import json

import pytest
from insurance_agent.models.turn import EscalationReason
from insurance_agent.nodes import messages
from probes import assert_thread_consistent, bedrock, states_entered, turn_parts  # noqa: F401 - fixture
from scripted_bedrock import MAIN, quote_sentence_with, throttle

pytestmark = pytest.mark.stack

KNOWLEDGE = "دوره انتظار زایمان در بیمه تکمیلی درمان چقدر است؟"
SYSTEM_ERROR_FA = messages.escalation(EscalationReason.SYSTEM_ERROR, "fa")
BAD_TRIAGE = {"intent": "weather", "restricted": "perhaps", "frustration": False}


def _failed_lambda_attempts(chat):
    return sum(e["type"] == "LambdaFunctionFailed" for e in chat.stack.history(chat.responses[-1]["executionArn"]))


def test_answered_turn(conversation, bedrock):
    chat = conversation()
    reply = chat.say(KNOWLEDGE)
    assert reply["status"] == "answer", reply
    assert reply["trace"]["path"] == ["LoadMemory", "Triage", "Contextualize", "Retrieve", "Grade", "Generate",
                                      "Verify", "WriteMemory"]
    stored = turn_parts(reply["turn_id"], chat.thread_id)
    retrieved = {c["chunk_id"] for c in stored["chunks"]}
    assert reply["citations"] and {c["chunk_id"] for c in reply["citations"]} <= retrieved
    # Triage on the small model, the answer on the main one, verify on the small one.
    sent = [(r["toolConfig"]["tools"][0]["toolSpec"]["name"], r["modelId"]) for r in bedrock.requests]
    assert [name for name, _ in sent][0] == "TriageDecision" and ("GroundedAnswer", MAIN) in sent
    assert reply["trace"]["model_invocations"] == len(bedrock.requests) == reply["trace"]["llm_calls"]
    assert [t.status for t in assert_thread_consistent(chat.thread_id).turns] == ["answer"]


@pytest.fixture
def quote_format(monkeypatch):
    """MODEL_ANSWER_FORMAT=quote, set before the `bedrock` fixture builds the provider."""
    monkeypatch.setenv("MODEL_ANSWER_FORMAT", "quote")


def test_a_quoted_answer_is_the_picked_sentence_verbatim_through_verify_and_the_guards(quote_format, conversation,
                                                                                     bedrock):
    bedrock.script("QuotedAnswer", quote_sentence_with("زایمان"))
    reply = conversation().say(KNOWLEDGE)
    assert reply["status"] == "answer", reply
    assert reply["trace"]["path"][-3:] == ["Generate", "Verify", "WriteMemory"]
    sent = [(r["toolConfig"]["tools"][0]["toolSpec"]["name"], r["modelId"]) for r in bedrock.requests]
    assert ("QuotedAnswer", MAIN) in sent and "GroundedAnswer" not in {name for name, _ in sent}
    picked = next(r for r in bedrock.requests if r["toolConfig"]["tools"][0]["toolSpec"]["name"] == "QuotedAnswer")
    from scripted_bedrock import block_data

    offered = [row["text"] for passage in block_data(picked, "evidence") for row in passage["sentences"]]
    quoted = next(text for text in offered if "زایمان" in text)
    assert quoted in reply["message"] and len(reply["citations"]) == 1


def test_no_sentence_picked_hands_the_turn_over(quote_format, conversation, bedrock):
    reply = conversation().say(KNOWLEDGE)  # the script's default pick is "none"
    assert reply["status"] in {"escalate", "clarify"}, reply
    assert bedrock.count("QuotedAnswer") >= 1 and bedrock.count("ClaimCheck") == 0


def test_throttling_retried_inside_the_node(conversation, bedrock):
    bedrock.script("TriageDecision", throttle(), throttle())
    reply = conversation().say(KNOWLEDGE)
    assert reply["status"] == "answer", reply
    assert bedrock.count("TriageDecision") == 3 and len(bedrock.sleeps) == 2  # backed off twice
    assert reply["trace"]["model_invocations"] == len(bedrock.requests) == reply["trace"]["llm_calls"] + 2


def test_throttling_retried_by_the_state_machine(conversation, bedrock):
    bedrock.script("TriageDecision", *[throttle()] * 3)  # the first Lambda attempt runs out of attempts
    chat = conversation()
    reply = chat.say(KNOWLEDGE)
    assert reply["status"] == "answer", reply
    assert _failed_lambda_attempts(chat) == 1
    # The failed attempt's three requests happened but cannot be in the turn's trace.
    assert len(bedrock.requests) == reply["trace"]["model_invocations"] + 3


def test_throttling_that_never_ends_escalates_with_the_fixed_message(conversation, bedrock):
    bedrock.script("TriageDecision", *[throttle()] * 9)
    chat = conversation()
    reply = chat.say(KNOWLEDGE)
    assert reply["status"] == "escalate" and reply["reason"] == "system_error"
    assert reply["message"] == SYSTEM_ERROR_FA
    assert reply["trace"]["path"] == ["LoadMemory", "Escalate"] and reply["trace"]["llm_calls"] == 0
    assert reply["trace"]["model_invocations"] == 0 and len(bedrock.requests) == 9  # 3 x 3
    assert _failed_lambda_attempts(chat) == 3
    record = assert_thread_consistent(chat.thread_id)
    assert record.status == "handed_off" and [t.turn_id for t in record.turns] == [reply["turn_id"]]


def test_malformed_tool_output_gets_one_corrective_turn(conversation, bedrock):
    bedrock.script("TriageDecision", BAD_TRIAGE)
    reply = conversation().say(KNOWLEDGE)
    assert reply["status"] == "answer", reply
    first, second = [r for r in bedrock.requests if r["toolConfig"]["tools"][0]["toolSpec"]["name"] == "TriageDecision"]
    correction = second["messages"][-1]["content"][0]["toolResult"]
    assert correction["status"] == "error" and "TriageDecision" in json.dumps(correction)
    assert reply["trace"]["model_invocations"] == reply["trace"]["llm_calls"] + 1


def test_malformed_tool_output_twice_escalates_as_model_output_without_a_state_machine_retry(conversation, bedrock):
    bedrock.script("TriageDecision", BAD_TRIAGE, BAD_TRIAGE)
    chat = conversation()
    reply = chat.say(KNOWLEDGE)
    # Its own reason (the model's doing, with its own alarm); the user reads the same fixed message.
    assert reply["status"] == "escalate" and reply["reason"] == "model_output" and reply["message"] == SYSTEM_ERROR_FA
    assert bedrock.count("TriageDecision") == 2 and _failed_lambda_attempts(chat) == 1  # ModelOutputError: final
    assert "SetModelOutput" in states_entered(chat.stack, chat.responses[-1])
    assert "weather" not in json.dumps(reply)
    assert assert_thread_consistent(chat.thread_id).status == "handed_off"


def test_worst_case_requests_of_one_role_are_bounded(conversation, bedrock):
    # Each ASL attempt: two throttles, a malformed draft, then three throttles on the corrective turn.
    attempt = [throttle(), throttle(), {"answered": True, "answer": 5}, throttle(), throttle(), throttle()]
    bedrock.script("GroundedAnswer", *attempt * 3)
    chat = conversation()
    reply = chat.say(KNOWLEDGE)
    assert reply["status"] == "escalate" and reply["reason"] == "system_error"
    assert bedrock.count("GroundedAnswer") == 18
    assert reply["trace"]["path"][-2:] == ["Grade", "Escalate"]
    assert "SetSystemError" in states_entered(chat.stack, chat.responses[-1])
    # The trace still counts what the turn's successful node runs sent before Generate failed.
    assert reply["trace"]["model_invocations"] == len(bedrock.requests) - 18
