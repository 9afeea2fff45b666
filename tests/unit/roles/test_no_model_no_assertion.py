"""The offline provider cannot read, so it answers only from a passage the question is pinned to."""

from insurance_agent.models.roles import ClarifyRequest, GenerateRequest, GradeRequest, GradeVerdict, Intent
from insurance_agent.models.turn import ClarifyOption
from insurance_agent.policy.options import passage_options
from insurance_offline import OfflineProvider
from insurance_offline.clarify import LocalClarifier
from insurance_offline.generate import LocalGenerator

QUESTION = "مهلت اعلام خسارت بدنه چند روز است؟"
WINDOW = "فرانشیز خسارت اول ده درصد است.\n\nمهلت اعلام خسارت پنج روز کاری است.\n\nمدارک لازم: کارت ماشین."


def test_a_passage_that_states_the_answer_in_the_question_s_words_is_still_not_quoted_unasked(chunk_factory):
    # It states exactly what is asked, but nothing but shared words ties the question to it.
    chunk = chunk_factory("body-2", "f-body", "بیمه بدنه خودرو", "مهلت اعلام خسارت بدنه پنج روز کاری است.", 0.9)
    provider = OfflineProvider()
    graded = provider.grade(GradeRequest(query=QUESTION, chunks=[chunk]))
    assert graded.verdict == GradeVerdict.AMBIGUOUS and graded.choose == "passages"
    assert [judged.chunk_id for judged in graded.relevance if judged.relevant] == ["body-2"]
    draft = provider.generate(GenerateRequest(route=Intent.KNOWLEDGE, message=QUESTION, query=QUESTION, chunks=[chunk]))
    assert not draft.answered and draft.answer == "" and not draft.citations
    # The quoting drafter of the wire stand-ins would have quoted it: the gate is the default, not the data.
    assert LocalGenerator(quoting=True)(
        GenerateRequest(route=Intent.KNOWLEDGE, message=QUESTION, query=QUESTION, chunks=[chunk])).answered


def test_the_pinned_passage_is_quoted_from_its_own_text_not_its_neighbours(chunk_factory):
    chunk = chunk_factory("body-2", "f-body", "بیمه بدنه خودرو", WINDOW, 0.9)
    start = WINDOW.index("مهلت")
    chunk = chunk.model_copy(update={"own_span": [start, WINDOW.index("\n\nمدارک")],
                                     "expanded_from": ["body-1", "body-3"]})
    draft = LocalGenerator()(GenerateRequest(route=Intent.KNOWLEDGE, message="۱", query=QUESTION, chunks=[chunk],
                                             pinned=["body-2"]))
    assert draft.answered and draft.confidence == 1.0 and draft.citations == ["body-2"]
    assert [claim.text for claim in draft.claims] == ["بر اساس «بیمه بدنه خودرو»: مهلت اعلام خسارت پنج روز کاری است."]
    # A sentence verify found unsupported is never quoted again: nothing else is left to quote.
    again = LocalGenerator()(GenerateRequest(route=Intent.KNOWLEDGE, message="۱", query=QUESTION, chunks=[chunk],
                                             pinned=["body-2"], feedback=["مهلت اعلام خسارت پنج روز کاری است."]))
    assert not again.answered


def test_a_long_passage_is_quoted_as_far_as_the_bound_at_a_sentence(chunk_factory):
    sentences = [f"بند {n} این بیمه‌نامه شرط جداگانه‌ای درباره پرداخت خسارت دارد." for n in range(1, 40)]
    chunk = chunk_factory("long-1", "f-long", "بیمه‌نامه", " ".join(sentences), 0.5)
    draft = LocalGenerator(max_passage_chars=200)(
        GenerateRequest(route=Intent.KNOWLEDGE, message="۱", query="شرط پرداخت", chunks=[chunk], pinned=["long-1"]))
    quoted = [claim.text.split(": ", 1)[-1] if i == 0 else claim.text for i, claim in enumerate(draft.claims)]
    assert 1 < len(quoted) < len(sentences) and all(text in sentences for text in quoted)


def test_passages_of_two_documents_pinned_by_one_number_are_a_choice(chunk_factory):
    law = chunk_factory("law-3", "law", "قانون بیمه", "ماده ۱۲- بیمه‌گذار باید حق بیمه را بپردازد.", 0.6)
    fund = chunk_factory("fund-2", "fund", "اساسنامه صندوق", "ماده ۱۲ـ صندوق موظف است خسارت را بپردازد.", 0.5)
    provider = OfflineProvider()
    graded = provider.grade(GradeRequest(query="ماده ۱۲ چه می‌گوید؟", chunks=[law, fund], pinned=["law-3", "fund-2"]))
    assert graded.verdict == GradeVerdict.AMBIGUOUS and graded.choose == "passages"
    options = passage_options([law, fund], [j.chunk_id for j in graded.relevance if j.relevant], "fa")
    question = provider.clarify(ClarifyRequest(query="ماده ۱۲", message="ماده ۱۲", chunks=[law, fund], options=options))
    assert "کدام یک به مورد شما مربوط است؟" in question.question
    assert all(option.label in question.question for option in options)
    pinned = provider.grade(GradeRequest(query="ماده ۱۲ چه می‌گوید؟", chunks=[law, fund], pinned=["law-3"]))
    assert pinned.verdict == GradeVerdict.SUFFICIENT


def test_one_passage_is_offered_as_is_this_your_case():
    option = ClarifyOption(label="بیمه بدنه — مهلت: «مهلت اعلام…»", file_id="f-body", chunk_id="body-2")
    fa = LocalClarifier()(ClarifyRequest(query="q", message="q", chunks=[], options=[option]))
    en = LocalClarifier()(ClarifyRequest(query="q", message="q", chunks=[], options=[option], language="en"))
    assert fa.question.startswith("این بخش از مدارک ما به پرسش شما مربوط است. آیا مورد شما همین است؟")
    assert en.question.startswith("This passage of our documents relates to your question. Is it your case?")
    assert option.label in fa.question and "1. " + option.label in en.question


def test_an_offline_grade_beside_a_drafter_that_reads_gives_its_verdict(chunk_factory, monkeypatch):
    from insurance_agent.config import get_settings
    from insurance_agent.roles.base import drafter_reads

    chunk = chunk_factory("body-2", "f-body", "بیمه بدنه خودرو", "مهلت اعلام خسارت بدنه پنج روز کاری است.", 0.9)
    # RoleProviders=generate:openai: the reader judges the passage, so grade says sufficient as usual
    graded = OfflineProvider().grade(GradeRequest(query=QUESTION, chunks=[chunk], drafter_reads=True))
    assert graded.verdict == GradeVerdict.SUFFICIENT and graded.choose == "documents"
    assert not drafter_reads()  # the embedded default drafts offline
    monkeypatch.setenv("ROLE_PROVIDERS", "generate:openai")
    get_settings.cache_clear()
    try:
        assert drafter_reads()
    finally:
        monkeypatch.delenv("ROLE_PROVIDERS")
        get_settings.cache_clear()


def test_a_numbered_provision_of_an_unnamed_document_is_offered_to_be_confirmed(chunk_factory):
    law = chunk_factory("law-3", "law", "قانون بیمه", "ماده ۱۲- بیمه‌گذار باید حق بیمه را بپردازد.", 0.6)
    other = chunk_factory("law-4", "law", "قانون بیمه", "ماده ۱۳- بیمه‌گر باید خسارت را بپردازد.", 0.7)
    graded = OfflineProvider().grade(GradeRequest(query="ماده ۱۲ چه می‌گوید؟", chunks=[law, other], numbered=["law-3"]))
    assert graded.verdict == GradeVerdict.AMBIGUOUS and graded.choose == "passages"
    assert [(j.chunk_id, j.relevant) for j in graded.relevance] == [("law-3", True)]  # only the numbered one
