"""The money calculator: the only place where the agent does arithmetic on money (ADR-0006).

A draft that needs a total, a difference, a multiple or a percentage asks for a calculation
(`GenerateResult.calculations`) and writes the placeholder `{{calc:<id>}}` where the figure goes.
Each operand quotes a value from the chunk it cites (a count or a percentage may come from the
user's own message, or an operand may be an earlier calculation's result); the calculator checks
that the value really is in that source, computes with Decimal, formats the result in the answer's
language and substitutes it for the placeholder.

Amounts are read with Persian or Latin digits, thousands separators ("12,500,000", «۱۲٬۵۰۰٬۰۰۰»)
and scale words («۲۰۰ میلیون ریال», "3 million"). Currencies are kept apart: adding rials to
tomans is an error unless a `convert` turns one into the other (1 toman = 10 rials, the only fixed
rate; no other conversion is offered, because any other rate would be a guess).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from enum import Enum

from insurance_agent.models.chunks import RetrievedChunk
from insurance_agent.models.roles import MESSAGE_SOURCE, Calculation, CalculationOperand, Claim, GenerateResult
from insurance_agent.text import SCALE_WORDS, normalize

PLACEHOLDER = re.compile(r"\{\{\s*calc\s*:\s*([A-Za-z0-9_-]{1,32})\s*\}\}")


class Currency(str, Enum):
    IRR = "IRR"
    IRT = "IRT"  # toman
    USD = "USD"
    EUR = "EUR"
    GBP = "GBP"
    AED = "AED"


# Words and signs naming each currency, matched on normalize(text) (lower case, Persian spelling).
_CURRENCY_WORDS: dict[Currency, str] = {
    Currency.IRR: r"ریال|rials?\b|\birr\b|﷼",
    Currency.IRT: r"تومان|تومن|tomans?\b|\birt\b",
    Currency.USD: r"دلار|dollars?\b|\busd\b|\$",
    Currency.EUR: r"یورو|euros?\b|\beur\b|€",
    Currency.GBP: r"پوند|pounds? sterling\b|\bgbp\b|£",
    Currency.AED: r"درهم|dirhams?\b|\baed\b",
}
_CURRENCY_PATTERNS = {currency: re.compile(words) for currency, words in _CURRENCY_WORDS.items()}
_LABELS = {
    "fa": {"IRR": "ریال", "IRT": "تومان", "USD": "دلار", "EUR": "یورو", "GBP": "پوند", "AED": "درهم"},
    "en": {"IRR": "rials", "IRT": "tomans", "USD": "USD", "EUR": "EUR", "GBP": "GBP", "AED": "AED"},
}
# Minor units kept in a result: rials and tomans have none in practice.
_DECIMALS = {Currency.IRR: 0, Currency.IRT: 0}
_SCALES = SCALE_WORDS
_PERCENT = r"%|٪|درصد|percent\b|per cent\b"
_UNIT = "|".join([_PERCENT, *_CURRENCY_WORDS.values()])
_SCALE = "|".join(_SCALES)
_QUANTITY = re.compile(
    rf"(?P<pre>\$|€|£|\b(?:usd|eur|gbp|aed|irr|irt)\b)?\s*"
    r"(?<![\d.,])(?P<num>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d{1,3}(?:\.\d{3}){2,}|\d+(?:\.\d+)?)(?![\d])"
    rf"(?:\s*(?P<scale>(?:{_SCALE})(?:\s+(?:{_SCALE}))?))?"
    rf"(?:\s*(?P<unit>{_UNIT}))?"
)
_PERSIAN_DIGITS = str.maketrans("0123456789,.", "۰۱۲۳۴۵۶۷۸۹٬٫")
# The fixed rule: one toman is ten rials.
_RIALS_PER_TOMAN = Decimal(10)


class CalculationError(ValueError):
    """Why a calculation cannot be done; the text becomes a guard violation."""


@dataclass(frozen=True)
class Quantity:
    amount: Decimal
    currency: Currency | None = None
    percent: bool = False

    @property
    def is_money(self) -> bool:
        return self.currency is not None and not self.percent

    @property
    def is_count(self) -> bool:
        return self.currency is None and not self.percent


def currency_of(word: str | None) -> Currency | None:
    """The currency a code or word names ("IRR", «تومان», "$"), else None."""
    if not word:
        return None
    text = normalize(word)
    if text.upper() in Currency.__members__:
        return Currency[text.upper()]
    for currency, pattern in _CURRENCY_PATTERNS.items():
        if pattern.search(text):
            return currency
    return None


def _number(raw: str) -> Decimal:
    if raw.count(".") > 1:  # "12.500.000": dots as thousands separators
        raw = raw.replace(".", "")
    return Decimal(raw.replace(",", ""))


def quantities(text: str) -> list[Quantity]:
    """Every amount, count or percentage in `text`, in reading order."""
    found = []
    for match in _QUANTITY.finditer(normalize(text)):
        try:
            amount = _number(match.group("num"))
        except InvalidOperation:
            continue
        for word in (match.group("scale") or "").split():
            amount *= _SCALES[word]
        unit = match.group("unit") or ""
        percent = bool(re.fullmatch(_PERCENT, unit))
        currency = None if percent else currency_of(unit) or currency_of(match.group("pre"))
        found.append(Quantity(amount, currency, percent))
    return found


def parse_quantity(text: str) -> Quantity:
    """The one quantity `text` states (an operand's value); CalculationError when none or several."""
    found = quantities(text)
    if len(found) != 1:
        raise CalculationError(f"{text!r} must state exactly one amount, count or percentage")
    return found[0]


def format_amount(amount: Decimal, currency: Currency | str | None = None, language: str = "fa") -> str:
    """`amount` with thousands separators (Persian digits for fa, Latin for en) and the currency's label."""
    currency = Currency(currency) if currency else None
    if currency is not None:
        places = _DECIMALS.get(currency, 2)
        amount = amount.quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_UP)
        if places and amount == amount.to_integral_value():
            amount = amount.quantize(Decimal(1))
    text = f"{amount.normalize() if currency is None else amount:,f}"
    if language == "fa":
        text = text.translate(_PERSIAN_DIGITS)
    label = _LABELS["fa" if language == "fa" else "en"][currency.value] if currency else ""
    return f"{text} {label}".strip()


def _mentions(text: str, currency: Currency) -> bool:
    return bool(_CURRENCY_PATTERNS[currency].search(normalize(text)))


def _source_quantity(operand: CalculationOperand, source: str, label: str) -> Quantity:
    """The operand's quantity, checked against its source text: the same figure must be stated there
    (as a percentage if the operand is one, in the same currency when the source names it)."""
    quantity = parse_quantity(operand.value)
    declared = currency_of(operand.currency) if operand.currency else None
    if operand.currency and declared is None:
        raise CalculationError(f"unknown currency {operand.currency!r}")
    if declared and quantity.currency and declared != quantity.currency:
        raise CalculationError(f"{operand.value!r} is not in {declared.value}")
    for stated in quantities(source):
        if stated.amount != quantity.amount or stated.percent != quantity.percent:
            continue
        currency = stated.currency or quantity.currency or declared
        if quantity.currency and stated.currency and quantity.currency != stated.currency:
            continue
        if declared and stated.currency and declared != stated.currency:
            continue
        if currency is not None and stated.currency is None and not _mentions(source, currency):
            continue  # the figure is there, but nothing there says it is in that currency
        return Quantity(quantity.amount, currency, quantity.percent)
    raise CalculationError(f"{operand.value!r} does not appear in {label}")


def _money_pair(a: Quantity, b: Quantity, operation: str) -> Currency:
    if not (a.is_money and b.is_money):
        raise CalculationError(f"{operation} needs amounts of money with their currency")
    if a.currency != b.currency:
        raise CalculationError(
            f"cannot {operation} {a.currency.value} and {b.currency.value}: convert one of them first"
        )
    return a.currency


def compute(operation: str, operands: Sequence[Quantity], target: Currency | None = None) -> Quantity:
    """One operation on checked operands (Decimal arithmetic only)."""
    if operation == "add":
        if len(operands) < 2:
            raise CalculationError("add needs at least two amounts")
        currency = operands[0].currency
        for other in operands[1:]:
            currency = _money_pair(operands[0], other, "add")
        return Quantity(sum((q.amount for q in operands), Decimal(0)), currency)
    if operation == "subtract":
        if len(operands) != 2:
            raise CalculationError("subtract needs exactly two amounts")
        return Quantity(operands[0].amount - operands[1].amount, _money_pair(*operands, "subtract"))
    if operation in ("multiply", "percent_of"):
        if len(operands) != 2:
            raise CalculationError(f"{operation} needs exactly two operands")
        money = [q for q in operands if q.is_money]
        factor = [q for q in operands if (q.percent if operation == "percent_of" else q.is_count)]
        if len(money) != 1 or len(factor) != 1:
            kind = "a percentage" if operation == "percent_of" else "a count"
            raise CalculationError(f"{operation} needs one amount of money and {kind}")
        amount = money[0].amount * factor[0].amount
        if operation == "percent_of":
            amount /= Decimal(100)
        return Quantity(amount, money[0].currency)
    if operation == "convert":
        if len(operands) != 1 or not operands[0].is_money:
            raise CalculationError("convert needs exactly one amount of money")
        source = operands[0].currency
        if target == source:
            return operands[0]
        if (source, target) == (Currency.IRR, Currency.IRT):
            return Quantity(operands[0].amount / _RIALS_PER_TOMAN, Currency.IRT)
        if (source, target) == (Currency.IRT, Currency.IRR):
            return Quantity(operands[0].amount * _RIALS_PER_TOMAN, Currency.IRR)
        raise CalculationError(
            f"no fixed rate from {source.value} to {target.value if target else 'an unnamed currency'}; "
            "only rials and tomans convert (1 toman = 10 rials)"
        )
    raise CalculationError(f"unknown operation {operation!r}")


def run_calculations(
    calculations: Iterable[Calculation], chunks: Iterable[RetrievedChunk], message: str = "", language: str = "fa"
) -> list[Calculation]:
    """The calculations with `result`/`amount`/`currency` filled in, or `error` saying why not.

    Operands are checked against the chunks retrieved this turn (by id), the user's message, or an
    earlier calculation of the list; a failed calculation fails every one that uses it.
    """
    by_id = {chunk.chunk_id: chunk for chunk in chunks}
    done: dict[str, Quantity | None] = {}
    filled = []
    for calculation in calculations:
        calculation = calculation.model_copy(update={"result": None, "amount": None, "currency": None, "error": None})
        try:
            if calculation.id in done:
                raise CalculationError(f"duplicate calculation id {calculation.id!r}")
            operands = [_operand(operand, by_id, message, done) for operand in calculation.operands]
            target = currency_of(calculation.target_currency) if calculation.target_currency else None
            if calculation.target_currency and target is None:
                raise CalculationError(f"unknown currency {calculation.target_currency!r}")
            value = compute(calculation.operation, operands, target)
        except CalculationError as error:
            done.setdefault(calculation.id, None)
            filled.append(calculation.model_copy(update={"error": str(error)}))
            continue
        done[calculation.id] = value
        currency = value.currency.value if value.currency else None
        filled.append(
            calculation.model_copy(
                update={
                    "result": format_amount(value.amount, currency, language),
                    "amount": format(value.amount.normalize(), "f"),
                    "currency": currency,
                }
            )
        )
    return filled


def _operand(
    operand: CalculationOperand, chunks: dict[str, RetrievedChunk], message: str, done: dict[str, Quantity | None]
) -> Quantity:
    if operand.calculation:
        if operand.calculation not in done:
            raise CalculationError(f"calculation {operand.calculation!r} is not an earlier calculation")
        earlier = done[operand.calculation]
        if earlier is None:
            raise CalculationError(f"calculation {operand.calculation!r} failed")
        return earlier
    if operand.chunk_id == MESSAGE_SOURCE:
        quantity = _source_quantity(operand, message, "the user's message")
        if quantity.is_money:
            raise CalculationError("amounts of money must come from the evidence, not from the user's message")
        return quantity
    if not operand.chunk_id:
        raise CalculationError(f"operand {operand.value!r} cites no chunk")
    chunk = chunks.get(operand.chunk_id)
    if chunk is None:
        raise CalculationError(f"operand {operand.value!r} cites chunk {operand.chunk_id}, not retrieved this turn")
    return _source_quantity(operand, f"{chunk.title}\n{chunk.text}", f"chunk {operand.chunk_id}")


def substitute(text: str, calculations: Iterable[Calculation]) -> str:
    """`text` with each `{{calc:<id>}}` of a successful calculation replaced by its formatted result."""
    results = {c.id: c.result for c in calculations if c.result is not None}
    return PLACEHOLDER.sub(lambda m: results.get(m.group(1), m.group(0)), text)


def apply_calculations(
    draft: GenerateResult, chunks: Sequence[RetrievedChunk], message: str, language: str
) -> GenerateResult:
    """The draft with its calculations run, their results in the text, and their source chunks cited.

    Failed calculations keep their placeholder and carry `error`: `check_draft` turns both into
    violations, so such a draft never reaches the user.
    """
    if not draft.calculations:
        return draft
    calculations = run_calculations(draft.calculations, chunks, message, language)
    sources = [
        operand.chunk_id
        for calculation in calculations
        for operand in calculation.operands
        if operand.chunk_id and operand.chunk_id != MESSAGE_SOURCE
    ]
    return draft.model_copy(
        update={
            "calculations": calculations,
            "answer": substitute(draft.answer, calculations),
            "claims": [
                Claim(text=substitute(claim.text, calculations), chunk_ids=claim.chunk_ids) for claim in draft.claims
            ],
            "citations": list(dict.fromkeys([*draft.citations, *sources])),
        }
    )


def calculation_violations(text: str, calculations: Iterable[Calculation]) -> list[str]:
    """Failed calculations, and placeholders left in `text` without a result."""
    calculations = list(calculations)
    violations = [f"calculation {c.id} failed: {c.error}" for c in calculations if c.error]
    known = {c.id for c in calculations if c.result is not None}
    for name in dict.fromkeys(PLACEHOLDER.findall(text)):
        if name not in known:
            violations.append(f"placeholder {{{{calc:{name}}}}} has no calculated result")
    return violations
