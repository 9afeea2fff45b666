"""User frustration (ADR-0006 trigger 7): explicit dissatisfaction or the user repeating themselves.

Explicit dissatisfaction comes from the policy lexicon. Repetition is a near-duplicate of one of
the user's last three messages: normalised content-term Jaccard >= 0.8, or normalised string
similarity (difflib) >= 0.9. Messages too short to carry a question ("سلام", "ok", "yes") and
option picks ("1", "۲", "the second") are never counted as repetition: users legitimately send
those again and again.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from difflib import SequenceMatcher
from functools import lru_cache

from insurance_agent.policy.escalation import EscalationPolicy, load_policy
from insurance_agent.analysis import FILLER_WORDS
from insurance_agent.policy.terms import terms
from insurance_agent.text import normalize, tokens

REPEAT_WINDOW = 3
JACCARD_THRESHOLD = 0.8
SIMILARITY_THRESHOLD = 0.9
MIN_CONTENT_TERMS = 2
MIN_LETTERS = 8

_PICK_WORDS = {
    "اول",
    "اولی",
    "دوم",
    "دومی",
    "سوم",
    "سومی",
    "چهارم",
    "چهارمی",
    "یکم",
    "گزینه",
    "شماره",
    "مورد",
    "first",
    "second",
    "third",
    "fourth",
    "option",
    "number",
    "the",
    "one",
    "no",
}
_ACK_WORDS = {
    "سلام",
    "ممنون",
    "مرسی",
    "باشه",
    "بله",
    "نه",
    "خیر",
    "اره",
    "آره",
    "اوکی",
    "خداحافظ",
    "متشکرم",
    "ok",
    "okay",
    "yes",
    "no",
    "thanks",
    "thank",
    "you",
    "hi",
    "hello",
    "bye",
    "sure",
    "yep",
    "nope",
}




def _question_terms() -> frozenset[str]:
    return _question_terms_of(terms())


@lru_cache(maxsize=4)
def _question_terms_of(analysis) -> frozenset[str]:  # noqa: ANN001 - a policy.terms.Terms
    # «چقدره» and «چقدر است» ask the same thing: question words and fillers are no part of a question
    return frozenset(analysis.content_terms(" ".join(sorted(FILLER_WORDS)))) | FILLER_WORDS


def _terms(text: str) -> set[str]:
    return set(terms().content_terms(text)) - _question_terms()


def _canonical(text: str) -> str:
    return " ".join(re.findall(r"\w+", normalize(text)))


def is_trivial(message: str) -> bool:
    """Greetings, acknowledgements, option picks and other messages too short to be a repeated question."""
    words = tokens(message)
    if not words or all(word.isdigit() or word in _PICK_WORDS or word in _ACK_WORDS for word in words):
        return True
    letters = sum(char.isalpha() for char in normalize(message))
    return letters < MIN_LETTERS or len(set(terms().content_terms(message))) < MIN_CONTENT_TERMS


def near_duplicate(message: str, previous: str) -> bool:
    if is_trivial(message) or is_trivial(previous):
        return False
    current_terms, previous_terms = _terms(message), _terms(previous)
    union = current_terms | previous_terms
    if union and len(current_terms & previous_terms) / len(union) >= JACCARD_THRESHOLD:
        return True
    return SequenceMatcher(None, _canonical(message), _canonical(previous)).ratio() >= SIMILARITY_THRESHOLD


def repeats_itself(message: str, previous_user_messages: Sequence[str]) -> bool:
    """True when `message` nearly repeats one of the last three earlier user messages (oldest first)."""
    recent = [text for text in previous_user_messages if text][-REPEAT_WINDOW:]
    return any(near_duplicate(message, earlier) for earlier in recent)


def is_frustrated(
    message: str,
    previous_user_messages: Sequence[str] = (),
    policy: EscalationPolicy | None = None,
) -> bool:
    """Explicit dissatisfaction (policy lexicon) or repeated phrasing of a recent message."""
    policy = policy or load_policy()
    return policy.explicit_frustration(message) or repeats_itself(message, previous_user_messages)
