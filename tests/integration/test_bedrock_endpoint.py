"""The container tier's Bedrock Runtime stand-in, driven by the real Bedrock provider over HTTP.

The provider, langchain-aws and botocore run unchanged against `agent_harness.bedrock_endpoint` on
loopback: what the model nodes see in `make test-lambda MODEL_PROVIDER=bedrock`, fault by fault.
"""

from __future__ import annotations

import boto3
import pytest
from agent_harness.bedrock_endpoint import INVENTED_FIGURE, BedrockEndpoint, Fault
from botocore.config import Config
from insurance_agent.config import ModelSettings, Settings
from insurance_agent.errors import ModelOutputError, ModelRefusedError, TransientError
from insurance_agent.models.chunks import RetrievedChunk
from insurance_agent.models.roles import GenerateRequest, Intent, TriageRequest
from insurance_llm.bedrock import BedrockProvider
from scripted_bedrock import MAIN, REGION, SMALL

QUESTION = "دوره انتظار زایمان در بیمه تکمیلی درمان چقدر است؟"
CHUNK = RetrievedChunk(chunk_id="health#2", file_id="health", title="بیمه تکمیلی درمان", tenant_id="t", score=1.0,
                       text="دوره انتظار زایمان در بیمه تکمیلی درمان ۹ ماه از تاریخ شروع بیمه‌نامه است.")


@pytest.fixture
def endpoint():
    with BedrockEndpoint([("127.0.0.1", 0)]) as running:
        yield running


def _provider(endpoint: BedrockEndpoint, attempts: int = 2, timeout: float = 120,
              answer_format: str = "compose") -> BedrockProvider:
    # The offline decisions behind the endpoint take seconds on a loaded machine: only the slow case times out.
    client = boto3.client("bedrock-runtime", region_name=REGION, endpoint_url=endpoint.urls()[0],
                          aws_access_key_id="testing", aws_secret_access_key="testing",
                          config=Config(retries={"total_max_attempts": 1}, read_timeout=timeout))
    settings = Settings(models=ModelSettings(provider="bedrock", small_model_id=SMALL, main_model_id=MAIN,
                                             bedrock_region=REGION, max_attempts=attempts, timeout_seconds=timeout,
                                             answer_format=answer_format))
    return BedrockProvider(client=client, settings=settings, sleep=lambda seconds: None)


def _generate(provider: BedrockProvider):
    return provider.generate(GenerateRequest(route=Intent.KNOWLEDGE, message=QUESTION, query=QUESTION, chunks=[CHUNK]))


def test_each_role_is_answered_from_the_requests_own_data_as_a_forced_tool_call(endpoint):
    provider = _provider(endpoint)
    assert provider.triage(TriageRequest(message="می‌خواهم با یک کارشناس صحبت کنم")).intent == Intent.HANDOFF_REQUEST
    assert provider.triage(TriageRequest(message=QUESTION)).intent == Intent.KNOWLEDGE
    draft = _generate(provider)
    assert draft.answered and draft.citations == ["health#2"] and "۹ ماه" in draft.answer
    calls = endpoint.state.calls
    assert [c["tool"] for c in calls] == ["TriageDecision", "TriageDecision", "GroundedAnswer"]
    assert all(c["forced"] for c in calls) and [c["model"] for c in calls] == [SMALL, SMALL, MAIN]


def test_throttling_is_retried_then_a_transient_error(endpoint):
    endpoint.state.add_fault("TriageDecision", Fault("throttle", times=1))
    assert _provider(endpoint).triage(TriageRequest(message=QUESTION)).intent == Intent.KNOWLEDGE
    endpoint.state.reset()
    endpoint.state.add_fault("TriageDecision", Fault("server_error", times=5))
    with pytest.raises(TransientError):
        _provider(endpoint, attempts=2).triage(TriageRequest(message=QUESTION))
    assert [c["fault"] for c in endpoint.state.calls] == ["server_error", "server_error"]


def test_a_schema_violation_gets_one_correction(endpoint):
    endpoint.state.add_fault("GroundedAnswer", Fault("schema", times=1))
    assert _generate(_provider(endpoint)).answered
    assert len(endpoint.state.calls) == 2
    endpoint.state.add_fault("GroundedAnswer", Fault("schema", times=2))
    with pytest.raises(ModelOutputError):
        _generate(_provider(endpoint))


def test_prose_empty_and_guardrail_answers(endpoint):
    provider = _provider(endpoint)
    for kind in ("prose", "empty"):
        endpoint.state.add_fault("GroundedAnswer", Fault(kind))
        assert not _generate(provider).answered  # the model's own "no answer": the graph escalates
    endpoint.state.add_fault("GroundedAnswer", Fault("guardrail"))
    with pytest.raises(ModelRefusedError):
        _generate(provider)


def test_wrong_drafts_carry_what_the_guards_must_catch(endpoint):
    provider = _provider(endpoint)
    # A chunk the evidence does not hold is outside the draft's schema: corrected before any guard.
    endpoint.state.add_fault("GroundedAnswer", Fault("foreign_citation"))
    assert _generate(provider).citations == ["health#2"]
    assert [c["fault"] for c in endpoint.state.calls] == ["foreign_citation", None]
    endpoint.state.add_fault("GroundedAnswer", Fault("invented_number"))
    assert INVENTED_FIGURE in _generate(provider).answer
    endpoint.state.add_fault("GroundedAnswer", Fault("wrong_language"))
    assert _generate(provider).answer.isascii()


def test_a_quoted_answer_and_a_sentence_not_offered(endpoint):
    provider = _provider(endpoint, answer_format="quote")
    draft = _generate(provider)
    assert draft.answered and draft.citations == ["health#2"] and CHUNK.text in draft.answer
    assert [c["tool"] for c in endpoint.state.calls] == ["QuotedAnswer"]
    # An id outside the offered ones is outside the tool's enum: corrected once, then the model's output fails.
    endpoint.state.reset()
    endpoint.state.add_fault("QuotedAnswer", Fault("unoffered_sentence", times=1))
    assert CHUNK.text in _generate(provider).answer
    endpoint.state.add_fault("QuotedAnswer", Fault("unoffered_sentence", times=2))
    with pytest.raises(ModelOutputError):
        _generate(provider)


def test_a_slow_answer_times_the_client_out(endpoint):
    endpoint.state.add_fault("TriageDecision", Fault("slow", times=1, seconds=4))
    provider = _provider(endpoint, attempts=1, timeout=1)
    with pytest.raises(TransientError):
        provider.triage(TriageRequest(message=QUESTION))
