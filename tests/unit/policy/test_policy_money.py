"""The money calculator: Persian and Latin digits, currencies kept apart, operands checked against the
chunks they cite, results formatted per language, and its place in the guards and the generate node."""

from decimal import Decimal

import pytest
from insurance_agent.models.chunks import RetrievedChunk
from insurance_agent.models.roles import (
    Calculation,
    CalculationOperand,
    Claim,
    GenerateResult,
)
from insurance_agent.policy.guards import check_draft, number_guard
from insurance_agent.policy.money import (
    CalculationError,
    Currency,
    Quantity,
    apply_calculations,
    compute,
    format_amount,
    parse_quantity,
    quantities,
    run_calculations,
)
from insurance_agent.text import numbers_in


def chunk(chunk_id: str, text: str, title: str = "بیمه درمان تکمیلی") -> RetrievedChunk:
    return RetrievedChunk(chunk_id=chunk_id, file_id="f-" + chunk_id, title=title, text=text, tenant_id="t1")


PREMIUM = chunk("c1", "حق بیمه درمان تکمیلی برای هر نفر در سال ۱۲٬۵۰۰٬۰۰۰ ریال است. فرانشیز ۱۰ درصد است.")
TOMAN = chunk("c2", "هزینه صدور کارت بیمه ۵۰٬۰۰۰ تومان است.")
LIMIT = chunk("c3", "The annual hospital limit is 300,000,000 rials; dental cover costs 1,250.50 USD per year.")
TABLE = chunk("c4", "| طرح | حق بیمه سالانه (ریال) |\n|---|---|\n| طلایی | 18,000,000 |")
SCALE = chunk("c5", "سقف تعهد بستری ۲۰۰ میلیون ریال است.")


def op(value, chunk_id=None, calculation=None, currency=None):
    return CalculationOperand(value=value, chunk_id=chunk_id, calculation=calculation, currency=currency)


def calc(cid, operation, *operands, target=None):
    return Calculation(id=cid, operation=operation, operands=list(operands), target_currency=target)


def run(*calculations, chunks=(PREMIUM, TOMAN, LIMIT, TABLE, SCALE), message="", language="fa"):
    return run_calculations(calculations, chunks, message, language)


# -- reading amounts ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text,amount,currency,percent",
    [
        ("۱۲٬۵۰۰٬۰۰۰ ریال", "12500000", Currency.IRR, False),
        ("12,500,000 rials", "12500000", Currency.IRR, False),
        ("۱۲,۵۰۰,۰۰۰ ريال", "12500000", Currency.IRR, False),  # Arabic yeh, Latin separators
        ("12.500.000 IRR", "12500000", Currency.IRR, False),
        ("۵۰٬۰۰۰ تومان", "50000", Currency.IRT, False),
        ("۲۰۰ میلیون ریال", "200000000", Currency.IRR, False),
        ("3 million tomans", "3000000", Currency.IRT, False),
        ("$1,250.50", "1250.50", Currency.USD, False),
        ("۱۲٫۵ درصد", "12.5", None, True),
        ("10%", "10", None, True),
        ("۳", "3", None, False),
    ],
)
def test_parse_amounts_in_persian_and_latin_digits(text, amount, currency, percent):
    assert parse_quantity(text) == Quantity(Decimal(amount), currency, percent)


def test_a_value_must_state_exactly_one_quantity():
    with pytest.raises(CalculationError):
        parse_quantity("بدون عدد")
    with pytest.raises(CalculationError):
        parse_quantity("۱۰ یا ۲۰ درصد")
    assert [q.amount for q in quantities("۱۲٬۵۰۰٬۰۰۰ ریال و ۹ ماه")] == [Decimal(12500000), Decimal(9)]


def test_results_are_formatted_per_language_and_the_number_guard_reads_both():
    persian = format_amount(Decimal(37500000), "IRR", "fa")
    latin = format_amount(Decimal(37500000), "IRR", "en")
    assert persian == "۳۷٬۵۰۰٬۰۰۰ ریال" and latin == "37,500,000 rials"
    assert numbers_in(persian) == numbers_in(latin) == {"37500000"}
    assert format_amount(Decimal("1250.5"), "USD", "en") == "1,250.50 USD"
    assert format_amount(Decimal("1250.5"), "USD", "fa") == "۱٬۲۵۰٫۵۰ دلار"
    assert format_amount(Decimal("1250.456"), "IRR", "en") == "1,250 rials"  # rials have no minor unit
    assert number_guard("جمع: ۳۷٬۵۰۰٬۰۰۰ ریال", [PREMIUM], calculator_results=[latin]) == []
    assert number_guard("total: 37,500,000 rials", [PREMIUM], calculator_results=[persian]) == []


# -- arithmetic ------------------------------------------------------------------------------------


def test_decimal_arithmetic_only():
    usd = [Quantity(Decimal("0.10"), Currency.USD), Quantity(Decimal("0.20"), Currency.USD)]
    assert compute("add", usd).amount == Decimal("0.30")
    share = compute("percent_of", [Quantity(Decimal("12.5"), percent=True), Quantity(Decimal(1000), Currency.IRR)])
    assert share == Quantity(Decimal("125.000"), Currency.IRR)


def test_add_multiply_percent_and_subtract_with_operands_from_their_chunks():
    total, share, net, both = run(
        calc("total", "multiply", op("۱۲٬۵۰۰٬۰۰۰ ریال", "c1"), op("۳", "message")),
        calc("share", "percent_of", op("۱۰ درصد", "c1"), op("", calculation="total")),
        calc("net", "subtract", op("", calculation="total"), op("", calculation="share")),
        calc("both", "add", op("300,000,000 rials", "c3"), op("۲۰۰ میلیون ریال", "c5")),
        message="برای ۳ نفر چقدر می‌شود؟",
    )
    assert (total.result, total.amount, total.currency, total.error) == ("۳۷٬۵۰۰٬۰۰۰ ریال", "37500000", "IRR", None)
    assert share.result == "۳٬۷۵۰٬۰۰۰ ریال"
    assert net.result == "۳۳٬۷۵۰٬۰۰۰ ریال"
    assert both.result == "۵۰۰٬۰۰۰٬۰۰۰ ریال"


def test_a_figure_without_its_unit_takes_the_currency_its_chunk_states():
    (annual,) = run(calc("x", "multiply", op("18,000,000", "c4", currency="IRR"), op("2", "message")), message="2 نفر")
    assert annual.result == "۳۶٬۰۰۰٬۰۰۰ ریال" and annual.error is None
    (plain,) = run(calc("y", "multiply", op("۱۲٬۵۰۰٬۰۰۰", "c1"), op("2", "message")), message="2 نفر", language="en")
    assert plain.result == "25,000,000 rials"
    (wrong,) = run(calc("z", "multiply", op("18,000,000", "c4", currency="USD"), op("2", "message")), message="2")
    assert "does not appear" in wrong.error


def test_rial_and_toman_are_never_added_without_a_conversion():
    (mixed,) = run(calc("bad", "add", op("۱۲٬۵۰۰٬۰۰۰ ریال", "c1"), op("۵۰٬۰۰۰ تومان", "c2")))
    assert mixed.result is None and "cannot add IRR and IRT" in mixed.error

    rials, total = run(
        calc("rials", "convert", op("۵۰٬۰۰۰ تومان", "c2"), target="IRR"),
        calc("total", "add", op("۱۲٬۵۰۰٬۰۰۰ ریال", "c1"), op("", calculation="rials")),
    )
    assert rials.result == "۵۰۰٬۰۰۰ ریال" and total.result == "۱۳٬۰۰۰٬۰۰۰ ریال"
    (tomans,) = run(calc("t", "convert", op("12,500,000 ریال", "c1"), target="تومان"), language="en")
    assert tomans.result == "1,250,000 tomans"


def test_no_guessed_exchange_rates():
    (dollars,) = run(calc("usd", "convert", op("1,250.50 USD", "c3"), target="IRR"))
    assert dollars.result is None and "no fixed rate" in dollars.error


@pytest.mark.parametrize(
    "calculation,message,error",
    [
        (
            calc("a", "add", op("۱۳٬۵۰۰٬۰۰۰ ریال", "c1"), op("300,000,000 rials", "c3")),
            "",
            "does not appear in chunk c1",
        ),
        (
            calc("b", "add", op("300,000,000 rials", "c1"), op("300,000,000 rials", "c3")),
            "",
            "does not appear in chunk c1",
        ),
        (calc("c", "add", op("۱۲٬۵۰۰٬۰۰۰ ریال", "ghost"), op("300,000,000 rials", "c3")), "", "not retrieved"),
        (calc("d", "add", op("۱۲٬۵۰۰٬۰۰۰ ریال"), op("300,000,000 rials", "c3")), "", "cites no chunk"),
        (calc("e", "multiply", op("۱۲٬۵۰۰٬۰۰۰ ریال", "c1"), op("4", "message")), "برای ۳ نفر", "the user's message"),
        (
            calc("f", "add", op("1,000,000 rials", "message"), op("300,000,000 rials", "c3")),
            "1,000,000 rials",
            "not from",
        ),
        (calc("g", "multiply", op("۱۰ درصد", "c1"), op("3", "message")), "3", "one amount of money"),
        (calc("h", "percent_of", op("۱۲٬۵۰۰٬۰۰۰ ریال", "c1"), op("3", "message")), "3", "a percentage"),
        (calc("i", "add", op("۱۲٬۵۰۰٬۰۰۰ ریال", "c1")), "", "at least two"),
        (calc("j", "add", op("", calculation="later"), op("۱۲٬۵۰۰٬۰۰۰ ریال", "c1")), "", "not an earlier calculation"),
    ],
    ids=[
        "altered",
        "other-chunk",
        "not-retrieved",
        "uncited",
        "count-not-said",
        "money-from-user",
        "count-times-percent",
        "percent-of-count",
        "one-operand",
        "forward-reference",
    ],
)
def test_operands_must_be_in_their_sources(calculation, message, error):
    (result,) = run(calculation, message=message)
    assert result.result is None and error in result.error


def test_a_failed_calculation_fails_the_ones_that_use_it_and_ids_are_unique():
    bad, later, dup = run(
        calc("bad", "add", op("۱۲٬۵۰۰٬۰۰۰ ریال", "c1"), op("۵۰٬۰۰۰ تومان", "c2")),
        calc("later", "multiply", op("", calculation="bad"), op("2", "message")),
        calc("bad", "add", op("۱۲٬۵۰۰٬۰۰۰ ریال", "c1"), op("300,000,000 rials", "c3")),
        message="2",
    )
    assert bad.error and "calculation 'bad' failed" in later.error and "duplicate" in dup.error


def test_the_model_cannot_fill_in_results_itself():
    forged = Calculation(
        id="x",
        operation="add",
        operands=[op("۱۲٬۵۰۰٬۰۰۰ ریال", "c1"), op("۵۰٬۰۰۰ تومان", "c2")],
        result="999",
        amount="999",
    )
    (checked,) = run(forged)
    assert checked.result is None and checked.amount is None and checked.error


# -- guards and the generate node ----------------------------------------------------------------------


def draft(answer, calculations, claims=None, citations=("c1",)):
    return GenerateResult(
        answer=answer,
        claims=claims or [],
        citations=list(citations),
        answered=True,
        confidence=0.9,
        calculations=calculations,
    )


def test_guard_accepts_calculated_figures_and_rejects_computed_ones():
    message = "حق بیمه برای ۳ نفر چقدر است؟"
    requested = [calc("total", "multiply", op("۱۲٬۵۰۰٬۰۰۰ ریال", "c1"), op("۳", "message"))]
    good = apply_calculations(draft("برای ۳ نفر: {{calc:total}}", requested), [PREMIUM], message, "fa")
    assert good.answer == "برای ۳ نفر: ۳۷٬۵۰۰٬۰۰۰ ریال"
    assert check_draft(good, [PREMIUM], calculator_results=good.calculations) == []

    # The same figure computed by the model instead of the calculator is a violation.
    mental = draft("برای ۳ نفر: ۳۷٬۵۰۰٬۰۰۰ ریال", [])
    assert any("37500000" in v for v in check_draft(mental, [PREMIUM], calculator_results=[]))


def test_guard_rejects_a_calculation_whose_operand_is_not_in_its_chunk():
    requested = [calc("total", "add", op("۱۲٬۵۰۰٬۰۰۰ ریال", "c1"), op("۹۹٬۰۰۰٬۰۰۰ ریال", "c5"))]
    result = apply_calculations(draft("جمع: {{calc:total}}", requested), [PREMIUM, SCALE], "", "fa")
    violations = check_draft(result, [PREMIUM, SCALE], calculator_results=result.calculations)
    assert any("calculation total failed" in v and "does not appear in chunk c5" in v for v in violations)
    assert any("{{calc:total}} has no calculated result" in v for v in violations)


def test_apply_calculations_cites_the_operand_chunks_and_fills_claims():
    requested = [calc("sum", "add", op("300,000,000 rials", "c3"), op("۲۰۰ میلیون ریال", "c5"))]
    claims = [Claim(text="Together: {{calc:sum}}", chunk_ids=["c3", "c5"])]
    result = apply_calculations(
        draft("Together: {{calc:sum}}", requested, claims, citations=()), [LIMIT, SCALE], "", "en"
    )
    assert result.citations == ["c3", "c5"]
    assert result.claims[0].text == "Together: 500,000,000 rials" and result.answer == "Together: 500,000,000 rials"
    assert check_draft(result, [LIMIT, SCALE], calculator_results=result.calculations) == []


def test_the_generate_node_runs_the_calculator_before_the_guards(monkeypatch):
    from insurance_agent.models.roles import Intent
    from insurance_agent.models.state import TurnState
    from insurance_agent.models.turn import TurnInput
    from insurance_agent.models.parts import TurnParts
    from insurance_agent.nodes import generate as node

    message = "حق بیمه تکمیلی برای ۳ نفر چقدر است؟"
    proposed = draft(
        "هر نفر ۱۲٬۵۰۰٬۰۰۰ ریال؛ برای ۳ نفر {{calc:t}}.",
        [calc("t", "multiply", op("۱۲٬۵۰۰٬۰۰۰ ریال", "c1"), op("۳", "message"))],
        [Claim(text="هر نفر ۱۲٬۵۰۰٬۰۰۰ ریال", chunk_ids=["c1"])],
    )

    class Provider:
        def generate(self, request):
            assert request.message == message and [c.chunk_id for c in request.chunks] == ["c1"]
            return proposed

    saved = {}
    monkeypatch.setattr(node, "get_provider", lambda: Provider())
    monkeypatch.setattr(node, "parts", lambda state: TurnParts(chunks=[PREMIUM], query=message))
    monkeypatch.setattr(node, "save", lambda state, **values: saved.update(values))
    state = TurnState(
        turn=TurnInput(thread_id="t1", turn_id="u1", user_id="u", tenant_id="t", message=message),
        route=Intent.KNOWLEDGE.value,
        language="fa",
    )
    state = node.run(state)
    stored = saved["draft"].result
    assert saved["draft"].violations == []
    assert [d.rejected_by for d in saved["drafts"].root] == [[]]
    assert stored.answer == "هر نفر ۱۲٬۵۰۰٬۰۰۰ ریال؛ برای ۳ نفر ۳۷٬۵۰۰٬۰۰۰ ریال."
    assert stored.calculations[0].result == "۳۷٬۵۰۰٬۰۰۰ ریال"
    assert state.generate.answered and state.counters.llm_calls == 1
