"""What long-term memory may learn from a turn: durable facts from fixed vocabularies only.

Facts are chosen from closed lists (products, family members), so free user text, and with it any
personal data, never reaches the profile; the PII filter in the store is a second line of defence.
"""

from __future__ import annotations

import re

from insurance_agent.text import normalize, split_sentences

_PRODUCTS = {
    "third_party": (r"شخص ثالث", r"third[- ]party"),
    "car_body": (r"بدنه", r"car body", r"comprehensive car"),
    "supplementary_health": (r"تکمیلی", r"درمان", r"supplementary health"),
    "life_savings": (r"بیمه عمر", r"life insurance", r"savings"),
    "home_fire": (r"آتش سوزی", r"home insurance", r"fire insurance"),
    "travel": (r"مسافرت", r"سفر", r"travel"),
    "expat_health": (r"expat", r"foreign resident"),
}
_FAMILY = {
    "spouse": (r"همسر", r"خانمم", r"شوهرم", r"\bwife\b", r"\bhusband\b", r"\bspouse\b"),
    "children": (r"فرزند", r"بچه", r"پسرم", r"دخترم", r"\bchild", r"\bkids?\b", r"\bson\b", r"\bdaughter\b"),
    "parents": (r"پدرم", r"مادرم", r"والدین", r"\bparents?\b", r"\bmother\b", r"\bfather\b"),
}
_OWNERSHIP = (r"دارم", r"خریده ام", r"بیمه ام", r"بیمه نامه ام", r"\bi have\b", r"\bi hold\b", r"\bi bought\b")


def _matches(text: str, patterns: tuple[str, ...]) -> bool:
    return any(re.search(p, text, re.IGNORECASE) for p in patterns)


def extract_facts(message: str) -> dict[str, list[str]]:
    """Products the user says they hold and family members relevant to coverage."""
    text = normalize(message)
    facts: dict[str, list[str]] = {}
    # A product counts as held only when the same sentence says the user has it.
    held = {
        name
        for sentence in split_sentences(text)
        if _matches(sentence, _OWNERSHIP)
        for name, patterns in _PRODUCTS.items()
        if _matches(sentence, patterns)
    }
    if held:
        facts["products"] = sorted(held)
    family = [name for name, patterns in _FAMILY.items() if _matches(text, patterns)]
    if family:
        facts["family"] = family
    return facts
