"""A quote from the right document that shares the question's topic but not what it asks is a
confident wrong answer. Checked on a verbatim excerpt of a real bylaw (tests/data/statutes/
claims-bylaw-excerpt.md: the third-party claims bylaw of 1396, a deadline of the traffic police,
two articles with lettered lists), with questions written for these tests."""

from __future__ import annotations


import pytest
from insurance_offline.colloquial import formalize, is_verb_form
from insurance_offline.lexical import contains, query_concepts, text_terms
from insurance_agent.models.chunks import RetrievedChunk
from insurance_agent.models.roles import Claim, GenerateRequest, Intent, VerifyRequest
from insurance_agent.quotes import strip_frame
from insurance_offline.generate import LocalGenerator, evidence_units
from insurance_offline.question import focus_concepts, has_number
from insurance_offline.verify import LocalVerifier


@pytest.fixture(scope="module")
def chunks(statute_chunks) -> list[RetrievedChunk]:
    return statute_chunks("claims-bylaw-excerpt.md")


def ask(chunks, question, message=None):
    draft = LocalGenerator(quoting=True)(
        GenerateRequest(route=Intent.KNOWLEDGE, message=message or question, query=question, chunks=chunks)
    )
    verdict = LocalVerifier()(
        VerifyRequest(answer=draft.answer, claims=draft.claims, chunks=chunks, min_support=1.0, question=question)
    )
    return draft, verdict


def quotes(draft, chunks) -> list[str]:
    titles = [chunk.title for chunk in chunks]
    return [strip_frame(claim.text, titles) for claim in draft.claims]


def test_a_deadline_of_another_party_does_not_answer_a_deadline_question(chunks):
    # The excerpt's only deadline is the traffic police's («ظرف دو هفته»); it shares «بیمه‌گر»,
    # «ظرف» and «پرداخت خسارت» with a question about the insurer paying property damage.
    draft, _ = ask(chunks, "بیمه‌گر خسارت مالی را ظرف چه مدتی پرداخت می‌کند؟")
    assert not draft.answered and not draft.claims

    draft, verdict = ask(chunks, "راهنمایی و رانندگی به استعلام گواهینامه ظرف چه مدتی پاسخ می‌دهد؟")
    assert draft.answered and verdict.grounded
    assert any("ظرف دو هفته" in quote for quote in quotes(draft, chunks))


def test_the_noun_a_question_word_governs_must_be_named_by_the_quote(chunks):
    question = "برای دریافت خسارت مالی چه مدارکی باید ارائه شود؟"
    assert [c.label for c in focus_concepts(question, query_concepts(question))] == ["مدارکی"]
    draft, verdict = ask(chunks, question)
    assert draft.answered and verdict.grounded
    units = [u for c in chunks for u in evidence_units(c)]
    quoted = [next(u for u in units if contains(u.text, quote)) for quote in quotes(draft, chunks)]
    items = [u for u in quoted if not u.text.endswith(":")]
    assert items and all("مدارک" in f"{u.text} {u.lead}" for u in items)
    # a list's introducing sentence is quoted only as the frame of its items, never alone
    assert all(any(contains(u.text, i.lead) for i in items) for u in quoted if u.text.endswith(":"))


@pytest.mark.parametrize(
    ("question", "focus"),
    [
        ("رسیدگی با شکایت چه اشخاصی آغاز می‌شود؟", []),  # persons: "who", not a thing to name
        ("ظرف چه مدتی باید اعلام کند؟", []),  # a measure asks for a figure
        ("کدام مرجع رسیدگی می‌کند؟", []),
        # an interval is a measure: «گزارش ادواری شش‌ماهه» answers it without the word «فاصله»
        ("گزارش در چه فواصلی به مجلس ارائه می‌شود؟", []),
        ("at what intervals is the report sent?", []),
        # a share is a measure too: «۵۰ درصد … از معاملات» answers it without the word «سهم»
        ("چه سهمی از معاملات را باید اتکایی کنند؟", []),
        ("which hospital should I go to?", ["hospital"]),
        ("what happens then?", []),  # no glossary rendering: no Persian sentence could name it
    ],
)
def test_focus_nouns(question, focus):
    assert [c.label for c in focus_concepts(question, query_concepts(question))] == focus


def test_verify_rejects_true_claims_that_do_not_state_what_is_asked(chunks):
    # A faithful quote of the excerpt, beside the point of a question about documents.
    police = next(u for c in chunks for u in evidence_units(c) if "ظرف دو هفته" in u.text)
    chunk = next(c for c in chunks if police.text.split("ـ")[0] in c.text)
    claim = Claim(text=police.text, chunk_ids=[chunk.chunk_id])
    request = dict(answer=claim.text, claims=[claim], chunks=[chunk], min_support=1.0)
    assert LocalVerifier()(VerifyRequest(**request)).grounded  # supported, as a claim

    off = LocalVerifier()(VerifyRequest(**request, question="برای دریافت خسارت مالی چه مدارکی لازم است؟"))
    assert not off.grounded and any("مدارکی" in item for item in off.unsupported_claims)

    # a quantity question is answered by a figure: «دو هفته» is one, «ماده (۴۰)» is not
    on = LocalVerifier()(VerifyRequest(**request, question="راهنمایی و رانندگی ظرف چه مدتی پاسخ می‌دهد؟"))
    assert on.grounded
    article4 = next(u for c in chunks for u in evidence_units(c) if u.text.startswith("ماده۴"))
    chunk4 = next(c for c in chunks if "ماده۴" in c.text)
    claim4 = Claim(text=article4.text, chunk_ids=[chunk4.chunk_id])
    late = LocalVerifier()(
        VerifyRequest(answer=claim4.text, claims=[claim4], chunks=[chunk4], question="ظرف چه مدتی پرداخت می‌شود؟")
    )
    assert not late.grounded


def test_list_items_keep_the_sentence_that_introduces_them(chunks):
    units = [u for c in chunks for u in evidence_units(c)]
    items = [u for u in units if u.text.startswith(("الف ـ", "ب ـ", "پ ـ"))]
    assert len(items) == 6
    assert all(u.lead.startswith(("ماده۳ـ", "ماده۴ـ")) for u in items)


def test_an_enumerated_clause_without_its_introduction_is_not_quoted(chunks):
    # The second half of article 4's list, cut from its introducing sentence (as a chunk boundary
    # can): «ب ـ …» alone states a condition of an unknown rule. A labelled item says what it is
    # about and stays quotable.
    text = "\n\n".join(u.text for c in chunks for u in evidence_units(c) if u.lead.startswith("ماده۴ـ"))
    cut = chunks[-1].model_copy(update={"text": text, "heading": None})
    assert evidence_units(cut) == []
    labelled = cut.model_copy(update={"text": "۴- صاحبان حرف و مشاغل آزاد: تا ۱۰۰% حق بیمه سرانه."})
    assert [u.text for u in evidence_units(labelled)] == ["۴- صاحبان حرف و مشاغل آزاد: تا ۱۰۰% حق بیمه سرانه."]


def test_a_follow_up_must_be_answered_in_its_own_words(chunks):
    # «and the driver's ID?» after a question on the documents for property damage: the
    # contextualized query repeats the first question, and the quote must name what the follow-up
    # adds, though the first question's words are only in the list's introducing sentence (quoted
    # first, as the frame of the item).
    query = "برای دریافت خسارت مالی چه مدارکی لازم است برای مدرک شناسایی راننده؟"
    draft, verdict = ask(chunks, query, message="برای مدرک شناسایی راننده چطور؟")
    assert draft.answered and verdict.grounded
    shown = quotes(draft, chunks)
    assert shown[-1] == "پ ـ مدرک شناسایی راننده مسبب حادثه." and shown[0].startswith("ماده۳ـ")


def test_references_to_provisions_are_not_figures():
    assert not has_number("در اجرای ماده (۴۰) قانون و تبصره۲ و مواد (۳۱) و (۳۲)")
    assert has_number("ظرف دو هفته پاسخ دهد")
    assert has_number("حداکثر تا پانزده روز")


@pytest.mark.parametrize(
    ("spoken", "written"),
    [("قسطای باقیمونده رو", "قسط‌های باقیمانده را"), ("تموم شد", "تمام شد"), ("مونده", "مانده")],
)
def test_spoken_plural_with_ezafe_and_nasal_vowel(spoken, written):
    assert formalize(spoken) == written


def test_adjectives_in_i_are_not_verb_forms():
    assert not is_verb_form("مالی") and not is_verb_form("فروشی")
    assert is_verb_form("بزنی") and is_verb_form("کردی")
    assert "مالی" in text_terms("خسارت مالی")


def test_the_everyday_words_for_the_parties_find_the_bylaws_words(chunks):
    # «مقصر» is the bylaw's «مسبب حادثه» and «طرف مقابل» its «زیان‌دیده». Matched word by word, «طرف»
    # found «طرفین» in the clause on the parties agreeing who caused the accident: a wrong answer.
    draft, verdict = ask(chunks, "من مقصر بودم، خودم می‌توانم برای خسارت مالی طرف مقابل به بیمه‌گر مراجعه کنم؟")
    assert draft.answered and verdict.grounded
    said = quotes(draft, chunks)
    assert any("راننده مسبب حادثه" in quote and "تشکیل و تکمیل پرونده" in quote for quote in said)
    assert not any("طرفین" in quote for quote in said)
