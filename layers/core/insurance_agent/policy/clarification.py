"""Recognising a user's pick among the options of the previous clarifying question.

Deterministic and shared by every provider: the nodes use it to route a pick straight back to the
clarified question, scoped to the chosen document.
"""

from __future__ import annotations

from collections.abc import Sequence

from insurance_agent.models.turn import ClarifyOption
from insurance_agent.policy.terms import terms as word_analysis
from insurance_agent.text import tokens

_ORDINALS: dict[int, tuple[str, ...]] = {
    1: ("اول", "اولی", "یکم", "یکمی", "نخست", "first", "1st"),
    2: ("دوم", "دومی", "second", "2nd"),
    3: ("سوم", "سومی", "third", "3rd"),
    4: ("چهارم", "چهارمی", "fourth", "4th"),
}
_LAST = ("آخر", "آخری", "last")
_PICK_FILLER = {
    "گزینه",
    "شماره",
    "مورد",
    "همون",
    "همین",
    "اون",
    "این",
    "یکی",
    "منظورم",
    "بود",
    "هست",
    "است",
    "لطفا",
    "option",
    "number",
    "the",
    "one",
    "please",
    "i",
    "mean",
    "choice",
    "that",
    "no",
    "item",
    "نوع",
}


def pick_option(message: str, options: Sequence[ClarifyOption]) -> ClarifyOption | None:
    """The option of a clarifying question that `message` picks, or None.

    By number ("2", "۲", "گزینه ۲"), ordinal ("دومی", "the second one", "آخری") in a short message,
    or by words that distinguish one option's label/title/domain from the others.
    """
    if not options:
        return None
    words = tokens(message)
    if not words:
        return None
    short = len(words) <= 4 and all(
        word.isdigit() or word in _PICK_FILLER or any(word in forms for forms in _ORDINALS.values()) or word in _LAST
        for word in words
    )
    if short:
        for word in words:
            if word.isdigit() and 1 <= int(word) <= len(options):
                return options[int(word) - 1]
            for number, forms in _ORDINALS.items():
                if word in forms and number <= len(options):
                    return options[number - 1]
            if word in _LAST:
                return options[-1]
    return _pick_by_words(message, options)


def _pick_by_words(message: str, options: Sequence[ClarifyOption]) -> ClarifyOption | None:
    analysis = word_analysis()
    concepts = analysis.query_concepts(message)
    if not concepts:
        return None
    option_terms = [
        analysis.text_terms(" ".join(filter(None, [o.label, o.title, (o.domain or "").replace("_", " ")]))) for o in options
    ]
    scores = []
    for terms in option_terms:
        distinctive = [
            c for c in concepts if c.covered_by(terms) and not all(c.covered_by(other) for other in option_terms)
        ]
        scores.append(len(distinctive))
    best = max(scores)
    if best == 0 or scores.count(best) > 1:
        return None
    chosen = scores.index(best)
    # A pick names the option; a new question that happens to mention it is not a pick.
    on_option = sum(1 for c in concepts if c.covered_by(option_terms[chosen]))
    if on_option * 2 < len(concepts):
        return None
    return options[chosen]
