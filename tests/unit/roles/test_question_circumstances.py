"""What a customer's message asks, apart from what it tells: circumstances told before the question
do not make it a negated question, an English question opening with a negative auxiliary asks for
confirmation, compound prepositions are not concepts, and kinds of answer («چه مهلتی», «چه شرطی»)
ask for a form, not for the word. Questions written for these tests."""

from __future__ import annotations

import pytest
from insurance_offline.lexical import query_concepts
from insurance_agent.models.chunks import RetrievedChunk
from insurance_agent.models.roles import GenerateRequest, Intent
from insurance_search.chunking import chunk_document
from insurance_search.documents import Document
from insurance_offline.generate import LocalGenerator, evidence_units
from insurance_offline.question import asking_part, focus_concepts, question_shape, specific_tier


def shape(question: str):
    return question_shape(question, query_concepts(question), frozenset())


def labels(question: str) -> list[str]:
    return [concept.label for concept in query_concepts(question)]


@pytest.mark.parametrize(
    ("message", "asked"),
    [
        ("چند ساله اصلا تصادف نداشتم، هر سال چقدر تخفیف می‌گیرم؟", "هر سال چقدر تخفیف می‌گیرم؟"),
        (
            "I'm poor and can't afford health insurance. Does the government pay the premium?",
            "Does the government pay the premium?",
        ),
        ("اگر بیمه‌نامه نداشته باشم جریمه دارد؟", "اگر بیمه‌نامه نداشته باشم جریمه دارد؟"),  # one clause
        ("بیمه خسارتم را کامل نداده", "بیمه خسارتم را کامل نداده"),  # no question mark: all of it
        ("هزینه چقدر است؟ [حق بیمه]", "هزینه چقدر است؟"),
    ],
)
def test_the_asking_part_leaves_out_what_is_told_first(message, asked):
    assert asking_part(message) == asked


def test_a_negation_in_the_circumstances_does_not_make_the_question_negated():
    assert not shape("چند ساله اصلا تصادف نداشتم، هر سال چقدر تخفیف به من می‌خورد؟").negated
    assert not shape("I'm really poor and can't afford it. Does the government pay the premium for me?").negated
    # the question itself negates: still negated
    assert shape("چه خسارت‌هایی را بیمه‌گر پرداخت نمی‌کند؟").negated
    assert shape("What does the policy not cover?").negated


def test_a_negative_auxiliary_opening_an_english_question_asks_for_confirmation():
    assert not shape("The car has been at the dealer for four days. Aren't they supposed to lend me a car?").negated
    assert not shape("Isn't the insurer obliged to pay within fifteen days?").negated
    assert shape("Which damages are not paid by the insurer?").negated


@pytest.mark.parametrize(
    ("question", "framing"),
    [
        ("در صورتی که مدارک ناقص باشد بیمه‌گر چه باید بکند؟", "صورتی"),
        ("خودرویی که به دلیل نداشتن بیمه‌نامه توقیف شده چگونه آزاد می‌شود؟", "دلیل"),
        ("در مورد خسارت بدنی مهلت پرداخت چقدر است؟", "مورد"),
        ("از طریق کدام سامانه شکایت ثبت می‌شود؟", "طریق"),
    ],
)
def test_compound_prepositions_are_not_concepts(question, framing):
    found = labels(question)
    assert framing not in found
    assert len(found) >= 2  # the words they frame still count


def test_a_deadline_asks_for_a_quantity_and_a_condition_or_basis_is_no_focus_noun():
    assert shape("بیمه‌گر در چه مهلتی باید نتیجه را اعلام کند؟").needs_number
    concepts = query_concepts("بیمه‌گر در چه مهلتی باید نتیجه را اعلام کند؟")
    assert not focus_concepts("بیمه‌گر در چه مهلتی باید نتیجه را اعلام کند؟", concepts)
    for question in ("برای رفع توقیف خودرو چه شرطی لازم است؟", "کاهش تخفیف بر چه مبنایی محاسبه می‌شود؟"):
        assert not focus_concepts(question, query_concepts(question))
    # a thing asked for is still a focus
    assert [c.label for c in focus_concepts("چه مدارکی لازم است؟", query_concepts("چه مدارکی لازم است؟"))]


def test_up_to_bounds_a_quantity_and_is_not_the_specific_concept():
    question = "Can foreigners buy shares of an Iranian insurance company, and up to what percentage?"
    concepts = query_concepts(question)
    tier = specific_tier(concepts, [2.0 if c.label == "up to" else 1.0 for c in concepts], frozenset())
    assert "up to" not in [c.label for c in tier]


def test_an_item_of_a_list_cut_by_the_chunk_budget_is_quoted_under_its_lead():
    text = (
        "ماده ۶ـ منابع مالی صندوق عبارتند از:\n\n"
        "الف ـ هشت درصد از حق بیمه اجباری شخص ثالث که بیمه‌گران به حساب صندوق واریز می‌کنند.\n\n"
        "ب ـ مبالغ بازیافتی از مسببان حوادث و دارندگان وسایل نقلیه فاقد بیمه‌نامه.\n\n"
        "پ ـ درآمد حاصل از سرمایه‌گذاری وجوه صندوق در بانک‌ها و اوراق مشارکت.\n\n"
        "ت ـ بیست درصد از جریمه‌های وصولی راهنمایی و رانندگی در کل کشور.\n"
    )
    document = Document(file_id="fund", title="اساسنامه صندوق تأمین خسارت‌های بدنی", text=text)
    chunks = [
        RetrievedChunk(**chunk.model_dump(), score=0.03)
        for chunk in chunk_document(document, "t-law", max_words=40, overlap_words=5)
    ]
    second = next(chunk for chunk in chunks if "بیست درصد از جریمه‌های وصولی" in chunk.text)
    item = next(unit for unit in evidence_units(second) if "بیست درصد" in unit.text)
    assert item.lead.startswith("ماده ۶ـ منابع مالی صندوق")
    question = "چند درصد از جریمه‌های راهنمایی و رانندگی به منابع مالی صندوق می‌رسد؟"
    draft = LocalGenerator(quoting=True)(GenerateRequest(route=Intent.KNOWLEDGE, message=question, query=question, chunks=[second]))
    assert draft.answered and "بیست درصد" in draft.answer


def test_the_kind_of_answer_a_question_word_asks_for_is_no_concept():
    from insurance_offline.question import without_kinds

    def kept(question):
        return [c.label for c in without_kinds(question, query_concepts(question))]

    assert "شرطی" not in kept("برای رفع توقیف خودرو چه شرطی لازم است؟")
    assert "مبنایی" not in kept("کاهش تخفیف بر چه مبنایی محاسبه می‌شود؟")
    assert "مهلتی" in kept("صندوق در چه مهلتی باید نتیجه را اعلام کند؟")  # see test_own_coverage
    # a thing asked for stays: the answer must name the documents
    assert "مدارکی" in kept("چه مدارکی لازم است؟")
    # «شرط» that is not governed by a question word is content
    assert "شرط" in kept("شرط پرداخت خسارت چیست؟")


def test_a_words_own_plural_does_not_make_it_a_key_notion():
    keys = {c.label: c.key for c in query_concepts("ما روستایی هستیم، گارانتی چقدر است؟")}
    assert keys["روستایی"] is False  # only its plural «روستاییان» as an alternative
    assert keys["گارانتی"] is True  # a register word: the law's «ضمانت» / «تضمین»
