"""Recognising a user's pick among the options of the previous clarifying question."""

from __future__ import annotations

import re

from insurance_agent.models.turn import ClarifyOption
from insurance_agent.text import content_terms, normalize

_ORDINALS = {
    1: ("1", "اول", "اولی", "یکم", "first"),
    2: ("2", "دوم", "دومی", "second"),
    3: ("3", "سوم", "سومی", "third"),
    4: ("4", "چهارم", "چهارمی", "fourth"),
}


def match_option(message: str, options: list[ClarifyOption]) -> ClarifyOption | None:
    """The option the message picks, by number/ordinal or by the words of its label; else None."""
    if not options:
        return None
    text = normalize(message)
    words = re.findall(r"\w+", text)
    if len(words) <= 3:
        for number, forms in _ORDINALS.items():
            if number <= len(options) and (text.strip(" .") in forms or any(w in forms for w in words)):
                return options[number - 1]
    asked = set(content_terms(message))
    if not asked:
        return None
    best, best_overlap = None, 0.0
    for option in options:
        label_terms = set(content_terms(" ".join(filter(None, [option.label, option.title]))))
        if not label_terms:
            continue
        overlap = len(asked & label_terms) / len(label_terms)
        if overlap > best_overlap:
            best, best_overlap = option, overlap
    return best if best_overlap >= 0.5 else None
