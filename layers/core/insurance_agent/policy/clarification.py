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
    labels = [set(content_terms(" ".join(filter(None, [o.label, o.title])))) for o in options]
    # Words every option shares ("insurance", the insurer's name) say nothing about which one was meant.
    shared = set.intersection(*labels) if len(labels) > 1 else set()
    scores = [len(asked & (terms - shared)) for terms in labels]
    best = max(scores)
    # One option must be named more clearly than every other; a tie means the user named none.
    if best == 0 or scores.count(best) > 1:
        return None
    return options[scores.index(best)]
