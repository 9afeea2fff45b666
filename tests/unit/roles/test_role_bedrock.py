"""The Bedrock provider against a stubbed bedrock-runtime client: the real langchain-aws and botocore
code builds and validates every Converse request, and parses every wire response."""

from __future__ import annotations

import json

import pytest
from bedrock_stub import MAIN, SMALL, StubbedBedrock, block_data, system_text, texts, tool_properties, tool_spec
from botocore.exceptions import ClientError
from insurance_agent import deadline
from insurance_agent.errors import ModelRefusedError, ModelOutputError, TransientError
from insurance_agent.models.roles import (
    Calculation,
    CalculationOperand,
    Claim,
    ClarifyRequest,
    ContextualizeRequest,
    GenerateRequest,
    GradeRequest,
    GradeVerdict,
    HistoryTurn,
    Intent,
    TriageRequest,
    VerifyRequest,
)
from insurance_agent.models.scope import Scope
from insurance_agent.models.turn import ClarifyOption
from insurance_agent.policy.guards import check_draft
from insurance_agent.policy.money import apply_calculations
from schema_enums import schema_enums


@pytest.fixture
def bedrock():
    stub = StubbedBedrock()
    yield stub
    stub.stubber.assert_no_pending_responses()


def test_registered_as_bedrock_and_built_lazily(monkeypatch):
    from insurance_agent.config import get_settings
    from insurance_agent.roles.base import PROVIDERS, create_provider
    from insurance_llm.bedrock import BedrockProvider

    assert PROVIDERS["bedrock"] == "insurance_llm.bedrock:BedrockProvider"
    monkeypatch.setenv("SMALL_MODEL_ID", SMALL)
    get_settings.cache_clear()
    try:
        provider = create_provider("bedrock")
        assert isinstance(provider, BedrockProvider) and provider.name == "bedrock" and provider.small == SMALL
    finally:
        get_settings.cache_clear()


def test_runtime_client_has_the_configured_timeouts_and_no_botocore_retries(monkeypatch):
    from insurance_agent.config import get_settings
    from insurance_llm.bedrock.client import runtime_client

    monkeypatch.setenv("BEDROCK_REGION", "eu-west-1")
    monkeypatch.setenv("MODEL_TIMEOUT_SECONDS", "12.5")
    monkeypatch.setenv("MODEL_CONNECT_TIMEOUT_SECONDS", "3")
    get_settings.cache_clear()
    runtime_client.cache_clear()
    try:
        client = runtime_client()
        assert client is runtime_client()  # once per process
        assert client.meta.service_model.service_name == "bedrock-runtime"
        assert client.meta.region_name == "eu-west-1"
        assert client.meta.config.read_timeout == 12.5 and client.meta.config.connect_timeout == 3
        assert client.meta.config.retries["total_max_attempts"] == 1
    finally:
        get_settings.cache_clear()
        runtime_client.cache_clear()


# -- one test per role -----------------------------------------------------------------------------


def test_triage(bedrock):
    bedrock.tool("TriageDecision", {"intent": "knowledge", "restricted": False, "frustration": False})
    history = [HistoryTurn(message="سلام", reply="سلام! چه سؤالی دارید؟", language="fa")]
    message = "What is the deductible of بیمه بدنه?"
    result = bedrock.provider().triage(TriageRequest(message=message, history=history))

    request = bedrock.last
    assert request["modelId"] == SMALL
    assert tool_spec(request)["name"] == "TriageDecision"
    assert tool_properties(request) == {"intent", "asks_about_rule", "restricted", "restricted_category", "frustration"}
    assert request["toolConfig"]["toolChoice"] == {"tool": {"name": "TriageDecision"}}
    assert block_data(request, "user_message") == message
    assert block_data(request, "conversation")[0]["user"] == "سلام"
    assert "claim_dispute" in system_text(request) and "cancellation" in system_text(request)
    assert result.intent == Intent.KNOWLEDGE and not result.restricted and not result.frustration
    # Language is decided by code: a mixed turn is answered in its dominant language.
    assert result.language == "en" and result.mixed_language


def test_triage_scope_comes_from_the_corpus_topics(bedrock):
    bedrock.tool("TriageDecision", {"intent": "knowledge", "asks_about_rule": True, "restricted": False,
                                    "frustration": False})
    topics = ["بیمه باربری (حمل کالا)", "cargo", "Cyber insurance for businesses"]
    request = TriageRequest(message="کالای ما توی گمرک آسیب دید، چی کار کنیم؟", corpus_topics=topics, in_corpus=True)
    result = bedrock.provider().triage(request)

    sent = bedrock.last
    assert block_data(sent, "corpus_topics") == topics
    system = system_text(sent)
    # Scope is the documents', not the word "insurance"; follow-ups of an answered question are in scope.
    assert "<corpus_topics>" in system and 'not from the word "insurance"' in system
    assert "short follow-up of an answered question" in system
    assert "short follow-up" in tool_spec(sent)["inputSchema"]["json"]["properties"]["intent"]["description"]
    assert result.intent == Intent.KNOWLEDGE and not result.restricted


def test_triage_asking_about_a_rule_is_not_a_request_to_act(bedrock):
    bedrock.tool("TriageDecision", {"intent": "knowledge", "asks_about_rule": True, "restricted": False,
                                    "frustration": False})
    result = bedrock.provider().triage(TriageRequest(message="مرور زمان شکایت از بیمه چند ساله؟"))

    sent = bedrock.last
    system = system_text(sent)
    assert "Asking about the rule of one of them is not restricted" in system
    properties = tool_spec(sent)["inputSchema"]["json"]["properties"]
    assert "a question about the rule of one of them is not restricted" in properties["restricted"]["description"]
    assert "asks how something works" in properties["asks_about_rule"]["description"]
    # asks_about_rule is decided before restricted: the model weighs the distinction first.
    order = list(properties)
    assert order.index("asks_about_rule") < order.index("restricted")
    assert not result.restricted and result.restricted_category is None


def test_triage_policy_comes_before_a_pick_of_the_offered_options(bedrock):
    bedrock.tool("TriageDecision", {"intent": "knowledge", "asks_about_rule": False, "restricted": True,
                                    "restricted_category": "cancellation", "frustration": False})
    options = [ClarifyOption(label="بیمه شخص ثالث", file_id="a"), ClarifyOption(label="بیمه بدنه", file_id="b")]
    history = [HistoryTurn(message="فرانشیز چنده؟", reply="کدام بیمه؟", status="clarify", query="فرانشیز",
                           options=options)]
    result = bedrock.provider().triage(TriageRequest(message="شخص ثالث رو فسخ کنید", history=history))

    sent = bedrock.last
    assert block_data(sent, "conversation")[0]["options_offered"] == ["بیمه شخص ثالث", "بیمه بدنه"]
    assert "Policy comes before everything else, also after a clarifying question" in system_text(sent)
    assert "Decided before any pick" in tool_spec(sent)["inputSchema"]["json"]["properties"]["restricted"][
        "description"]
    assert result.restricted and result.restricted_category == "cancellation"


def test_triage_restricted_without_a_known_category_still_escalates(bedrock):
    bedrock.tool(
        "TriageDecision",
        {"intent": "knowledge", "restricted": True, "restricted_category": "refund_fight", "frustration": True},
    )
    result = bedrock.provider().triage(TriageRequest(message="پولم را همین الان برگردانید"))
    assert result.restricted and result.restricted_category == "unspecified" and result.frustration


def test_contextualize_translates_into_the_corpus_language(bedrock):
    bedrock.tool("StandaloneQuery", {"standalone_query": "  دوره انتظار زایمان برای همسر در بیمه درمان تکمیلی "})
    history = [
        HistoryTurn(
            message="What is the maternity waiting period?", reply="…", language="en", query="دوره انتظار زایمان"
        )
    ]
    request = ContextualizeRequest(
        message="what about for my wife?", history=history, profile={"family": ["spouse"]}, language="en"
    )
    result = bedrock.provider().contextualize(request)

    sent = bedrock.last
    assert sent["modelId"] == SMALL
    assert tool_spec(sent)["name"] == "StandaloneQuery" and tool_properties(sent) == {"standalone_query"}
    assert block_data(sent, "user_message") == "what about for my wife?"
    assert block_data(sent, "conversation")[0]["query"] == "دوره انتظار زایمان"
    assert block_data(sent, "profile") == {"family": ["spouse"]}
    assert "translate the query into Persian" in system_text(sent)
    assert result.standalone_query == "دوره انتظار زایمان برای همسر در بیمه درمان تکمیلی"
    assert result.scope == Scope()


def test_contextualize_of_a_persian_turn_keeps_the_wording(bedrock):
    bedrock.tool("StandaloneQuery", {"standalone_query": "حق بیمه بدنه خودرو"})
    bedrock.provider().contextualize(ContextualizeRequest(message="حق بیمه‌اش چقدر است؟", language="fa"))
    assert "already wrote in Persian" in system_text(bedrock.last)


def test_grade(bedrock, body_chunk, third_party_chunk, health_chunk):
    bedrock.tool(
        "EvidenceGrade",
        {
            "verdict": "sufficient",
            "chunks": [
                {"chunk_id": "body-1", "relevant": True},
                {"chunk_id": "tp-1", "relevant": False},
                {"chunk_id": "made-up", "relevant": True},
            ],
        },
    )
    chunks = [body_chunk, third_party_chunk, health_chunk]
    result = bedrock.provider().grade(GradeRequest(query="فرانشیز بیمه بدنه چقدر است؟", chunks=chunks))

    sent = bedrock.last
    assert sent["modelId"] == SMALL
    assert tool_spec(sent)["name"] == "EvidenceGrade" and tool_properties(sent) == {"verdict", "chunks"}
    evidence = block_data(sent, "evidence")
    assert [row["chunk_id"] for row in evidence] == ["body-1", "tp-1", "health-1"]
    assert evidence[0]["text"] == body_chunk.text and evidence[0]["product"] == "car_body"
    assert block_data(sent, "query") == "فرانشیز بیمه بدنه چقدر است؟"
    assert "prior knowledge about insurance is not evidence" in system_text(sent)
    # the local grade's rule: a product that only touches part of the question is no second reading
    assert "is not a second reading" in system_text(sent)
    assert result.verdict == GradeVerdict.SUFFICIENT
    # one judgement per retrieved chunk, in order; unknown ids dropped, missing ones not relevant
    assert [(r.chunk_id, r.relevant) for r in result.relevance] == [
        ("body-1", True),
        ("tp-1", False),
        ("health-1", False),
    ]


def test_grade_verdict_must_agree_with_its_judgements(bedrock, body_chunk, third_party_chunk):
    provider = bedrock.provider()
    chunks = [body_chunk, third_party_chunk]
    bedrock.tool("EvidenceGrade", {"verdict": "sufficient", "chunks": [{"chunk_id": "body-1", "relevant": False}]})
    assert provider.grade(GradeRequest(query="q", chunks=chunks)).verdict == GradeVerdict.INSUFFICIENT
    bedrock.tool("EvidenceGrade", {"verdict": "ambiguous", "chunks": [{"chunk_id": "body-1", "relevant": True}]})
    assert provider.grade(GradeRequest(query="q", chunks=chunks)).verdict == GradeVerdict.SUFFICIENT
    bedrock.tool(
        "EvidenceGrade",
        {
            "verdict": "ambiguous",
            "chunks": [{"chunk_id": "body-1", "relevant": True}, {"chunk_id": "tp-1", "relevant": True}],
        },
    )
    assert provider.grade(GradeRequest(query="q", chunks=chunks)).verdict == GradeVerdict.AMBIGUOUS


def test_clarify(bedrock, body_chunk, third_party_chunk):
    bedrock.tool("ClarifyingQuestion", {"question": "منظورتان کدام بیمه است؟"})
    options = [
        ClarifyOption(label="بیمه بدنه خودرو", file_id="f-body"),
        ClarifyOption(label="بیمه شخص ثالث", file_id="f-tp"),
    ]
    request = ClarifyRequest(
        query="حق بیمه چقدر است؟", message="حق بیمه چقدره؟", chunks=[body_chunk, third_party_chunk], options=options
    )
    result = bedrock.provider().clarify(request)

    sent = bedrock.last
    assert sent["modelId"] == MAIN
    assert tool_spec(sent)["name"] == "ClarifyingQuestion" and tool_properties(sent) == {"question"}
    assert block_data(sent, "options") == ["بیمه بدنه خودرو", "بیمه شخص ثالث"]
    assert block_data(sent, "user_message") == "حق بیمه چقدره؟"
    assert "به فارسی" in system_text(sent)  # the Persian variant of the prompt
    # The options under the question are the grounded ones, numbered by code, never by the model.
    assert result.question.splitlines() == ["منظورتان کدام بیمه است؟", "۱. بیمه بدنه خودرو", "۲. بیمه شخص ثالث"]


def test_generate(bedrock, body_chunk, third_party_chunk):
    sentence = "فرانشیز خسارت اول در بیمه بدنه ۱۰ درصد مبلغ خسارت است."
    bedrock.tool(
        "GroundedAnswer",
        {
            "answered": True,
            "answer": sentence,
            "claims": [{"text": sentence, "chunk_ids": ["body-1", "body-1"]}],
            "confidence": 0.9,
        },
    )
    message = "فرانشیز بیمه بدنه چقدره؟"
    request = GenerateRequest(
        route=Intent.KNOWLEDGE,
        message=message,
        query="فرانشیز بیمه بدنه چقدر است؟",
        chunks=[body_chunk, third_party_chunk],
        feedback=["an unsupported claim"],
    )
    result = bedrock.provider().generate(request)

    sent = bedrock.last
    assert sent["modelId"] == MAIN
    assert tool_spec(sent)["name"] == "GroundedAnswer"
    assert tool_properties(sent) == {"answered", "answer", "claims", "calculations", "confidence"}
    assert [row["chunk_id"] for row in block_data(sent, "evidence")] == ["body-1", "tp-1"]
    assert block_data(sent, "user_message") == message
    assert block_data(sent, "previous_problems") == ["an unsupported claim"]
    system = system_text(sent)
    assert "prior knowledge about insurance, laws or prices is not evidence" in system
    assert "cites the chunk_id" in system and "{{calc:<id>}}" in system and "answered to false" in system
    assert "Write the answer in Persian" in system
    assert result.answered and result.answer == sentence and result.confidence == 0.9
    assert result.claims == [Claim(text=sentence, chunk_ids=["body-1"])] and result.citations == ["body-1"]
    assert check_draft(result, [body_chunk, third_party_chunk]) == []


def test_generate_requests_money_arithmetic_from_the_calculator(bedrock, health_chunk):
    bedrock.tool(
        "GroundedAnswer",
        {
            "answered": True,
            "answer": "حق بیمه هر نفر ۱۲٬۵۰۰٬۰۰۰ ریال است؛ برای ۳ نفر: {{calc:total}}.",
            "claims": [{"text": "حق بیمه هر نفر ۱۲٬۵۰۰٬۰۰۰ ریال است", "chunk_ids": ["health-1"]}],
            "calculations": [
                {
                    "id": "total",
                    "operation": "multiply",
                    "operands": [
                        {"value": "۱۲٬۵۰۰٬۰۰۰ ریال", "chunk_id": "health-1"},
                        {"value": "۳", "chunk_id": "message"},
                    ],
                }
            ],
            "confidence": 0.8,
        },
    )
    message = "حق بیمه درمان تکمیلی برای ۳ نفر چقدر می‌شود؟"
    request = GenerateRequest(route=Intent.KNOWLEDGE, message=message, query=message, chunks=[health_chunk])
    draft = bedrock.provider().generate(request)
    assert draft.calculations[0].operation == "multiply" and draft.calculations[0].result is None

    filled = apply_calculations(draft, [health_chunk], message, "fa")
    assert filled.answer.endswith("برای ۳ نفر: ۳۷٬۵۰۰٬۰۰۰ ریال.")
    assert check_draft(filled, [health_chunk], calculator_results=filled.calculations) == []


def test_generate_for_small_talk_uses_the_main_model_and_never_returns_nothing(bedrock):
    provider = bedrock.provider()
    bedrock.tool("Reply", {"reply": "Hello! What would you like to know about insurance?"})
    result = provider.generate(
        GenerateRequest(route=Intent.CHITCHAT, message="hi there", query="hi there", language="en")
    )
    assert bedrock.last["modelId"] == MAIN and tool_spec(bedrock.last)["name"] == "Reply"
    assert "English" in system_text(bedrock.last)
    assert result.answered and result.answer.startswith("Hello!")

    bedrock.text("")
    refused = provider.generate(GenerateRequest(route=Intent.OUT_OF_SCOPE, message="؟", query="؟"))
    assert refused.answered and "بیمه" in refused.answer


def test_verify(bedrock, body_chunk):
    claims = [
        Claim(text="فرانشیز خسارت اول در بیمه بدنه ۱۰ درصد مبلغ خسارت است.", chunk_ids=["body-1"]),
        Claim(text="بیمه بدنه زلزله را پوشش می‌دهد.", chunk_ids=["body-1"]),
    ]
    answer = " ".join(c.text for c in claims)
    calculation = Calculation(
        id="c1",
        operation="percent_of",
        result="۱٬۰۰۰٬۰۰۰ ریال",
        amount="1000000",
        currency="IRR",
        operands=[CalculationOperand(value="۱۰ درصد", chunk_id="body-1")],
    )
    verdicts = {"verdicts": [{"claim": 1, "supported": True}, {"claim": 2, "supported": False}]}
    provider = bedrock.provider()

    bedrock.tool("ClaimCheck", verdicts)
    strict = provider.verify(
        VerifyRequest(answer=answer, claims=claims, chunks=[body_chunk], calculations=[calculation])
    )
    sent = bedrock.last
    assert sent["modelId"] == SMALL
    assert tool_spec(sent)["name"] == "ClaimCheck"
    assert tool_properties(sent) == {"verdicts", "unsupported_statements", "answers_question"}
    assert [c["claim"] for c in block_data(sent, "claims")] == [1, 2]
    assert block_data(sent, "evidence")[0]["chunk_id"] == "body-1"
    assert block_data(sent, "calculations")[0]["result"] == "۱٬۰۰۰٬۰۰۰ ریال"
    assert not strict.grounded and strict.support == 0.5
    assert strict.unsupported_claims == ["بیمه بدنه زلزله را پوشش می‌دهد."]

    bedrock.tool("ClaimCheck", verdicts)
    lenient = provider.verify(VerifyRequest(answer=answer, claims=claims, chunks=[body_chunk], min_support=0.5))
    assert lenient.grounded and lenient.support == 0.5

    bedrock.tool("ClaimCheck", {"verdicts": [{"claim": 1, "supported": True}], "unsupported_statements": ["x"]})
    extra = provider.verify(VerifyRequest(answer=answer, claims=claims[:1], chunks=[body_chunk], min_support=0.5))
    assert not extra.grounded and extra.unsupported_claims == ["x"]


def test_verify_checks_that_the_claims_answer_the_question(bedrock, body_chunk):
    """A true claim beside the point is no answer: the model sees the question and says whether the
    claims state what it asks; the prompt carries the same rule as the local verify."""
    claim = Claim(text="فرانشیز خسارت اول در بیمه بدنه ۱۰ درصد مبلغ خسارت است.", chunk_ids=["body-1"])
    provider = bedrock.provider()
    question = "برای دریافت خسارت بدنه چه مدارکی لازم است؟"

    bedrock.tool("ClaimCheck", {"verdicts": [{"claim": 1, "supported": True}], "answers_question": False})
    off = provider.verify(VerifyRequest(answer=claim.text, claims=[claim], chunks=[body_chunk], question=question))
    sent = bedrock.last
    assert block_data(sent, "question") == question
    assert "answers_question" in system_text(sent) and "چه مدارکی" in system_text(sent)
    assert not off.grounded and off.support == 1.0
    assert off.unsupported_claims == ["the claims do not state what the question asks about"]

    bedrock.tool("ClaimCheck", {"verdicts": [{"claim": 1, "supported": True}], "answers_question": True})
    on = provider.verify(VerifyRequest(answer=claim.text, claims=[claim], chunks=[body_chunk], question=question))
    assert on.grounded

    # without a question (older callers) nothing is sent and the field is not consulted
    bedrock.tool("ClaimCheck", {"verdicts": [{"claim": 1, "supported": True}], "answers_question": False})
    plain = provider.verify(VerifyRequest(answer=claim.text, claims=[claim], chunks=[body_chunk]))
    assert plain.grounded and "<question>" not in texts(bedrock.last)


# -- failure modes -----------------------------------------------------------------------------------


def test_malformed_tool_output_gets_one_correction(bedrock):
    bedrock.tool("TriageDecision", {"intent": "weather", "restricted": "maybe"})
    bedrock.tool("TriageDecision", {"intent": "out_of_scope", "restricted": False, "frustration": False})
    result = bedrock.provider().triage(TriageRequest(message="Will it rain tomorrow?"))
    assert result.intent == Intent.OUT_OF_SCOPE

    first, second = bedrock.requests
    assert len(second["messages"]) == len(first["messages"]) + 2
    tool_use = second["messages"][-2]["content"][-1]["toolUse"]
    tool_result = second["messages"][-1]["content"][0]["toolResult"]
    assert tool_use["input"]["intent"] == "weather"
    assert tool_result["toolUseId"] == tool_use["toolUseId"] and tool_result["status"] == "error"
    assert "intent" in texts(second) and "Call TriageDecision again" in texts(second)


def test_malformed_twice_is_a_model_output_error(bedrock, body_chunk):
    bedrock.tool("GroundedAnswer", {"answered": True, "answer": "x", "confidence": 7})
    bedrock.tool("GroundedAnswer", {"answered": "yes", "confidence": -1})
    request = GenerateRequest(route=Intent.KNOWLEDGE, message="q", query="q", chunks=[body_chunk])
    with pytest.raises(ModelOutputError):
        bedrock.provider().generate(request)
    assert len(bedrock.requests) == 2


@pytest.mark.parametrize(
    "reply", [("I'm sorry, I can't help with that.", "end_turn"), ("", "end_turn")], ids=["prose-refusal", "empty"],
)
def test_refused_or_empty_answer(bedrock, body_chunk, reply):
    provider = bedrock.provider()
    bedrock.text(*reply)
    request = GenerateRequest(route=Intent.KNOWLEDGE, message="q", query="q", chunks=[body_chunk])
    result = provider.generate(request)
    assert not result.answered and result.answer == "" and result.confidence == 0.0  # -> escalates
    assert len(bedrock.requests) == 1  # a refusal is not corrected

    bedrock.text(*reply)
    with pytest.raises(ModelOutputError):
        provider.grade(GradeRequest(query="q", chunks=[body_chunk]))


@pytest.mark.parametrize("stop", ["guardrail_intervened", "content_filtered"])
def test_a_guardrail_stop_is_a_refusal_of_the_model_service_for_every_role(bedrock, body_chunk, stop):
    # Not a fault (system_error) and not the model's own "cannot answer": the ASL hands the turn over.
    provider = bedrock.provider()
    bedrock.text("Sorry, the model cannot answer this question.", stop)
    with pytest.raises(ModelRefusedError):
        provider.generate(GenerateRequest(route=Intent.KNOWLEDGE, message="q", query="q", chunks=[body_chunk]))
    bedrock.text("blocked", stop)
    with pytest.raises(ModelRefusedError):
        provider.triage(TriageRequest(message="سلام"))
    assert len(bedrock.requests) == 2  # a refusal is neither corrected nor retried


def test_the_configured_guardrail_goes_with_every_call(bedrock):
    bedrock.tool("TriageDecision", {"intent": "chitchat", "restricted": False, "frustration": False})
    bedrock.provider(guardrail_id="gr-123").triage(TriageRequest(message="سلام"))
    bedrock.tool("TriageDecision", {"intent": "chitchat", "restricted": False, "frustration": False})
    bedrock.provider().triage(TriageRequest(message="سلام"))
    assert bedrock.requests[0]["guardrailConfig"] == {"guardrailIdentifier": "gr-123", "guardrailVersion": "4",
                                                      "trace": "disabled"}
    assert "guardrailConfig" not in bedrock.requests[1]


def test_generate_that_says_the_evidence_does_not_answer(bedrock, body_chunk):
    bedrock.tool("GroundedAnswer", {"answered": False, "answer": "", "claims": [], "confidence": 0.1})
    request = GenerateRequest(route=Intent.KNOWLEDGE, message="q", query="q", chunks=[body_chunk])
    assert not bedrock.provider().generate(request).answered


def test_throttling_until_the_attempts_run_out_is_a_transient_error(bedrock):
    for _ in range(3):
        bedrock.error("ThrottlingException", 429)
    with pytest.raises(TransientError) as raised:
        bedrock.provider(max_attempts=3).triage(TriageRequest(message="سلام"))
    assert type(raised.value).__name__ == "TransientError"  # the errorType the ASL's Retry matches
    assert len(bedrock.requests) == 3
    assert len(bedrock.sleeps) == 2 and all(0 <= pause <= 8 for pause in bedrock.sleeps)


def test_one_throttle_then_success(bedrock):
    bedrock.error("ThrottlingException", 429)
    bedrock.tool("TriageDecision", {"intent": "chitchat", "restricted": False, "frustration": False})
    result = bedrock.provider().triage(TriageRequest(message="سلام"))
    assert result.intent == Intent.CHITCHAT
    assert len(bedrock.requests) == 2 and len(bedrock.sleeps) == 1


def test_server_errors_are_retried_and_client_errors_are_not(bedrock):
    provider = bedrock.provider()
    bedrock.error("ServiceUnavailableException", 503, "busy")
    bedrock.tool("StandaloneQuery", {"standalone_query": "فرانشیز بدنه"})
    assert provider.contextualize(ContextualizeRequest(message="deductible?", language="en")).standalone_query

    bedrock.error("ValidationException", 400, "The provided model identifier is invalid.")
    with pytest.raises(ClientError):
        provider.contextualize(ContextualizeRequest(message="deductible?", language="en"))
    assert len(bedrock.requests) == 3 and len(bedrock.sleeps) == 1


def test_no_retry_without_time_left_in_the_invocation(bedrock):
    class Context:
        @staticmethod
        def get_remaining_time_in_millis():
            return 5_000  # less than one more attempt at the configured timeouts

    bedrock.error("ThrottlingException", 429)
    token = deadline.start(Context())
    try:
        with pytest.raises(TransientError, match="no time left"):
            bedrock.provider(max_attempts=3).triage(TriageRequest(message="سلام"))
    finally:
        deadline.end(token)
    assert len(bedrock.requests) == 1 and bedrock.sleeps == []


def test_contextualize_puts_spoken_persian_into_the_documents_register(bedrock):
    bedrock.tool("StandaloneQuery", {"standalone_query": "پیش‌پرداخت قسطی بیمه شخص ثالث خودرو چند است"})
    bedrock.provider().contextualize(ContextualizeRequest(message="ثالثو میشه قسطی خرید؟ چنده؟", language="fa"))
    system = system_text(bedrock.last)
    assert "formal written register" in system and "ماشین -> خودرو / وسیله نقلیه" in system
    assert "previous_query" not in system and "<previous_query>" not in json.dumps(bedrock.last, ensure_ascii=False)


def test_contextualize_of_a_later_round_asks_for_a_different_query(bedrock):
    bedrock.tool("StandaloneQuery", {"standalone_query": "حداکثر تعهد بیمه‌گر برای خسارت بدنی"})
    request = ContextualizeRequest(
        message="سقف دیه چقدره؟", language="fa", attempt=1, previous_query="سقف دیه چقدر است؟"
    )
    result = bedrock.provider().contextualize(request)
    sent = bedrock.last
    assert block_data(sent, "previous_query") == "سقف دیه چقدر است؟"
    system = system_text(sent)
    assert "Retrieval round 2" in system and "Write a different query" in system
    assert result.standalone_query == "حداکثر تعهد بیمه‌گر برای خسارت بدنی"


@pytest.mark.parametrize("language", ["fa", "en"])
def test_generate_rules_language_source_wording_and_brief_citation(bedrock, body_chunk, language):
    bedrock.tool("GroundedAnswer", {"answered": False, "answer": "", "claims": [], "confidence": 0.0})
    request = GenerateRequest(
        route=Intent.KNOWLEDGE, message="deductible?", query="فرانشیز", chunks=[body_chunk], language=language
    )
    bedrock.provider().generate(request)
    system = system_text(bedrock.last)
    name = {"fa": "Persian", "en": "English"}[language]
    assert f"Write the answer in {name}, the language the customer asked in" in system
    assert "use the source's own wording, quoted as the chunk writes it" in system
    assert "short title once" in system and "Persian letters (ی, ک)" in system
    # the same rule as the local generate: a quote must state what is asked, not only share its topic
    assert "Each claim states what the question asks about in its own words" in system
    assert "only sits under a matching heading" in system
    # the most specific concept may come from the neighbour sentence of prose, not the next list item
    assert "the next item of a list or row of a table never does" in system
    # the precision rules found by asking questions without their source document
    assert "A figure answers with its unit" in system and "does not name it" in system
    assert "The line of insurance asked about" in system and "states that absence" in system
    if language == "en":
        assert "put the source's own Persian wording after it in quotation marks" in system


def test_verify_and_grade_prompts_carry_the_same_rules(bedrock, body_chunk):
    claims = [Claim(text="The first-claim deductible is 10 percent.", chunk_ids=["body-1"])]
    bedrock.tool("ClaimCheck", {"verdicts": [{"claim": 1, "supported": True}], "unsupported_statements": []})
    bedrock.provider().verify(VerifyRequest(answer=claims[0].text, claims=claims, chunks=[body_chunk]))
    system = system_text(bedrock.last)
    assert "an English claim about Persian evidence is supported when it says what the Persian text says" in system
    assert "must be the chunk's own figure" in system
    assert "A heading or a document title that matches the question does not make a sentence" in system
    assert "the next item of a list or row of a table never does" in system
    bedrock.tool(
        "EvidenceGrade", {"verdict": "sufficient", "chunks": [{"chunk_id": "body-1", "relevant": True}]}
    )
    bedrock.provider().grade(GradeRequest(query="فرانشیز ماشین", chunks=[body_chunk]))
    assert "judge by meaning, not by shared words" in system_text(bedrock.last)


def _citable(schema: dict) -> dict[str, list]:
    """The ids each chunk-id field of a tool's JSON schema allows ({"chunk_ids": [...], "chunk_id": [...]})."""
    return {field: [i for enum in enums for i in enum]
            for field, enums in schema_enums(schema, ("chunk_ids", "chunk_id")).items()}


def test_the_draft_can_cite_only_the_requests_chunks(bedrock, body_chunk, third_party_chunk):
    sentence = "فرانشیز خسارت اول در بیمه بدنه ۱۰ درصد مبلغ خسارت است."
    bedrock.tool("GroundedAnswer", {"answered": True, "answer": sentence,
                                    "claims": [{"text": sentence, "chunk_ids": ["body-9"]}], "confidence": 0.9})
    bedrock.tool("GroundedAnswer", {"answered": True, "answer": sentence,
                                    "claims": [{"text": sentence, "chunk_ids": ["body-1"]}], "confidence": 0.9})
    request = GenerateRequest(route=Intent.KNOWLEDGE, message="فرانشیز؟", query="فرانشیز بیمه بدنه",
                              chunks=[body_chunk, third_party_chunk])
    result = bedrock.provider().generate(request)
    first, second = bedrock.requests
    schema = tool_spec(first)["inputSchema"]["json"]
    assert _citable(schema) == {"chunk_ids": ["body-1", "tp-1"], "chunk_id": ["body-1", "tp-1", "message"]}
    assert "claims" in schema["required"]  # a model held by a grammar writes what is required
    # The unknown id goes back with the ids it may take; the corrected draft is the result.
    assert "body-9" in texts(second) and "'body-1' or 'tp-1'" in texts(second)
    assert result.citations == ["body-1"]
    # A declined draft may still leave the claims out.
    bedrock.tool("GroundedAnswer", {"answered": False, "answer": "", "confidence": 0.0})
    assert not bedrock.provider().generate(request).answered
    # Another request's evidence, another schema: the tool is still GroundedAnswer.
    bedrock.tool("GroundedAnswer", {"answered": False, "answer": "", "claims": [], "confidence": 0.0})
    assert not bedrock.provider().generate(request.model_copy(update={"chunks": [third_party_chunk]})).answered
    assert tool_spec(bedrock.last)["name"] == "GroundedAnswer"
    assert _citable(tool_spec(bedrock.last)["inputSchema"]["json"])["chunk_ids"] == ["tp-1"]


def test_an_answered_draft_without_a_citation_gets_a_correction(bedrock, body_chunk):
    sentence = "فرانشیز خسارت اول در بیمه بدنه ۱۰ درصد مبلغ خسارت است."
    bedrock.tool("GroundedAnswer", {"answered": True, "answer": sentence, "claims": [], "confidence": 0.9})
    bedrock.tool("GroundedAnswer", {"answered": True, "answer": sentence,
                                    "claims": [{"text": sentence, "chunk_ids": ["body-1"]}], "confidence": 0.9})
    request = GenerateRequest(route=Intent.KNOWLEDGE, message="فرانشیز؟", query="فرانشیز", chunks=[body_chunk])
    result = bedrock.provider().generate(request)
    assert "needs its claims" in texts(bedrock.last) and result.citations == ["body-1"]
    # Twice uncited: the model's output does not fit, and the graph hands the turn over.
    for _ in range(2):
        bedrock.tool("GroundedAnswer", {"answered": True, "answer": sentence, "confidence": 0.9})
    with pytest.raises(ModelOutputError):
        bedrock.provider().generate(request)
