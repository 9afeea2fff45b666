"""Real-document shapes the sample corpus does not have: a statute-style excerpt (tests/data/statutes)
with Arabic ي/ك, unpunctuated list items, bold article labels and a table, asked in spoken Persian
and in English. Loaded and chunked by the real loader, answered by the local generate, checked by
the local verify."""

from __future__ import annotations

from pathlib import Path

import pytest
from insurance_offline.colloquial import formalize
from insurance_offline.lexical import contains, query_concepts, terms_of
from insurance_agent.models.chunks import RetrievedChunk
from insurance_agent.models.roles import GenerateRequest, Intent, VerifyRequest
from insurance_search.chunking import chunk_document
from insurance_search.documents import load_document
from insurance_agent.quotes import plain, short_title
from insurance_offline.generate import LocalGenerator, evidence_units
from insurance_offline.verify import LocalVerifier

EXCERPT = Path(__file__).resolve().parents[2] / "data" / "statutes" / "premium-bylaw-excerpt.md"


@pytest.fixture(scope="module")
def chunks() -> list[RetrievedChunk]:
    doc = load_document(EXCERPT)  # an unknown `source:` key in its front matter is ignored
    assert doc.ignored_keys == ["source"]
    return [
        RetrievedChunk(**chunk.model_dump(), score=0.03 - i * 0.001)
        for i, chunk in enumerate(chunk_document(doc, "t-law"))
    ]


def answer(chunks, question, language="fa"):
    draft = LocalGenerator(quoting=True)(
        GenerateRequest(route=Intent.KNOWLEDGE, message=question, query=question, chunks=chunks, language=language)
    )
    verdict = LocalVerifier()(
        VerifyRequest(answer=draft.answer, claims=draft.claims, chunks=chunks, min_support=1.0)
    )
    return draft, verdict


# -- pattern 3: spoken Persian ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("spoken", "written"),
    [
        ("ماشینمو فروختم", "ماشینم را فروختم"),
        ("موتورمو توقیف کردن", "موتورم را توقیف کردن"),
        ("پیش‌پرداختش چنده؟", "پیش‌پرداختش چند است؟"),
        ("میشه قسطی خرید؟", "می‌شود قسطی خرید؟"),
        ("اگه خسارت داشته باشه", "اگر خسارت داشته باشد"),
        ("قسطا رو کی باید بدم؟", "قسط‌ها را کی باید بدم؟"),
        # a possessive on the spoken plural, or after the «ه» speech drops; never on a verb or a word
        # of its own («تلاش»)
        ("قسطاش کی تموم میشه؟", "قسط‌ها کی تمام می‌شود؟"),
        ("وظیفشون نیست؟", "وظیفه نیست؟"),
        ("همرام بود", "همراه بود"),
        ("تلاش کردم و فروختم", "تلاش کردم و فروختم"),
    ],
)
def test_spoken_forms_become_written_ones(spoken, written):
    assert formalize(spoken) == written


@pytest.mark.parametrize("word", ["خانه", "دارو", "خودرو", "کارت", "نامه", "دوره", "قیمت", "بیمه"])
def test_ordinary_words_are_not_split_into_base_and_clitic(word):
    assert formalize(word) == word


def test_wife_is_not_stemmed_to_khan():
    assert terms_of("خانمم") == terms_of("خانم") == ["خانم"]
    assert "خان" not in terms_of("خانمم و خانه")
    assert terms_of("قیمتش") == terms_of("قیمت")


def test_spoken_words_are_not_query_concepts_and_everyday_words_reach_the_documents_terms():
    labels = {c.label: c for c in query_concepts("ماشینمو میشه قسطی بیمه کرد؟ پیش‌پرداختش چنده؟ باشه")}
    assert not {"میشه", "چنده", "باشه", "ماشینمو", "می‌شود"} & set(labels)
    car = next(c for c in labels.values() if "ماشین" in c.stems)
    assert car.covered_by(frozenset(terms_of("وسیله نقلیه"))) and car.covered_by(frozenset(terms_of("خودرو")))
    ceiling = next(c for c in query_concepts("سقف خسارت چقدره") if "سقف" in c.stems)
    assert ceiling.covered_by(frozenset(terms_of("حداکثر")))


def test_a_spoken_question_is_answered_from_the_formal_text(chunks):
    draft, verdict = answer(chunks, "حق بیمه موتورم چنده؟")
    assert draft.answered, draft
    assert "ب- موتورسیکلت: سه درصد حداقل دیه" in draft.answer
    assert verdict.grounded, verdict


# -- pattern 5: document structure -----------------------------------------------------------------


def test_unpunctuated_list_items_are_content_not_headings(chunks):
    texts = [unit.text for chunk in chunks for unit in evidence_units(chunk)]
    assert "الف- سواري شخصي: هفت درصد حداقل ديه" in texts
    draft, verdict = answer(chunks, "حق بیمه پایه سواری شخصی چقدر است؟")
    assert draft.answered and "الف- سواری شخصی: هفت درصد حداقل دیه" in draft.answer
    assert "به شرح زیر" not in draft.answer  # the list's lead-in is context, not the answer
    assert verdict.grounded, verdict


def test_removing_bold_markers_never_glues_words():
    assert plain("**ماده ۱۶**متن ماده") == "ماده ۱۶ متن ماده"
    assert plain("**ماده**۱۶ - متن") == "ماده ۱۶ - متن"
    assert plain("متن **مهم** است") == "متن مهم است"


def test_a_sentence_after_a_bold_label_passes_its_own_verify(chunks):
    draft, verdict = answer(chunks, "بیمه‌گر ظرف چند روز باید خسارت را پرداخت کند؟")
    assert draft.answered and "پانزده روز" in draft.answer
    assert verdict.grounded, verdict


# -- pattern 6: reply form -------------------------------------------------------------------------


def test_replies_show_persian_letters_and_cite_a_short_title_once(chunks):
    draft, _ = answer(chunks, "حق بیمه را می‌شود قسطی پرداخت کرد؟ حداقل پیش‌پرداخت چقدر است؟")
    assert draft.answered
    assert not set("يكى") & set(draft.answer)
    title = short_title(chunks[0].title)
    assert title == "آیین‌نامه نمونه تعیین حق بیمه و پرداخت خسارت وسایل…" or len(title) <= 48
    assert "(مصوب ۱۴۰۰)" not in draft.answer
    assert draft.answer.count("بر اساس «") == 1


def test_an_english_question_gets_english_framing_around_the_persian_quote(chunks):
    draft, verdict = answer(chunks, "How many days does the insurer have to pay the claim?", language="en")
    if draft.answered:  # the local glossary may not reach every word: then it abstains, never guesses
        assert draft.answer.startswith("According to «") and "(quoted from the Persian source): «" in draft.answer
        assert verdict.grounded


def test_table_header_rows_are_never_quoted(chunks):
    draft, verdict = answer(chunks, "تخفیف عدم خسارت موتورسیکلت چند درصد است؟")
    assert draft.answered, draft
    assert "نوع وسیله نقلیه | درصد تخفیف عدم خسارت" not in draft.answer
    assert "موتورسیکلت | سه درصد برای هر سال" in draft.answer
    assert verdict.grounded
    assert all(contains(chunks[0].text + "".join(c.text for c in chunks), claim.text.split("»: ")[-1])
               for claim in draft.claims)


def test_display_keeps_soft_hyphenated_words_apart_so_the_quote_still_verifies():
    from insurance_agent.text import display_text

    source = "بيمه\u00adگر مي\u00adتواند خسارت را پرداخت كند."
    shown = display_text(source)
    assert shown == "بیمه\u200cگر می\u200cتواند خسارت را پرداخت کند."
    assert contains(source, shown)
