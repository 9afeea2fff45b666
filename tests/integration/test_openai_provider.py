"""The OpenAI-compatible provider against servers that misbehave, at the wire.

The chat completions endpoint of agent_harness/openai_endpoint.py answers on loopback as a compatible
server would (a forced tool call, or JSON content for `response_format: json_schema`) or fails the
way real ones do: 429, 5xx, an answer slower than the client's timeout, a dropped connection, a body
that is not JSON. The real provider, langchain-openai and the OpenAI SDK run unchanged against it.
Whole turns through the graph against the same endpoint: test_openai_turns.py.
"""

from __future__ import annotations

import json

import pytest
from agent_harness.openai_endpoint import Fault, OpenAIEndpoint
from insurance_agent.config import ModelSettings, Settings
from insurance_agent.errors import ModelOutputError, ModelRefusedError, TransientError
from insurance_agent.models.roles import Intent, TriageRequest
from insurance_llm.openai import OpenAIProvider
from schema_enums import schema_enums

GOOD = {"intent": "chitchat", "restricted": False, "frustration": False}


class ChatServer:
    """The endpoint answering every role with GOOD, with faults queued one request at a time."""

    def __init__(self) -> None:
        self.endpoint = OpenAIEndpoint([("127.0.0.1", 0)], answer=lambda tool, data, system: GOOD).__enter__()
        self.url = self.endpoint.url

    def fail(self, kind: str, times: int = 1) -> None:
        self.endpoint.state.add_fault("*", Fault(kind, times, 2.5 if kind == "slow" else 0.0))

    @property
    def requests(self) -> list[dict]:
        return [call["request"] for call in self.endpoint.calls()]

    def clear(self) -> None:
        self.endpoint.state.reset()

    def close(self) -> None:
        self.endpoint.__exit__(None, None, None)


@pytest.fixture
def server():
    running = ChatServer()
    yield running
    running.close()


def _provider(server: ChatServer | str, method: str = "function_calling", attempts: int = 3) -> OpenAIProvider:
    url = server if isinstance(server, str) else server.url
    settings = Settings(models=ModelSettings(
        provider="openai", small_model_id="small-model", main_model_id="main-model", openai_base_url=url,
        openai_structured_output=method, max_attempts=attempts, timeout_seconds=1.0))
    return OpenAIProvider(settings=settings, sleep=lambda seconds: None)


@pytest.mark.parametrize("method", ["function_calling", "json_schema"])
def test_structured_output_by_either_mechanism(server, method):
    result = _provider(server, method).triage(TriageRequest(message="سلام"))
    assert result.intent == Intent.CHITCHAT
    (request,) = server.requests
    assert request["model"] == "small-model" and request["temperature"] == 0.0
    # The output bound by the name every OpenAI-compatible server reads (llama.cpp ignores the newer one).
    assert request["max_tokens"] == 1024 and "max_completion_tokens" not in request
    if method == "function_calling":
        assert request["tool_choice"]["function"]["name"] == "TriageDecision"
    else:
        assert request["response_format"]["type"] == "json_schema"
        assert request["response_format"]["json_schema"]["strict"] is True
    # The same system prompt and data blocks as the Bedrock provider sends.
    assert "<user_message>" in request["messages"][1]["content"]


@pytest.mark.parametrize("method", ["function_calling", "json_schema"])
def test_one_correction_then_a_model_output_error(server, method):
    server.fail("schema")
    assert _provider(server, method).triage(TriageRequest(message="سلام")).intent == Intent.CHITCHAT
    assert "do not fit the TriageDecision schema" in json.dumps(server.requests[1]["messages"][-1], ensure_ascii=False)
    # Every message of the corrective request has text content: llama.cpp's server refuses a null one.
    assert all(isinstance(m.get("content"), str) for m in server.requests[1]["messages"]), server.requests[1]
    assert not any(m.get("tool_calls") or m["role"] == "tool" for m in server.requests[1]["messages"])
    server.fail("schema", 2)
    with pytest.raises(ModelOutputError):
        _provider(server, method).triage(TriageRequest(message="سلام"))


@pytest.mark.parametrize("fault", ["throttle", "server_error", "unavailable", "slow", "drop", "not_json"])
def test_a_failing_server_is_retried_then_a_transient_error(server, fault):
    server.fail(fault)
    assert _provider(server).triage(TriageRequest(message="سلام")).intent == Intent.CHITCHAT
    server.clear()
    server.fail(fault, 3)
    with pytest.raises(TransientError):
        _provider(server, attempts=3).triage(TriageRequest(message="سلام"))
    assert len(server.requests) == 3


def test_prose_is_no_answer_and_a_content_filter_is_a_refusal(server):
    server.fail("prose")
    with pytest.raises(ModelOutputError):  # triage must answer; generate would escalate instead
        _provider(server).triage(TriageRequest(message="سلام"))
    server.fail("content_filter")
    with pytest.raises(ModelRefusedError):
        _provider(server).triage(TriageRequest(message="سلام"))


def test_a_relay_limited_to_some_roles_answers_the_others_itself():
    # The real server stands behind the relay; only the roles named go to it.
    upstream_answer = {"intent": "knowledge", "restricted": False, "frustration": False}
    with OpenAIEndpoint([("127.0.0.1", 0)], answer=lambda tool, data, system: upstream_answer) as upstream, \
            OpenAIEndpoint([("127.0.0.1", 0)], answer=lambda tool, data, system: GOOD, upstream=upstream.url,
                           relay_tools=frozenset({"TriageDecision"})) as relay:
        assert relay.relays("TriageDecision") and not relay.relays("GroundedAnswer")
        relayed = _provider(relay.url)
        result = relayed.triage(TriageRequest(message="سلام"))
        assert result.intent == Intent.KNOWLEDGE  # the upstream's decision, not the relay's own
        assert [(c["tool"], c["relayed"]) for c in relay.calls()] == [("TriageDecision", True)]
        assert len(upstream.calls()) == 1
        relay.relay_tools = frozenset({"GroundedAnswer"})
        assert relayed.triage(TriageRequest(message="سلام")).intent == Intent.CHITCHAT
        assert relay.calls()[-1]["relayed"] is False and len(upstream.calls()) == 1


def _enums(schema: dict, field: str) -> list[list]:
    """Every enum a field named `field` takes anywhere in a JSON schema ($refs followed)."""
    return schema_enums(schema, (field,)).get(field, [])


def _wire_schema(request: dict) -> dict:
    if request.get("tools"):
        return request["tools"][0]["function"]["parameters"]
    return request["response_format"]["json_schema"]["schema"]


@pytest.mark.parametrize("method", ["function_calling", "json_schema"])
def test_a_draft_may_cite_only_the_chunks_of_its_evidence(method):
    from insurance_agent.models.chunks import RetrievedChunk
    from insurance_agent.models.roles import GenerateRequest

    chunks = [RetrievedChunk(chunk_id=f"health#{n}", file_id="health", title="بیمه تکمیلی درمان", tenant_id="t",
                             score=1.0, text=f"بند {n}: دوره انتظار زایمان ۹ ماه است.") for n in (2, 7)]
    sentence = "دوره انتظار زایمان ۹ ماه است."
    drafts = iter([["health#9999"], ["health#7"]])  # a chunk the evidence does not hold, then one it does

    def answer(tool, data, system):
        return {"answered": True, "answer": sentence, "claims": [{"text": sentence, "chunk_ids": next(drafts)}],
                "calculations": [], "confidence": 0.9}

    with OpenAIEndpoint([("127.0.0.1", 0)], answer=answer) as endpoint:
        result = _provider(endpoint.url, method).generate(GenerateRequest(
            route=Intent.KNOWLEDGE, message="دوره انتظار زایمان؟", query="دوره انتظار زایمان", chunks=chunks))
        first, second = [call["request"] for call in endpoint.calls()]
    assert _enums(_wire_schema(first), "chunk_ids") == [["health#2", "health#7"]]
    assert _enums(_wire_schema(first), "chunk_id") == [["health#2", "health#7", "message"]]
    assert "claims" in _wire_schema(first)["required"]
    if method == "json_schema":
        assert first["response_format"]["json_schema"]["name"] == "GroundedAnswer"
        assert first["response_format"]["json_schema"]["strict"] is True
    else:
        assert first["tool_choice"]["function"]["name"] == "GroundedAnswer"
    # Rejected at the schema, sent back with the ids it may take; the corrected draft is the result.
    correction = json.dumps(second["messages"][-1], ensure_ascii=False)
    assert "health#9999" in correction and "'health#2' or 'health#7'" in correction
    assert result.answered and result.citations == ["health#7"]
