"""Local verify: containment in cited chunks plus the number and citation guards."""

from insurance_agent.models.roles import Claim, GenerateRequest, Intent, VerifyRequest
from insurance_offline.generate import LocalGenerator
from insurance_offline.verify import LocalVerifier

verify = LocalVerifier()


def good_draft(chunks):
    return LocalGenerator(quoting=True)(
        GenerateRequest(route=Intent.KNOWLEDGE, message="q", query="فرانشیز بیمه بدنه چقدر است؟", chunks=chunks)
    )


def check(answer, claims, chunks):
    return verify(VerifyRequest(answer=answer, claims=claims, chunks=chunks))


def test_the_extractive_draft_is_grounded(body_chunk, third_party_chunk):
    chunks = [body_chunk, third_party_chunk]
    result = good_draft(chunks)
    verdict = check(result.answer, result.claims, chunks)
    assert verdict.grounded and verdict.support == 1.0 and verdict.unsupported_claims == []


def test_an_altered_number_is_flagged(body_chunk):
    result = good_draft([body_chunk])
    altered = result.answer.replace("۱۰ درصد", "۵ درصد")
    claims = [Claim(text=altered, chunk_ids=["body-1"])]
    verdict = check(altered, claims, [body_chunk])
    assert not verdict.grounded and verdict.support == 0.0
    assert altered in verdict.unsupported_claims
    assert any("5" in item and "no cited chunk" in item for item in verdict.unsupported_claims)


def test_an_invented_sentence_is_flagged(body_chunk):
    result = good_draft([body_chunk])
    invented = "بیمه بدنه خسارت سیل و زلزله را هم بدون هزینه اضافه پوشش می‌دهد."
    claims = result.claims + [Claim(text=invented, chunk_ids=["body-1"])]
    verdict = check(result.answer + "\n" + invented, claims, [body_chunk])
    assert not verdict.grounded and verdict.support == 0.5
    assert verdict.unsupported_claims == [invented]


def test_text_outside_any_claim_is_flagged(body_chunk):
    result = good_draft([body_chunk])
    extra = "در ضمن این بیمه بهترین بیمه بازار است."
    verdict = check(result.answer + "\n" + extra, result.claims, [body_chunk])
    assert not verdict.grounded and verdict.support == 1.0
    assert extra in verdict.unsupported_claims


def test_claims_citing_unretrieved_chunks_or_nothing_are_unsupported(body_chunk):
    sentence = "فرانشیز خسارت اول در بیمه بدنه ۱۰ درصد مبلغ خسارت است."
    verdict = check(sentence, [Claim(text=sentence, chunk_ids=["ghost"])], [body_chunk])
    assert not verdict.grounded and any("ghost" in item for item in verdict.unsupported_claims)
    assert not check(sentence, [Claim(text=sentence, chunk_ids=[])], [body_chunk]).grounded
    assert not check(sentence, [], [body_chunk]).grounded


def test_spelling_variants_do_not_break_containment(body_chunk):
    # Arabic yeh/kaf, Latin digits and no half-space: the same words
    variant = "فرانشيز خسارت اول در بيمه بدنه 10 درصد مبلغ خسارت است"
    verdict = check(variant, [Claim(text=variant, chunk_ids=["body-1"])], [body_chunk])
    assert verdict.grounded, verdict


def test_threshold_below_one_tolerates_a_minority_of_unsupported_claims(body_chunk):
    result = good_draft([body_chunk])
    invented = "این بیمه هیچ استثنایی ندارد."
    claims = result.claims * 3 + [Claim(text=invented, chunk_ids=["body-1"])]
    answer = "\n".join(c.text for c in claims)
    assert LocalVerifier(threshold=0.75)(VerifyRequest(answer=answer, claims=claims, chunks=[body_chunk])).grounded
    assert not verify(VerifyRequest(answer=answer, claims=claims, chunks=[body_chunk])).grounded


def test_the_threshold_comes_from_the_request_and_the_configuration(body_chunk, monkeypatch):
    from insurance_agent.config import get_settings

    result = good_draft([body_chunk])
    invented = "این بیمه هیچ استثنایی ندارد."
    claims = result.claims * 3 + [Claim(text=invented, chunk_ids=["body-1"])]
    answer = "\n".join(c.text for c in claims)
    lenient = VerifyRequest(answer=answer, claims=claims, chunks=[body_chunk], min_support=0.75)
    assert LocalVerifier()(lenient).grounded
    monkeypatch.setenv("VERIFY_MIN_SUPPORT", "0.75")
    get_settings.cache_clear()
    try:
        assert get_settings().policy.verify_min_support == 0.75
    finally:
        get_settings.cache_clear()
