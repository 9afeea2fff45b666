"""Sensitive-data filter for long-term memory: nothing that identifies or reaches a person is kept.

Covers Iranian national codes (with checksum), mobile and landline numbers, bank card numbers
(Luhn), IBAN/Sheba numbers, e-mail addresses and street addresses, in Persian or Latin digits.
"""

from __future__ import annotations

import re

from insurance_agent.text import normalize

_EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
_SHEBA = re.compile(r"\bir\s?\d{2}(?:[\s-]?\d){22}\b", re.IGNORECASE)
_IBAN = re.compile(r"\b[a-z]{2}\d{2}(?:[\s-]?[a-z0-9]){11,30}\b", re.IGNORECASE)
_PHONE = re.compile(r"(?<!\d)(?:\+98|0098|0)?[\s-]?9\d{2}[\s-]?\d{3}[\s-]?\d{4}(?!\d)|(?<!\d)0\d{2}[\s-]?\d{8}(?!\d)")
_DIGIT_RUN = re.compile(r"(?<!\d)\d(?:[\s-]?\d){9,18}(?!\d)")
_ADDRESS = re.compile(
    r"(خیابان|کوچه|بلوار|پلاک|میدان|بن بست|طبقه|واحد \d|کد پستی|"
    r"\bstreet\b|\bst\.|\bavenue\b|\bave\.|\broad\b|\balley\b|\bapt\.?\b|\bapartment\b|\bpostal code\b|\bzip\b)",
    re.IGNORECASE,
)


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
    if _ADDRESS.search(text):
        kinds.append("address")
    return sorted(set(kinds))


def is_clean(text: str) -> bool:
    return not find_pii(text)
