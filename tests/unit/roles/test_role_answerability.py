"""The offline provider's general answerability checks: spelling grounded in the evidence, the kind of
sentence that can answer a question, topic agreement, and the corpus topic scope."""

import pytest
from insurance_offline.lexical import ground_concepts, query_concepts, text_terms
from insurance_agent.models.roles import GenerateRequest, Intent, TriageRequest
from insurance_offline.generate import LocalGenerator
from insurance_offline.question import fits, question_shape
from insurance_offline.triage import LocalTriager

generate = LocalGenerator(quoting=True)


def answer(query, chunks):
    return generate(GenerateRequest(route=Intent.KNOWLEDGE, message=query, query=query, chunks=chunks))


def shape(query, evidence=""):
    words = frozenset(evidence.split())
    return question_shape(query, query_concepts(query), words)


@pytest.mark.parametrize(
    "query,evidence,found",
    [
        ("فرودگاه مهرآباد کجای تهرانه؟", "فرودگاه مهرآباد در غرب تهران است", True),  # colloquial copula
        ("اسم دوستای هری چیه؟", "دوستان هری رون و هرمیون هستند", True),  # colloquial plural
        ("علائم سرماخوردگی چیست؟", "علائم سرما خوردگی عطسه است", True),  # joined compound
        ("ماکسول در کدام داشنگاه درس خواند؟", "ماکسول در دانشگاه کمبریج درس خواند", True),  # swapped letters
        ("اشیل پسر کیست؟", "آشیل پسر تتیس است", True),  # alef madda left out
        ("دوشاپ از چه انگوری است؟", "دوشاب از انگور کشمشی است", True),  # one letter changed
        ("گرگ کجا زندگی می‌کند؟", "سگ اهلی در خانه زندگی می‌کند", False),  # a short word is not a typo
    ],
)
def test_query_words_take_the_evidence_spelling(query, evidence, found):
    documents = [text_terms(evidence)]
    concepts = ground_concepts(query_concepts(query), documents)
    assert all(c.covered_by(documents[0]) for c in concepts) is found


def test_a_word_the_evidence_contains_keeps_its_meaning():
    documents = [text_terms("فرهاد و فرزاد برادرند")]
    (concept,) = ground_concepts(query_concepts("فرزاد"), documents)
    assert concept.alternatives == (frozenset({"فرزاد"}),)


def test_the_kind_of_sentence_that_answers():
    topic = text_terms("خلیج فارس")
    assert not fits(shape("خلیج فارس چند جزیره دارد؟"), "خلیج فارس آبراهی در جنوب ایران است.", "", topic)
    assert fits(shape("خلیج فارس چند جزیره دارد؟"), "خلیج فارس ۱۳۰ جزیره دارد.", "", topic)
    assert fits(shape("رونالدینیو چندمین بازیکن بود؟"), "او پنجمین بازیکن بود.", "", topic)  # number words
    assert not fits(shape("چرا گلوله از سرب است؟"), "گلوله از سرب ساخته می‌شود.", "", topic)
    assert fits(shape("چرا گلوله از سرب است؟"), "گلوله از سرب است زیرا سنگین است.", "", topic)
    negated = shape("صلاح الدین در کدام شهر نجنگید؟", "صلاح الدین در دمشق جنگید")
    assert negated.negated
    assert not fits(negated, "صلاح الدین در دمشق جنگید.", "", topic)
    assert fits(negated, "او هرگز در قاهره نجنگید.", "", topic)
    assert fits(shape("چه چیزهایی پوشش داده نمی‌شود؟"), "زلزله و سیل", "موارد زیر تحت پوشش نیستند:", topic)


def test_what_is_x_is_answered_by_the_document_about_x_or_with_x_as_subject():
    question = shape("الکتریسیته چیه؟")
    assert question.defines
    elsewhere = text_terms("جیمز کلرک ماکسول")
    assert not fits(question, "دستاورد او یکپارچه کردن الکتریسیته و مغناطیس بود.", "", elsewhere)
    assert fits(question, "الکتریسیته پدیده‌ای فیزیکی است.", "", elsewhere)
    assert fits(question, "پدیده‌ای فیزیکی ناشی از بار است.", "", text_terms("الکتریسیته"))
    founder = shape("موسس شرکت تویوتا کیه؟")
    assert fits(founder, "شرکت تویوتا را ساکیشی تویودا موسس بود.", "", text_terms("تویوتا"))


def test_a_distractor_document_cannot_answer_when_the_question_names_another(chunk_factory):
    real = chunk_factory("rm-1", "f-rm", "باشگاه فوتبال رئال مادرید", "رئال مادرید باشگاهی در اسپانیا است.", 0.03)
    other = chunk_factory(
        "b-1", "f-b", "باشگاه فوتبال بارسلونا", "رقیب اصلی بارسلونا، رئال مادرید، سیزده بار قهرمان اروپا شده است.", 0.02
    )
    draft = answer("رئال مادرید چند بار قهرمان اروپا شده؟", [real, other])
    assert not draft.answered  # the count is in the other club's document only


def test_the_corpus_scope_has_no_out_of_scope_questions(triage_classifier):
    corpus = LocalTriager(classifier=triage_classifier, scope="corpus")
    insurance = LocalTriager(classifier=triage_classifier, scope="insurance")
    for message in ("پایتخت اسپانیا کجاست؟", "سگ چه رنگیه؟"):
        assert corpus(TriageRequest(message=message)).intent == Intent.KNOWLEDGE
    assert insurance(TriageRequest(message="پایتخت اسپانیا کجاست؟")).intent == Intent.OUT_OF_SCOPE
    assert corpus(TriageRequest(message="سلام، وقت بخیر")).intent == Intent.CHITCHAT
    assert corpus(TriageRequest(message="می‌خواهم با یک کارشناس صحبت کنم")).intent == Intent.HANDOFF_REQUEST
