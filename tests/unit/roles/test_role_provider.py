"""The provider interface and factory."""

import pytest
from insurance_agent.config import get_settings
from insurance_agent.errors import ConfigurationError
from insurance_agent.models.roles import (
    ClarifyRequest,
    ContextualizeRequest,
    GenerateRequest,
    GradeRequest,
    GradeVerdict,
    Intent,
    VerifyRequest,
)
from insurance_agent.policy.options import clarify_options
from insurance_agent.roles.base import ModelProvider, create_provider, get_provider
from insurance_offline import OfflineProvider


def test_get_provider_is_the_cached_local_provider():
    provider = get_provider()
    assert isinstance(provider, OfflineProvider) and provider.name == "offline"
    assert get_provider() is provider


def test_unknown_provider_is_a_configuration_error(monkeypatch):
    with pytest.raises(ConfigurationError, match="known: bedrock, offline, openai"):
        create_provider("watsonx")
    monkeypatch.setenv("MODEL_PROVIDER", "nonsense")
    get_settings.cache_clear()
    get_provider.cache_clear()
    try:
        with pytest.raises(ConfigurationError):
            get_provider()
    finally:
        monkeypatch.delenv("MODEL_PROVIDER")
        get_settings.cache_clear()
        get_provider.cache_clear()


def test_the_interface_is_complete():
    class Partial(ModelProvider):
        def triage(self, request):
            raise NotImplementedError

    with pytest.raises(TypeError):
        Partial()


def test_one_turn_through_the_local_roles(body_chunk, third_party_chunk, health_chunk):
    provider = OfflineProvider()
    chunks = [body_chunk, third_party_chunk, health_chunk]
    query = provider.contextualize(ContextualizeRequest(message="قیمتش چقدره؟")).standalone_query
    assert provider.grade(GradeRequest(query=query, chunks=chunks)).verdict == GradeVerdict.AMBIGUOUS
    options = clarify_options(chunks, "fa")
    question = provider.clarify(ClarifyRequest(query=query, message=query, chunks=chunks, options=options)).question
    assert all(option.label in question for option in options)

    # Without a model, passages that share the question's words are offered, never quoted as its answer.
    query = "فرانشیز بیمه بدنه چقدر است؟"
    graded = provider.grade(GradeRequest(query=query, chunks=chunks))
    assert [judged.chunk_id for judged in graded.relevance if judged.relevant] == ["body-1"]
    assert graded.verdict == GradeVerdict.AMBIGUOUS and graded.choose == "passages"  # "is this your case?"
    unpinned = provider.generate(GenerateRequest(route=Intent.KNOWLEDGE, message=query, query=query, chunks=chunks))
    assert not unpinned.answered and not unpinned.claims

    # The user's pick of one passage pins the question to it: that passage is quoted, cited, verified.
    assert provider.grade(GradeRequest(query=query, chunks=chunks, pinned=["body-1"])).verdict == (
        GradeVerdict.SUFFICIENT)
    draft = provider.generate(
        GenerateRequest(route=Intent.KNOWLEDGE, message=query, query=query, chunks=chunks, pinned=["body-1"]))
    assert draft.answered and draft.citations == ["body-1"]
    assert all(claim.chunk_ids == ["body-1"] for claim in draft.claims)
    verdict = provider.verify(VerifyRequest(answer=draft.answer, claims=draft.claims, chunks=chunks))
    assert verdict.grounded

    # Pinned to passages of two documents: not an answer, a choice between them.
    two = provider.grade(GradeRequest(query=query, chunks=chunks, pinned=["body-1", "tp-1"]))
    assert two.verdict == GradeVerdict.AMBIGUOUS and two.choose == "passages"
    assert not provider.generate(GenerateRequest(route=Intent.KNOWLEDGE, message=query, query=query, chunks=chunks,
                                                 pinned=["body-1", "tp-1"])).answered
