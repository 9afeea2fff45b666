"""What kind of sentence can answer a question at all: checks the extractive generate applies to a
quote before it may answer (they only ever make it abstain, never make it answer).

- A count or a date ("چند", «چه سالی», "how many", "what year") is answered by a sentence with a
  number in it (digits or number words), not by one that merely shares the question's words.
- "Why" («چرا», «به چه دلیل») is answered by a sentence that gives a reason or a purpose.
- A negated question («کدام شهر را فتح نکرد؟», "what does it not cover?") is answered by a
  sentence that negates or excludes something, not by an affirmative one on the same topic.
- "What/who is X?" is answered from the document about X, by a sentence whose subject is X (X among
  its first words), or, when X names a role in the document's subject ("the founder of Toyota"),
  by a sentence of that document that names all of X: a passing mention elsewhere defines nothing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from insurance_agent.lexical import Concept, text_terms
from insurance_agent.text import normalize, tokens

_COUNT_OR_DATE = re.compile(
    r"چند|چه سال|کدام سال|کدوم سال|چه تاریخ|چه قرن|کدام قرن|چه دهه|"
    r"\bhow many\b|\bwhat year\b|\bwhich year\b|\bin what year\b|\bwhat date\b|\bwhich century\b"
)
_NUMBER_WORD = re.compile(
    r"(?<!\w)(?:یک|دو|سه|چهار|پنج|شش|هفت|هشت|ده|یازده|دوازده|سیزده|چهارده|پانزده|شانزده|هفده|هجده|نوزده|"
    r"بیست|سی|چهل|پنجاه|شصت|هفتاد|هشتاد|نود|صد|دویست|سیصد|چهارصد|پانصد|ششصد|هفتصد|هشتصد|نهصد|هزار|میلیون|"
    r"میلیارد|نخست|اول|دوم|سوم)(?:م|مین|ین)?(?!\w)|"
    r"\b(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty|thirty|forty|fifty|hundred|"
    r"thousand|million|billion|first|second|third|fourth|fifth|once|twice|dozen)\b"
)
_NEGATED_WORD = re.compile(
    r"^(?:نمی|نیست|نیستند|نبود|نبودند|ندارد|نداره|ندارند|نداشت|نداشتند|نداشته|نکرد|نکرده|نکردند|نشد|نشده|"
    r"نشدند|نباشد|نباید|نخواهد|نتوانست|نمیشه|نمیکنه|نمیده)"
)
_WHY = re.compile(r"چرا|به چه (?:دلیل|علت)|علت|دلیل|\bwhy\b|\bwhat (?:is|was) the reason\b")
# A sentence that gives a reason or a purpose.
_BECAUSE = re.compile(
    r"زیرا|چون|چرا که|به دلیل|به علت|به خاطر|بخاطر|دلیل|علت|باعث|سبب|موجب|از آنجا که|از این رو|بنابراین|"
    r"برای اینکه|تا |هدف|\bbecause\b|\bdue to\b|\bsince\b|\bso that\b|\bin order to\b|\breason\b|\bcaused?\b"
)
_NEGATION_EN = re.compile(r"\b(?:not|never|no|without|excluded?|exclusions?|except)\b|n't\b")
# Markers of a sentence that negates or excludes: "بدون", «فاقد», «استثنا», «غیر» ...
_NEGATION_MARKERS = re.compile(r"(?<!\w)(?:بدون|فاقد|مگر|جز|به جز|غیر|استثنا\w*|مستثنی)(?!\w)")
_DEFINITION_FA = re.compile(
    r"^(?P<subject>.+?)\s+(?:چیست|چیه|چی است|چه است|چه چیزی است|کیست|کیه|کی است|کی بود|کی هست|"
    r"چه کسی است|چه کسی بود|یعنی چه|یعنی چی)\s*[?!.]*$"
)
_DEFINITION_EN = re.compile(r"^(?:what|who)\s+(?:is|are|was|were)\s+(?:an?\s+|the\s+)?(?P<subject>[\w\s-]+?)\s*\??$")
_SUBJECT_WORDS = 3
_MAX_DEFINED_WORDS = 3


@dataclass(frozen=True)
class QuestionShape:
    needs_number: bool = False
    needs_reason: bool = False
    negated: bool = False
    # The question's own negated verbs: a sentence with one of them negates the same thing.
    negations: frozenset[str] = frozenset()
    # The concepts of X in "what/who is X?" (None for any other question).
    defines: tuple[Concept, ...] | None = None


def negated_words(text: str, vocabulary: frozenset[str] = frozenset()) -> frozenset[str]:
    """The negated verbs of `text`: known negative forms, and «ن» + a word the evidence uses without it
    («نجنگید» when the evidence says «جنگید»)."""
    found = set()
    for word in tokens(text):
        if _NEGATED_WORD.match(word) or (
            word.startswith("ن") and len(word) >= 5 and word[1:] in vocabulary and word not in vocabulary
        ):
            found.add(word)
    return frozenset(found)


def is_negated(text: str, vocabulary: frozenset[str] = frozenset()) -> bool:
    return bool(negated_words(text, vocabulary)) or bool(_NEGATION_EN.search(normalize(text)))


def question_shape(query: str, concepts: list[Concept], evidence_words: frozenset[str]) -> QuestionShape:
    """The shape of `query`; `evidence_words` are the plain words of the retrieved chunks."""
    normalized = normalize(query)
    defines = None
    match = _DEFINITION_FA.match(normalized) or _DEFINITION_EN.match(normalized)
    if match:
        subject = text_terms(match.group("subject"))
        own = tuple(c for c in concepts if c.stems & subject or any(a <= subject for a in c.alternatives))
        if own and len(tokens(match.group("subject"))) <= _MAX_DEFINED_WORDS:
            defines = own
    return QuestionShape(
        needs_number=bool(_COUNT_OR_DATE.search(normalized)),
        needs_reason=bool(_WHY.search(normalized)),
        negated=is_negated(query, evidence_words),
        negations=negated_words(query, evidence_words),
        defines=defines,
    )


def has_number(text: str) -> bool:
    normalized = normalize(text)
    return bool(re.search(r"\d", normalized) or _NUMBER_WORD.search(normalized))


def negates(text: str, negations: frozenset[str] = frozenset()) -> bool:
    """Whether `text` negates or excludes something (or uses one of the question's negated verbs)."""
    normalized = normalize(text)
    return (
        is_negated(normalized)
        or bool(_NEGATION_MARKERS.search(normalized))
        or bool(negations & frozenset(tokens(normalized)))
    )


def fits(shape: QuestionShape, unit: str, context: str, topic_terms: frozenset[str]) -> bool:
    """Whether a quote `unit` (with its local `context`) can answer a question of this shape.

    `topic_terms`: the terms naming the unit's document and section (title, product, heading).
    """
    if shape.needs_number and not has_number(unit):
        return False
    if shape.needs_reason and not _BECAUSE.search(normalize(f"{context}\n{unit}")):
        return False
    if shape.negated and not negates(f"{context}\n{unit}", shape.negations):
        return False
    if shape.defines is not None:
        named = [concept.covered_by(topic_terms) for concept in shape.defines]
        opening = text_terms(" ".join(tokens(unit)[: _SUBJECT_WORDS + 1]))
        own = text_terms(unit)
        if not (
            all(named)  # the document (or section) about X
            or all(concept.covered_by(opening) for concept in shape.defines)  # X is the sentence's subject
            # "who is the founder of <document's subject>?": the sentence names all of it
            or (any(named) and all(concept.covered_by(own | topic_terms) for concept in shape.defines))
        ):
            return False
    return True
