"""Local contextualize: follow-ups are resolved against the previous query; option picks scope retrieval."""

import pytest
from insurance_agent.models.roles import ContextualizeRequest, HistoryTurn
from insurance_agent.models.scope import Scope
from insurance_agent.models.turn import ClarifyOption
from insurance_agent.policy.clarification import pick_option
from insurance_offline.contextualize import LocalContextualizer, is_follow_up

contextualize = LocalContextualizer()

OPTIONS = [
    ClarifyOption(label="بیمه بدنه خودرو", file_id="f-body", title="بیمه بدنه خودرو", domain="auto"),
    ClarifyOption(label="بیمه شخص ثالث", file_id="f-tp", title="بیمه شخص ثالث", domain="auto"),
    ClarifyOption(label="بیمه درمان تکمیلی", file_id="f-health", title="بیمه درمان تکمیلی", domain="health"),
]
CLARIFY_TURN = HistoryTurn(
    message="قیمتش چقدره؟",
    reply="منظورتان کدام بیمه است؟",
    status="clarify",
    query="قیمت بیمه چقدر است؟",
    options=OPTIONS,
)
HEALTH_TURN = HistoryTurn(
    message="حق بیمه درمان تکمیلی برای پدرم چقدر است؟", query="حق بیمه درمان تکمیلی برای پدرم چقدر است؟"
)
ENGLISH_TURN = HistoryTurn(
    message="What is the deductible for third-party car insurance?",
    query="What is the deductible for third-party car insurance?",
    language="en",
)


def run(message, history=(), language="fa"):
    return contextualize(ContextualizeRequest(message=message, history=list(history), language=language))


def test_first_turn_is_its_own_query():
    assert (
        run("بیمه بدنه خودرو چه خسارت‌هایی را پوشش می‌دهد؟").standalone_query
        == "بیمه بدنه خودرو چه خسارت‌هایی را پوشش می‌دهد؟"
    )


def test_persian_follow_up_replaces_the_family_member():
    result = run("برای همسرم چطور؟", [HEALTH_TURN])
    assert result.standalone_query == "حق بیمه درمان تکمیلی برای همسرم چقدر است؟"
    assert result.scope == Scope()


def test_colloquial_follow_ups():
    assert "بچه" in run("و برای بچه‌هام؟", [HEALTH_TURN]).standalone_query
    # nothing new to merge: the previous question stands
    assert run("اون یکی چی؟", [HEALTH_TURN]).standalone_query == HEALTH_TURN.query


def test_english_follow_up_on_english_question_keeps_english_and_adds_persian_terms():
    result = run("what about for my wife?", [ENGLISH_TURN], language="en")
    query = result.standalone_query
    assert query.startswith("What is the deductible for third-party car insurance") and "wife" in query
    assert "همسر" in query and "فرانشیز" in query  # corpus-language terms for retrieval


def test_english_follow_up_on_persian_question_uses_the_glossary():
    assert run("what about for my wife?", [HEALTH_TURN]).standalone_query == "حق بیمه درمان تکمیلی برای همسر چقدر است؟"


def test_a_new_question_is_not_a_follow_up():
    message = "شرایط فسخ بیمه‌نامه عمر چیست و چه مدارکی لازم است؟"
    assert run(message, [HEALTH_TURN]).standalone_query == message
    assert not is_follow_up("بیمه عمر چیه؟")
    assert is_follow_up("what about for my wife?") and is_follow_up("برای همسرم چطور؟") and is_follow_up("اون یکی چی؟")


@pytest.mark.parametrize(
    "message, file_id",
    [
        ("1", "f-body"),
        ("۲", "f-tp"),
        ("گزینه ۳", "f-health"),
        ("اولی", "f-body"),
        ("دومی", "f-tp"),
        ("the third one", "f-health"),
        ("آخری", "f-health"),
        ("بدنه", "f-body"),
        ("همون شخص ثالث", "f-tp"),
        ("درمان تکمیلی", "f-health"),
        ("the health one", "f-health"),
    ],
)
def test_option_picks_return_the_clarified_query_scoped_to_the_option(message, file_id):
    result = run(message, [CLARIFY_TURN])
    option = next(o for o in OPTIONS if o.file_id == file_id)
    assert result.standalone_query == CLARIFY_TURN.query
    assert result.scope == Scope(file_id=file_id, domain=option.domain)


@pytest.mark.parametrize("message", ["5", "بیمه", "بیمه عمر چه شرایطی دارد؟"])
def test_non_picks_are_not_scoped(message):
    assert run(message, [CLARIFY_TURN]).scope == Scope()
    assert pick_option(message, OPTIONS) is None


def test_the_request_is_not_mutated():
    request = ContextualizeRequest(message="برای همسرم چطور؟", history=[HEALTH_TURN])
    before = request.model_dump()
    contextualize(request)
    assert request.model_dump() == before


@pytest.mark.parametrize(
    "message",
    [
        "شخص ثالث رو فسخ کنید",  # names an option, but asks for something else (a cancellation)
        "فرانشیز بیمه درمان تکمیلی چقدر است؟",  # a different question about one option's product
        "How do I cancel the third-party one?",
    ],
)
def test_a_different_message_after_a_clarifying_question_is_not_a_pick(message):
    assert pick_option(message, OPTIONS) is None
    assert run(message, [CLARIFY_TURN]).scope == Scope()


def test_a_pending_clarification_does_not_swallow_a_new_question():
    # the new question is its own query, not the clarified one
    result = run("فرانشیز بیمه درمان تکمیلی چقدر است؟", [CLARIFY_TURN])
    assert result.standalone_query.startswith("فرانشیز بیمه درمان تکمیلی")


def test_a_follow_up_substitutes_the_tenants_own_product_line():
    # «دام» (livestock) is no built-in line word: it is one because the thread cited that product.
    from insurance_agent.models.roles import DocumentLabel

    fire = HistoryTurn(
        message="فرانشیز بیمه آتش‌سوزی چقدر است؟",
        query="فرانشیز بیمه آتش‌سوزی چقدر است؟",
        documents=[
            DocumentLabel(file_id="f-fire", title="شرایط عمومی بیمه آتش‌سوزی", product="fire"),
            DocumentLabel(file_id="f-stock", title="شرایط عمومی بیمه دام و طیور", product="livestock"),
        ],
    )
    assert run("برای دام چطور؟", [fire]).standalone_query == "فرانشیز بیمه دام چقدر است؟"
    without = fire.model_copy(update={"documents": []})
    assert run("برای دام چطور؟", [without]).standalone_query != "فرانشیز بیمه دام چقدر است؟"


def test_a_run_of_follow_ups_asks_the_first_question_about_each_new_subject():
    first = HistoryTurn(
        message="سهم بیمه‌شده از هزینه دندانپزشکی چقدر است؟", query="سهم بیمه‌شده از هزینه دندانپزشکی چقدر است؟"
    )
    second_query = run("برای عینک چطور؟", [first]).standalone_query
    assert "عینک" in second_query and "دندانپزشکی" in second_query
    second = HistoryTurn(message="برای عینک چطور؟", query=second_query)

    third = run("زایمان چطور؟", [first, second]).standalone_query
    # the third turn replaces the second's subject: it is not about glasses and childbirth at once
    assert "زایمان" in third and "سهم بیمه‌شده" in third
    assert "عینک" not in third

    # a new question in between starts a new run
    other = HistoryTurn(message="فرانشیز بیمه بدنه خودرو چقدر است؟", query="فرانشیز بیمه بدنه خودرو چقدر است؟")
    fourth = run("برای موتورسیکلت چطور؟", [first, second, other]).standalone_query
    assert "فرانشیز" in fourth and "دندانپزشکی" not in fourth


def test_a_follow_up_that_describes_the_customer_anew_replaces_the_description():
    """"I'm self-employed. How much …?" then "And if I were a government employee?": the second turn
    asks the same question for an employee, not for a self-employed employee, which no sentence
    answers. Any other new circumstance adds to the story told before, which stays."""
    first = HistoryTurn(
        message="I'm self-employed. How much of the public health insurance premium do I pay myself?",
        query="I'm self-employed. How much of the public health insurance premium do I pay myself?",
        language="en",
    )
    query = run("And if I were a government employee?", [first], language="en").standalone_query
    assert query.startswith("How much of the public health insurance premium do I pay myself")
    assert "government employee" in query and "self-employed" not in query

    persian = HistoryTurn(
        message="من کارمند دولت هستم. سهم من از حق بیمه درمان چقدر است؟",
        query="من کارمند دولت هستم. سهم من از حق بیمه درمان چقدر است؟",
    )
    retired = run("اگه بازنشسته بودم چی؟", [persian]).standalone_query
    assert "بازنشسته" in retired and "کارمند" not in retired and "حق بیمه درمان" in retired

    stolen = HistoryTurn(
        message="My car was stolen. Does my policy cover it?", query="My car was stolen. Does my policy cover it?", language="en"
    )
    assert "stolen" in run("And if it was parked outside?", [stolen], language="en").standalone_query
    told = HistoryTurn(
        message="پدرم عمل جراحی کرد. بیمه تکمیلی هزینه‌اش را می‌دهد؟",
        query="پدرم عمل جراحی کرد. بیمه تکمیلی هزینه‌اش را می‌دهد؟",
    )
    assert run("برای همسرم چطور؟", [told]).standalone_query.startswith("همسرم عمل جراحی کرد.")
    assert "جراحی" in run("اگه بیمارستان خصوصی باشه چی؟", [told]).standalone_query


def test_a_long_condition_with_a_bare_what_is_a_follow_up():
    """«اگه … چی؟» and "And if …?" leave out what happens, which the previous question asked: a
    follow-up however long the condition. A condition with its own question is a question."""
    payroll = HistoryTurn(
        message="کارمند دولتم. اداره تا کی باید حق بیمه درمان را به حساب بیمه سلامت بریزد؟",
        query="کارمند دولتم. اداره تا کی باید حق بیمه درمان را به حساب بیمه سلامت بریزد؟",
    )
    message = "اگه اداره‌مون با یه بیمه خصوصی قرارداد داشته باشه چی؟ همه‌ش میره واسه اونا؟"
    assert is_follow_up(message)
    query = run(message, [payroll]).standalone_query
    assert "حساب" in query and "خصوصی" in query and "قرارداد" in query
    assert is_follow_up("And if he had died? Would we have to wait for a court ruling?")
    assert not is_follow_up("اگه قبول نکردن و به توافق نرسیدیم کجا باید شکایت کنم؟")
    assert not is_follow_up("اگر بیمه نداشته باشم و با ماشین کسی تصادف کنم چه می‌شود؟")
    assert not is_follow_up("What if I miss a payment on my policy and then have an accident?")
