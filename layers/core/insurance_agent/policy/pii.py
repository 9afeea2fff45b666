"""Sensitive data: detection (the long-term memory filter) and masking (everything stored or logged).

Covers Iranian national codes (with checksum), mobile and landline numbers, bank card numbers
(Luhn), IBAN/Sheba numbers, e-mail addresses and street addresses, in Persian or Latin digits.
`mask_pii` replaces each finding with a fixed placeholder such as `[phone]`; it is idempotent.
"""

from __future__ import annotations

import re

from insurance_agent.text import normalize

# The local part is bounded (64 characters, RFC 5321's limit): unbounded, the search restarted at
# every character of a long word run and rescanned the rest of it (quadratic: a 20,000-letter run
# took about 2 s); bounded, each character is scanned at most 64 times from the left, and a domain
# only after an "@" (linear). mask_pii extends a match to the start of an over-long local part.
_EMAIL = re.compile(r"[\w.+-]{1,64}@[\w-]+(?:\.[\w-]+)+")
_EMAIL_LOCAL_CHAR = re.compile(r"[\w.+-]")
_SHEBA = re.compile(r"\bir\s?\d{2}(?:[\s-]?\d){22}\b", re.IGNORECASE)
_IBAN = re.compile(r"\b[a-z]{2}\d{2}(?:[\s-]?[a-z0-9]){11,30}\b", re.IGNORECASE)
_PHONE = re.compile(r"(?<!\d)(?:\+98|0098|0)?[\s-]?9\d{2}[\s-]?\d{3}[\s-]?\d{4}(?!\d)|(?<!\d)0\d{2}[\s-]?\d{8}(?!\d)")
_DIGIT_RUN = re.compile(r"(?<!\d)\d(?:[\s-]?\d){9,18}(?!\d)")
# The street words; only part of the patterns below, never matched alone.
_ADDRESS_WORD = (
    r"(خیابان|کوچه|بلوار|پلاک|میدان|بن بست|طبقه|واحد|کد پستی|"
    r"\bstreet\b|\bst\.|\bavenue\b|\bave\.|\broad\b|\balley\b|\bapt\.?\b|\bapartment\b|\bpostal code\b|\bzip\b)"
)
# A street word alone is not an address: customers of a motor insurer write «تو خیابان تصادف کردم»,
# «پلاکشو برنداشتم», "hit on the road". What locates a home is a number with it: «پلاک ۱۲», «کوچه ۵»,
# «واحد ۳», "apartment 4", «کد پستی من …» (a number after the word, at most one word between) or
# "12 Baker Street" (the number before it).
_NUMBER_AFTER = re.compile(
    _ADDRESS_WORD + r"(?:\s+[^\W\d]+)?\s*(?:no\.?\s*|#\s*|شماره\s*)?[:：]?\s*\d", re.IGNORECASE
)
_NUMBER_BEFORE = re.compile(r"\d+\w*\s+(?:[^\W\d]+\s+){0,3}$")


def _national_code_ok(digits: str) -> bool:
    if len(digits) != 10 or len(set(digits)) == 1:
        return False
    check = int(digits[9])
    total = sum(int(digits[i]) * (10 - i) for i in range(9)) % 11
    return check == (total if total < 2 else 11 - total)


def _luhn_ok(digits: str) -> bool:
    if not 13 <= len(digits) <= 19:
        return False
    total = 0
    for index, char in enumerate(reversed(digits)):
        value = int(char)
        if index % 2:
            value = value * 2 - 9 if value > 4 else value * 2
        total += value
    return total % 10 == 0


def find_pii(text: str) -> list[str]:
    """Kinds of sensitive data present in `text` (empty when clean)."""
    text = normalize(text)
    kinds = []
    if _EMAIL.search(text):
        kinds.append("email")
    if _SHEBA.search(text) or _IBAN.search(text):
        kinds.append("iban")
    if _PHONE.search(text):
        kinds.append("phone")
    for run in _DIGIT_RUN.findall(text):
        digits = re.sub(r"\D", "", run)
        if _national_code_ok(digits):
            kinds.append("national_code")
        elif _luhn_ok(digits):
            kinds.append("card")
    if _address_spans(text.translate(_DIGITS)):
        kinds.append("address")
    return sorted(set(kinds))


def is_clean(text: str) -> bool:
    return not find_pii(text)


# Persian and Arabic-Indic digits map one-to-one onto Latin ones, so spans found in the mapped copy
# are spans of the original text.
_DIGITS = str.maketrans("۰۱۲۳۴۵۶۷۸۹٠١٢٣٤٥٦٧٨٩", "01234567890123456789")
# An address runs from its keyword to the end of the clause (bounded, so a long message keeps the rest).
_ADDRESS_SPAN = re.compile(_ADDRESS_WORD + r"[^.!?؟\n]{0,80}", re.IGNORECASE)


def _address_spans(mapped: str) -> list[tuple[int, int]]:
    """(start, end) of each address in `mapped` (Latin digits): a street word's clause that numbers a
    place, from the number before the word when there is one ("12 Baker Street")."""
    spans = []
    for match in _ADDRESS_SPAN.finditer(mapped):
        before = _NUMBER_BEFORE.search(mapped, max(0, match.start() - 40), match.start())
        if before is None and not _NUMBER_AFTER.search(match.group(0)):
            continue
        spans.append((before.start() if before else match.start(), match.end()))
    return spans


def mask_pii(text: str) -> str:
    """`text` with every detected national code, phone, card, IBAN/Sheba, e-mail and address masked."""
    if not text:
        return text
    mapped = text.translate(_DIGITS)
    spans: list[tuple[int, int, str]] = []
    floor = 0
    for match in _EMAIL.finditer(mapped):
        start = match.start()
        while start > floor and _EMAIL_LOCAL_CHAR.match(mapped, start - 1):
            start -= 1
        spans.append((start, match.end(), "email"))
        floor = match.end()
    for pattern, kind in ((_SHEBA, "iban"), (_IBAN, "iban"), (_PHONE, "phone")):
        spans += [(m.start(), m.end(), kind) for m in pattern.finditer(mapped)]
    for match in _DIGIT_RUN.finditer(mapped):
        digits = re.sub(r"\D", "", match.group(0))
        if _national_code_ok(digits):
            spans.append((match.start(), match.end(), "national_code"))
        elif _luhn_ok(digits):
            spans.append((match.start(), match.end(), "card"))
    spans += [(start, end, "address") for start, end in _address_spans(mapped)]
    if not spans:
        return text
    out: list[str] = []
    position = 0
    for start, end, kind in sorted(spans):
        if start < position:  # overlapping findings: the first one already covers it
            if end > position:
                position = end
            continue
        out.append(text[position:start])
        out.append(f"[{kind}]")
        position = end
    out.append(text[position:])
    return "".join(out)


def mask_strings(value: object) -> object:
    """A JSON-like value with mask_pii applied to every string in it."""
    if isinstance(value, str):
        return mask_pii(value)
    if isinstance(value, list):
        return [mask_strings(item) for item in value]
    if isinstance(value, dict):
        return {key: mask_strings(item) for key, item in value.items()}
    return value
