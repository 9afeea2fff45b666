"""The grade shortcut: a decisive, lexically complete top hit needs no model call; close rivals of
another product (the ambiguity case) always go to the grade role."""

from insurance_agent.config import get_settings
from insurance_agent.models.chunks import RetrievedChunk
from insurance_agent.policy.decisive import decisive_top_hit


def hit(chunk_id, text, score, product, title="بیمه"):
    return RetrievedChunk(
        chunk_id=chunk_id, file_id=f"f-{product}", title=title, text=text, score=score, product=product, tenant_id="t1"
    )


MATERNITY = hit("h1", "دوره انتظار زایمان در بیمه درمان تکمیلی ۹ ماه است.", 0.0328, "health", "بیمه درمان تکمیلی")
SAME_DOC = hit("h2", "همسر و فرزندان تحت پوشش هستند.", 0.0320, "health", "بیمه درمان تکمیلی")
FAR_RIVAL = hit("b1", "فرانشیز بدنه ۱۰ درصد است.", 0.0164, "car_body", "بیمه بدنه")
CLOSE_RIVAL = hit("e1", "دوره انتظار زایمان برای اتباع ۱۲ ماه است.", 0.0322, "expat_health", "بیمه درمان اتباع")
QUERY = "دوره انتظار زایمان در بیمه تکمیلی درمان چقدر است؟"


def test_a_decisive_complete_top_hit_is_sufficient():
    assert decisive_top_hit(QUERY, [MATERNITY, SAME_DOC, FAR_RIVAL], margin=0.15)
    assert decisive_top_hit(QUERY, [MATERNITY], margin=0.15)  # no other document at all


def test_never_when_another_product_is_close():
    assert not decisive_top_hit(QUERY, [MATERNITY, CLOSE_RIVAL, FAR_RIVAL], margin=0.15)


def test_never_when_the_top_hit_misses_part_of_the_query():
    assert not decisive_top_hit("دوره انتظار زایمان برای دندانپزشکی چقدر است؟", [MATERNITY, FAR_RIVAL], margin=0.15)


def test_disabled_by_a_zero_margin_and_inert_without_evidence():
    assert not decisive_top_hit(QUERY, [MATERNITY, FAR_RIVAL], margin=0)
    assert not decisive_top_hit(QUERY, [], margin=0.15)
    assert not decisive_top_hit("؟", [MATERNITY], margin=0.15)  # nothing to cover


def test_margin_comes_from_configuration(monkeypatch):
    monkeypatch.setenv("GRADE_DECISIVE_MARGIN", "0.6")
    get_settings.cache_clear()
    try:
        margin = get_settings().policy.grade_decisive_margin
        assert margin == 0.6
        assert not decisive_top_hit(QUERY, [MATERNITY, FAR_RIVAL], margin=margin)  # a 0.5 lead is not enough now
    finally:
        get_settings.cache_clear()
