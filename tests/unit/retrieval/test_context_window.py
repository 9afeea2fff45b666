"""The context window merged around a hit: the chunker's overlap appears once, and the hit's own span
is its whole text whichever neighbours the query's window brought in."""

from insurance_search.search import _merge

BEFORE = "ماده ۶ - تعاریف. حق سرانه: مبلغی است که برای هر فرد در یک ماه تعیین می‌گردد. ۷- فرانشیز: قسمتی از هزینه درمان است"
HIT = "۷- فرانشیز: قسمتی از هزینه درمان است که بیمه‌شده باید در زمان دریافت خدمات درمانی پرداخت نماید."
AFTER = "در زمان دریافت خدمات درمانی پرداخت نماید. ۸- قیمت واقعی خدمات: قیمت تمام شده خدمات است."


def part(text: str, heading: str = "قانون > ماده ۶") -> dict:
    return {"text": text, "heading": heading}


def test_the_hit_keeps_its_whole_text_and_the_overlap_appears_once():
    for parts, position in (([part(BEFORE), part(HIT), part(AFTER)], 1), ([part(HIT), part(AFTER)], 0),
                            ([part(BEFORE), part(HIT)], 1), ([part(HIT)], 0)):
        text, (start, end) = _merge(parts, "قانون > ماده ۶", position=position)
        assert text[start:end] == HIT, (position, len(parts))
        assert text.count("قسمتی از هزینه درمان است") == 1
        assert text.count("پرداخت نماید") == 1
    text, _ = _merge([part(BEFORE), part(HIT), part(AFTER)], "قانون > ماده ۶", position=1)
    assert text.startswith("ماده ۶ - تعاریف") and text.endswith("قیمت تمام شده خدمات است.")


def test_a_neighbour_that_is_all_overlap_is_dropped():
    text, (start, end) = _merge([part("قسمتی از هزینه درمان است"), part(HIT)], "قانون > ماده ۶", position=1)
    # fewer words than the shortest overlap the chunker makes: not an overlap, kept
    assert text[start:end] == HIT
    whole = HIT.split(" که ")[0]
    text, (start, end) = _merge([part(whole), part(HIT)], "قانون > ماده ۶", position=1)
    assert text == HIT and (start, end) == (0, len(HIT))
