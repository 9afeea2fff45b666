"""Whole turns with MODEL_PROVIDER=openai through the real ASL against servers that misbehave at the wire.

The model server is agent_harness/openai_endpoint.py on loopback: it answers each role with the
offline provider's decision as a forced tool call, or fails as real servers do: 429, 5xx, an answer
slower than every Task's TimeoutSeconds, a dropped connection, an HTML page instead of JSON. The
provider, langchain-openai, the OpenAI SDK and httpx run unchanged; the node retries inside the
invocation, the ASL retries the node, then hands the turn to a person (`system_error`), within the
turn's time and never as a failed execution. The endpoint counts every request, including those of
Lambda attempts that failed. docs/resilience.md has the table these cases measure.
"""

from __future__ import annotations

import json
import time

import pytest
from agent_harness.openai_endpoint import Fault, OpenAIEndpoint
from insurance_agent.models.turn import EscalationReason
from insurance_agent.nodes import messages
from probes import assert_thread_consistent, states_entered, turn_parts

pytestmark = pytest.mark.stack

KNOWLEDGE = "دوره انتظار زایمان در بیمه تکمیلی درمان چقدر است؟"
SYSTEM_ERROR_FA = messages.escalation(EscalationReason.SYSTEM_ERROR, "fa")
SMALL, MAIN = "small-model", "main-model"
# The client's read timeout (the template's ModelTimeoutSeconds is 12): short where every request fails,
# long enough elsewhere for the offline decisions, which this process computes beside the graph.
READ_TIMEOUT = 1.5
ANSWER_TIMEOUT = 5.0
ATTEMPTS = 3  # MODEL_MAX_ATTEMPTS, the default: attempts per node invocation
ASL_ATTEMPTS = 3  # the ASL's TransientError retry: 1 + MaxAttempts 2
# Longer than any Task's TimeoutSeconds in the ASL (at most 90 s): a server that never answers in time.
NEVER_IN_TIME = 120.0
# One request's worst case: the read timeout, the connect timeout's share and the longest backoff.
WORST_REQUEST_SECONDS = READ_TIMEOUT + 1.0 + 2.0
# What the user must never see of a fault.
INTERNAL = ("429", "500", "503", "rate_limit", "overloaded", "Bad Gateway", "Timeout", "Connection", "Error")

FAULTS_THROUGHOUT = ["throttle", "server_error", "unavailable", "slow", "drop", "not_json"]


def _use_settings(patch: pytest.MonkeyPatch, **variables: str) -> None:
    from insurance_agent.config import get_settings
    from insurance_agent.roles import base

    for name, value in variables.items():
        patch.setenv(name, value)
    get_settings.cache_clear()
    base.get_provider.cache_clear()


@pytest.fixture
def openai_server(stack):
    """The stack's model nodes use the openai provider against the endpoint on loopback."""
    from insurance_agent.config import get_settings
    from insurance_agent.roles import base

    patch = pytest.MonkeyPatch()
    with OpenAIEndpoint([("127.0.0.1", 0)]) as endpoint:
        # The offline decisions loaded before the turn, so that none of it counts against a read timeout.
        endpoint.answer("TriageDecision", {"user_message": KNOWLEDGE}, "")
        endpoint.answer("GroundedAnswer", {"user_message": KNOWLEDGE, "query": KNOWLEDGE, "evidence": [
            {"chunk_id": "health#1", "title": "بیمه تکمیلی درمان", "text": "دوره انتظار زایمان ۹ ماه است."}]}, "")
        _use_settings(patch, MODEL_PROVIDER="openai", OPENAI_BASE_URL=endpoint.url, SMALL_MODEL_ID=SMALL,
                      MAIN_MODEL_ID=MAIN, OPENAI_STRUCTURED_OUTPUT="function_calling",
                      MODEL_TIMEOUT_SECONDS=str(ANSWER_TIMEOUT), MODEL_MAX_ATTEMPTS=str(ATTEMPTS))
        assert base.get_provider().name == "openai"
        try:
            yield endpoint
        finally:
            patch.undo()
            base.get_provider.cache_clear()
            get_settings.cache_clear()


def _say(conversation, message=KNOWLEDGE):
    chat = conversation()
    started = time.monotonic()
    reply = chat.say(message)  # asserts the execution SUCCEEDED
    return chat, reply, time.monotonic() - started


def _calls(endpoint):
    """Every request the endpoint got, once each is answered or seen abandoned."""
    assert endpoint.wait_idle()
    return endpoint.calls()


def _row(label, endpoint, reply, seconds):
    calls = _calls(endpoint)
    row = {"fault": label, "returned": reply["status"] + (f" ({reply['reason']})" if reply.get("reason") else ""),
           "model_requests": len(calls), "faulted": sum(1 for c in calls if c["fault"]),
           "llm_calls": reply["trace"]["llm_calls"], "seconds": round(seconds, 1)}
    print(json.dumps(row, ensure_ascii=False))
    return row


def test_answered_turn_over_the_wire(conversation, openai_server):
    chat, reply, seconds = _say(conversation)
    assert reply["status"] == "answer", reply
    retrieved = {c["chunk_id"] for c in turn_parts(reply["turn_id"], chat.thread_id)["chunks"]}
    assert reply["citations"] and {c["chunk_id"] for c in reply["citations"]} <= retrieved
    calls = _calls(openai_server)
    assert [c["tool"] for c in calls][0] == "TriageDecision" and ("GroundedAnswer", MAIN) in [
        (c["tool"], c["model"]) for c in calls]
    assert reply["trace"]["model_invocations"] == len(calls) == reply["trace"]["llm_calls"]
    assert all(c["status"] == 200 and not c["abandoned"] for c in calls)
    _row("none", openai_server, reply, seconds)


def test_a_quoted_answer_over_the_wire_is_an_offered_sentence_verbatim(conversation, openai_server, monkeypatch):
    from agent_harness.openai_endpoint import request_data
    from insurance_agent.text import display_text

    _use_settings(monkeypatch, MODEL_ANSWER_FORMAT="quote")
    chat, reply, seconds = _say(conversation)
    assert reply["status"] == "answer", reply
    calls = _calls(openai_server)
    tools = [c["tool"] for c in calls]
    assert "QuotedAnswer" in tools and "GroundedAnswer" not in tools
    data, _ = request_data(next(c["request"] for c in calls if c["tool"] == "QuotedAnswer"))
    offered = [display_text(row["text"]) for passage in data["evidence"] for row in passage["sentences"]]
    assert any(sentence in reply["message"] for sentence in offered), (reply["message"], offered)
    assert len(reply["citations"]) == 1


@pytest.mark.parametrize("kind", FAULTS_THROUGHOUT)
def test_a_server_failing_every_request_hands_the_turn_over(conversation, openai_server, monkeypatch, kind):
    _use_settings(monkeypatch, MODEL_TIMEOUT_SECONDS=str(READ_TIMEOUT))
    openai_server.state.add_fault("*", Fault(kind, 99, NEVER_IN_TIME if kind == "slow" else 0.0))
    chat, reply, seconds = _say(conversation)
    assert reply["status"] == "escalate" and reply["reason"] == "system_error", reply
    assert reply["message"] == SYSTEM_ERROR_FA
    assert not any(word in reply["message"] for word in INTERNAL)
    # Triage never got an answer: 3 requests in each of the ASL's 3 attempts, then Escalate.
    assert reply["trace"]["path"] == ["LoadMemory", "Escalate"] and reply["trace"]["llm_calls"] == 0
    calls = _calls(openai_server)
    assert len(calls) == ATTEMPTS * ASL_ATTEMPTS and all(c["fault"] == kind for c in calls)
    assert {c["tool"] for c in calls} == {"TriageDecision"}
    if kind == "slow":
        assert all(c["abandoned"] for c in calls)  # the client gave up each at its read timeout
    # Within the turn's time: bounded by the requests' worst case, far under the server's delay.
    assert seconds < ATTEMPTS * ASL_ATTEMPTS * WORST_REQUEST_SECONDS < NEVER_IN_TIME
    record = assert_thread_consistent(chat.thread_id)
    assert record.status == "handed_off" and [t.turn_id for t in record.turns] == [reply["turn_id"]]
    history = chat.stack.history(chat.responses[-1]["executionArn"])
    assert sum(e["type"] == "LambdaFunctionFailed" for e in history) == ASL_ATTEMPTS
    _row(f"{kind} throughout", openai_server, reply, seconds)


@pytest.mark.parametrize(("tool", "path"), [
    ("TriageDecision", ["LoadMemory", "Escalate"]),
    ("ClaimCheck", ["LoadMemory", "Triage", "Contextualize", "Retrieve", "Grade", "Generate", "Escalate"]),
])
def test_output_that_fails_its_schema_after_the_correction_is_handed_over_as_model_output(
        conversation, openai_server, tool, path):
    openai_server.state.add_fault(tool, Fault("schema", 99))
    chat, reply, seconds = _say(conversation)
    assert reply["status"] == "escalate" and reply["reason"] == "model_output", reply
    assert reply["message"] == SYSTEM_ERROR_FA and reply["trace"]["path"] == path
    assert tool not in json.dumps(reply, ensure_ascii=False)
    # The answer and the one correction, then ModelOutputError: final, never retried by the ASL.
    calls = _calls(openai_server)
    assert [c["fault"] for c in calls if c["tool"] == tool] == ["schema", "schema"]
    history = chat.stack.history(chat.responses[-1]["executionArn"])
    (failed,) = [e for e in history if e["type"] == "LambdaFunctionFailed"]
    assert failed["lambdaFunctionFailedEventDetails"]["error"] == "ModelOutputError"
    assert "SetModelOutput" in states_entered(chat.stack, chat.responses[-1])
    record = assert_thread_consistent(chat.thread_id)
    assert record.status == "handed_off" and record.handed_off_reason == "model_output"
    _row(f"schema violated throughout ({tool})", openai_server, reply, seconds)


@pytest.mark.parametrize("kind", FAULTS_THROUGHOUT)
def test_one_failed_request_is_retried_inside_the_node(conversation, openai_server, kind):
    openai_server.state.add_fault("GroundedAnswer", Fault(kind, 1, NEVER_IN_TIME if kind == "slow" else 0.0))
    chat, reply, seconds = _say(conversation)
    assert reply["status"] == "answer", reply
    calls = _calls(openai_server)
    assert [c["fault"] for c in calls if c["fault"]] == [kind]
    # The retry is a request of the same node run: the trace counts it, the ASL never saw a failure.
    assert reply["trace"]["model_invocations"] == len(calls) == reply["trace"]["llm_calls"] + 1
    assert seconds < 60 and (kind != "slow" or seconds >= ANSWER_TIMEOUT)
    _row(f"{kind} once", openai_server, reply, seconds)


@pytest.mark.parametrize(("kind", "guard"), [("invented_number", "numbers"), ("wrong_language", "language")])
def test_the_turn_logs_each_draft_and_the_guard_that_rejected_it(conversation, openai_server, kind, guard):
    openai_server.state.add_fault("GroundedAnswer", Fault(kind, 1))
    chat, reply, _ = _say(conversation)
    drafts = turn_parts(reply["turn_id"], chat.thread_id)["drafts"]
    # The faulted draft never reached the verify role; the one written after its feedback did.
    assert drafts[0]["answered"] and guard in drafts[0]["rejected_by"] and "verify" not in drafts[0]["rejected_by"]
    assert len(drafts) >= 2 and guard not in drafts[-1]["rejected_by"]
    requests = [c["tool"] for c in _calls(openai_server)]
    assert requests.count("GroundedAnswer") == len(drafts)
    assert requests.count("ClaimCheck") == sum(not d["rejected_by"] or d["rejected_by"] == ["verify"] for d in drafts)
    if reply["status"] == "answer":
        assert drafts[-1]["rejected_by"] == []


def test_a_citation_of_a_chunk_not_retrieved_is_corrected_inside_the_node(conversation, openai_server):
    # Outside the draft's schema (its evidence's chunk ids): one correction in the same call, no guard.
    openai_server.state.add_fault("GroundedAnswer", Fault("foreign_citation", 1))
    chat, reply, _ = _say(conversation)
    assert reply["status"] == "answer", reply
    assert not any(c["chunk_id"].endswith("#9999") for c in reply["citations"])
    drafts = turn_parts(reply["turn_id"], chat.thread_id)["drafts"]
    assert len(drafts) == 1 and drafts[0]["rejected_by"] == []
    requests = [(c["tool"], c["fault"]) for c in _calls(openai_server) if c["tool"] == "GroundedAnswer"]
    assert requests == [("GroundedAnswer", "foreign_citation"), ("GroundedAnswer", None)]
