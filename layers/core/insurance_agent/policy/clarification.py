"""Recognising a user's pick among the options of the previous clarifying question.

Deterministic and shared by every provider: the nodes use it to route a pick straight back to the
clarified question, scoped to the chosen document. Only a real pick is a pick: a number or an
ordinal, or a short message whose every word names the option («همون شخص ثالث», "the health one").
A message that says anything else («شخص ثالث رو فسخ کنید», a new question about the same product)
is a new turn, so it goes through triage and the policy checks like any other message; callers run
those checks before asking this module.
"""

from __future__ import annotations

from collections.abc import Sequence

from insurance_agent.models.turn import ClarifyOption
from insurance_agent.policy.provisions import named_part
from insurance_agent.policy.terms import terms as word_analysis
from insurance_agent.text import tokens

_ORDINALS: dict[int, tuple[str, ...]] = {
    1: ("اول", "اولی", "یکم", "یکمی", "نخست", "first", "1st"),
    2: ("دوم", "دومی", "second", "2nd"),
    3: ("سوم", "سومی", "third", "3rd"),
    4: ("چهارم", "چهارمی", "fourth", "4th"),
}
_LAST = ("آخر", "آخری", "last")
# A pick by name is a few words; a longer message is a sentence of its own.
_MAX_PICK_WORDS = 6
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
    if len([w for w in tokens(message) if w not in _PICK_FILLER]) > _MAX_PICK_WORDS:
        return None
    analysis = word_analysis()
    concepts = analysis.query_concepts(message)
    if not concepts:
        return None
    # A passage is picked by the names in its label (document, provision), not by its opening words:
    # a new question shares words with some passage's text far more often than it names one.
    option_terms = [
        analysis.text_terms(" ".join(filter(None, [named_part(o.label), o.title, (o.domain or "").replace("_", " ")])))
        for o in options
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
    # A pick names the option and says nothing else: a message with a word beyond the option's
    # label («فسخ», «فرانشیز») asks something new, even when it names the option too.
    if not all(c.covered_by(option_terms[chosen]) for c in concepts):
        return None
    return options[chosen]
