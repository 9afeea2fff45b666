"""Local grade verdicts on crafted chunk sets."""

import pytest
from insurance_agent.models.roles import GradeRequest, GradeVerdict
from insurance_offline.grade import LocalGrader

grade = LocalGrader(quoting=True)


def verdict(query, chunks, grader=grade):
    return grader(GradeRequest(query=query, chunks=chunks)).verdict


def test_no_chunks_is_insufficient():
    assert verdict("فرانشیز بیمه بدنه چقدر است؟", []) == GradeVerdict.INSUFFICIENT


def test_specific_question_with_covering_chunk_is_sufficient(body_chunk, third_party_chunk):
    result = grade(GradeRequest(query="فرانشیز بیمه بدنه چقدر است؟", chunks=[body_chunk, third_party_chunk]))
    assert result.verdict == GradeVerdict.SUFFICIENT
    relevance = {r.chunk_id: r for r in result.relevance}
    assert relevance["body-1"].relevant and relevance["body-1"].score == 1.0
    assert not relevance["tp-1"].relevant


def test_question_naming_no_product_over_several_products_is_ambiguous(body_chunk, third_party_chunk, health_chunk):
    chunks = [body_chunk, third_party_chunk, health_chunk]
    assert verdict("حق بیمه چقدر است؟", chunks) == GradeVerdict.AMBIGUOUS
    assert verdict("قیمتش چقدره؟", chunks) == GradeVerdict.AMBIGUOUS
    assert verdict("How much does it cost?", chunks) == GradeVerdict.AMBIGUOUS
    # naming the product settles it
    assert verdict("حق بیمه درمان تکمیلی چقدر است؟", chunks) == GradeVerdict.SUFFICIENT


def test_one_product_only_is_not_ambiguous(body_chunk):
    second = body_chunk.model_copy(update={"chunk_id": "body-2", "score": 0.030})
    assert verdict("حق بیمه چقدر است؟", [body_chunk, second]) == GradeVerdict.SUFFICIENT


def test_far_behind_hits_do_not_make_it_ambiguous(body_chunk, third_party_chunk):
    far = third_party_chunk.model_copy(update={"score": 0.010})
    assert verdict("حق بیمه چقدر است؟", [body_chunk, far]) == GradeVerdict.SUFFICIENT


def test_off_topic_evidence_is_insufficient(body_chunk, third_party_chunk):
    assert verdict("بیمه حیوانات خانگی چه شرایطی دارد؟", [body_chunk, third_party_chunk]) == GradeVerdict.INSUFFICIENT


def test_a_high_score_rescues_low_lexical_coverage_only_with_a_score_floor(body_chunk):
    chunk = body_chunk.model_copy(update={"score": 0.92})
    query = "بیمه حیوانات خانگی"
    assert verdict(query, [chunk]) == GradeVerdict.INSUFFICIENT
    assert verdict(query, [chunk], LocalGrader(quoting=True, min_score=0.9)) == GradeVerdict.SUFFICIENT


def test_english_question_against_persian_evidence(body_chunk, third_party_chunk):
    query = "What is the deductible for car body insurance?"
    assert verdict(query, [body_chunk, third_party_chunk]) == GradeVerdict.SUFFICIENT


def test_products_missing_fall_back_to_files(chunk_factory):
    a = chunk_factory("a", "f-a", "بیمه عمر و سرمایه‌گذاری", "حق بیمه عمر ماهانه پرداخت می‌شود.", 0.5, domain="life")
    b = chunk_factory("b", "f-b", "بیمه آتش‌سوزی منازل", "حق بیمه آتش‌سوزی سالانه پرداخت می‌شود.", 0.49, domain="property")
    assert verdict("حق بیمه چطور پرداخت می‌شود؟", [a, b]) == GradeVerdict.AMBIGUOUS
    assert verdict("حق بیمه عمر چطور پرداخت می‌شود؟", [a, b]) == GradeVerdict.SUFFICIENT


def test_a_named_domain_notion_missing_from_all_evidence_is_insufficient(body_chunk, third_party_chunk):
    assert verdict("Does car body insurance cover earthquake damage?", [body_chunk, third_party_chunk]) == (
        GradeVerdict.INSUFFICIENT
    )
    assert verdict("Does car body insurance cover damage?", [body_chunk, third_party_chunk]) == GradeVerdict.SUFFICIENT


# Real excerpts: the Central Insurance Act's article on an insurer's bankruptcy, the third-party
# premium bylaw's article on installments, the claims bylaw's article on the first visit.
_BANKRUPTCY = (
    "ماده 60. اموال مؤسسات بيمه همچنين ودايع مذكور در مواد 36 و 46 تضمين حقوق و مطالبات بيمه‏گذاران، "
    "بيمه‏شدگان و صاحبان حقوق آنان است و در صورت انحلال يا ورشكستگى مؤسسه بيمه بيمه‏گذاران و بيمه‏شدگان و "
    "صاحبان حقوق آنان نسبت به ساير بستانكاران حق تقدم دارند."
)
_INSTALLMENTS = (
    "الف ـ در صورتی‌که شخص حقوقی متعهد شود که اقساط حق بیمه وسایل نقلیه متعلق به خود یا کارکنان خود را از "
    "حقوق آن‌ها کسر و در وجه بیمه‌گر پرداخت نماید، باید حداقل بیست و پنج درصد مبلغ حق بیمه همزمان با صدور "
    "بیمه‌نامه دریافت گردد."
)
_FIRST_VISIT = (
    "ماده۵ـ صندوق یا بیمه‌گر حسب مورد مکلفند در اولین مراجعه زیان‌دیده، ضمن اعلام کتبی فهرست مدارک، رسید یا "
    "شناسه (کد) رهگیری به او تحویل دهند."
)


@pytest.fixture
def statute_excerpts(chunk_factory):
    return [
        chunk_factory("cil-60", "central-insurance-law", "قانون تأسیس بیمه مرکزی ایران و بیمه‌گری", _BANKRUPTCY,
                      0.031, domain="regulation"),
        chunk_factory("tpp-77", "tp-premium-bylaw", "آیین‌نامه تعیین سقف حق بیمه شخص ثالث و نحوه تخفیف، افزایش یا "
                      "تقسیط آن", _INSTALLMENTS, 0.030, domain="third_party"),
        chunk_factory("tpc-5", "tp-claims-bylaw", "آیین‌نامه اجرایی ماده ۳۰ قانون بیمه اجباری شخص ثالث",
                      _FIRST_VISIT, 0.029, domain="claims"),
    ]


def test_a_document_far_behind_in_coverage_is_not_a_reading_to_choose(statute_excerpts):
    # Both documents are close in retrieval score and pass the relevance bar, but one covers the
    # question far better: offering the other as an option would ask the user a needless question.
    question = "بیمه‌گر ورشکست شود، مطالبات ما پیش از دیگر بستانکاران پرداخت می‌شود؟"
    loose = LocalGrader(quoting=True, min_coverage=0.4)
    result = loose(GradeRequest(query=question, chunks=statute_excerpts))
    relevance = {r.chunk_id: r for r in result.relevance}
    assert relevance["cil-60"].relevant and relevance["tpp-77"].relevant
    assert relevance["tpp-77"].score < 0.7 * relevance["cil-60"].score
    assert result.verdict == GradeVerdict.SUFFICIENT
    # without the coverage comparison the same hits were a clarifying question
    assert verdict(question, statute_excerpts, LocalGrader(quoting=True, min_coverage=0.4, coverage_ratio=0.0)) == (
        GradeVerdict.AMBIGUOUS
    )


def test_documents_close_in_coverage_still_need_a_choice(statute_excerpts):
    question = "بیمه‌گر ورشکست شود، مطالبات ما پرداخت می‌شود؟"
    assert verdict(question, statute_excerpts, LocalGrader(quoting=True, min_coverage=0.4)) == GradeVerdict.AMBIGUOUS
