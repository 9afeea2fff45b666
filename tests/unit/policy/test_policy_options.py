"""Clarification options come from the retrieved chunks' payload only."""

from insurance_agent.models.chunks import RetrievedChunk
from insurance_agent.policy.options import clarify_options


def chunk(chunk_id, file_id, title, domain, score):
    return RetrievedChunk(
        chunk_id=chunk_id, file_id=file_id, title=title, domain=domain, text="متن", score=score, tenant_id="t1"
    )


def test_distinct_documents_ordered_by_best_score_at_most_four():
    chunks = [
        chunk("a1", "f-body", "بیمه بدنه خودرو", "auto", 0.61),
        chunk("b1", "f-tp", "بیمه شخص ثالث", "auto", 0.72),
        chunk("a2", "f-body", "بیمه بدنه خودرو", "auto", 0.80),
        chunk("c1", "f-health", "بیمه درمان تکمیلی", "health", 0.40),
        chunk("d1", "f-life", "بیمه عمر", "life", 0.35),
        chunk("e1", "f-fire", "بیمه آتش‌سوزی", "property", 0.30),
    ]
    options = clarify_options(chunks, "fa")
    assert [o.file_id for o in options] == ["f-body", "f-tp", "f-health", "f-life"]
    assert [o.label for o in options] == ["بیمه بدنه خودرو", "بیمه شخص ثالث", "بیمه درمان تکمیلی", "بیمه عمر"]
    assert options[0].domain == "auto" and options[0].title == "بیمه بدنه خودرو"


def test_options_never_exceed_what_was_retrieved():
    assert clarify_options([], "en") == []
    one = clarify_options([chunk("a1", "f-body", "Car body", "auto", 0.5)], "en")
    assert [(o.label, o.file_id) for o in one] == [("Car body", "f-body")]
