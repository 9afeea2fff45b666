"""Local triage: a nearest-exemplar classifier over a multilingual embedding, plus lexicons.

The intent is a k-nearest-neighbour vote over labelled example messages (roles/data/
triage_exemplars.jsonl, embedded once per process), by cosine similarity of multilingual-e5-small
embeddings; each of the k neighbours weighs exp((similarity - best similarity) / temperature).
The vote is then checked against small lexicons, because a nearest neighbour is easily fooled by
shape ("Translate 'good morning'..." looks like a greeting):

- with AGENT_TOPIC_SCOPE=corpus (a tenant whose documents are not about insurance) there is no
  insurance-word gate, a small-talk vote needs the small-talk lexicon, and an out_of_scope vote
  becomes knowledge: the evidence decides;
- a hand-off vote stands only if the policy's hand-off lexicon agrees or the vote is decisive;
  a small-talk vote only if the small-talk lexicon agrees or the vote is decisive;
  a knowledge/account vote only if the message has an insurance word or the vote is decisive
  (else out_of_scope); a vetoed intent gives way to the next by exemplar similarity;
- between knowledge and account, first-person possession of a policy ("my policy",
  «بیمه‌نامه‌ام») decides: account questions need the user's own records;
- a pick of the options of our own clarifying question is knowledge; so is a follow-up
  ("what about for my wife?") of an insurance question that the vote took for chitchat or out of
  scope (the vote cannot see the history);
- the policy's hand-off lexicon forces handoff_request; its restricted-intent lexicon sets
  `restricted` and the category; explicit dissatisfaction or a near-repeat of a recent message
  (policy/frustration.py) sets `frustration`.

`confidence` is the vote share of the chosen intent, or 1.0 when a deterministic rule decided.
Language (text.turn_language): counted in words of each script; a mixed turn is answered in its
dominant language, a tie or a turn without words ("1", "?") goes to the locale, then to the
previous turn's language.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from insurance_agent.config import get_settings
from insurance_agent.errors import ConfigurationError
from insurance_agent.models.roles import HistoryTurn, Intent, TriageRequest, TriageResult
from insurance_agent.policy.clarification import pick_option
from insurance_agent.policy.escalation import EscalationPolicy, load_policy
from insurance_agent.policy.frustration import is_frustrated
from insurance_agent.roles.local.contextualize import is_follow_up, residual_words, slot_of
from insurance_agent.roles.local.embedding import embed_queries
from insurance_agent.text import content_terms, detect_language, normalize
from insurance_agent.text import turn_language as detect_turn_language

EXEMPLARS_FILE = Path(__file__).resolve().parent.parent / "data" / "triage_exemplars.jsonl"


@dataclass(frozen=True)
class Exemplar:
    text: str
    intent: Intent
    language: str


def load_exemplars(path: str | Path = EXEMPLARS_FILE) -> list[Exemplar]:
    """Labelled examples, one JSON object per line: {"text", "intent", "language"}."""
    path = Path(path)
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise ConfigurationError(f"triage exemplars {path} cannot be read: {exc}") from exc
    exemplars = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            exemplars.append(
                Exemplar(
                    text=str(row["text"]).strip(),
                    intent=Intent(row["intent"]),
                    language=row.get("language") or detect_language(row["text"]),
                )
            )
        except (ValueError, KeyError, TypeError) as exc:
            raise ConfigurationError(f"triage exemplars {path}:{number}: {exc}") from exc
    if not exemplars:
        raise ConfigurationError(f"triage exemplars {path} is empty")
    missing = sorted({intent.value for intent in Intent} - {e.intent.value for e in exemplars})
    if missing:
        raise ConfigurationError(f"triage exemplars {path} have no example of: {', '.join(missing)}")
    return exemplars


@dataclass(frozen=True)
class Neighbourhood:
    """`votes`: share of the k nearest exemplars' weight per intent (sums to 1, best first).
    `ranking`: every intent by the mean similarity of its few nearest exemplars (for fallbacks)."""

    votes: dict[Intent, float]
    ranking: list[tuple[Intent, float]]


class NearestExemplarClassifier:
    """Weighted k-NN over L2-normalised embeddings (cosine = dot product)."""

    def __init__(self, exemplars: Sequence[Exemplar], k: int = 7, temperature: float = 0.05) -> None:
        if not exemplars:
            raise ConfigurationError("the triage classifier needs exemplars")
        self.exemplars = list(exemplars)
        self.k = max(1, min(k, len(self.exemplars)))
        self.temperature = temperature
        self._labels = [exemplar.intent for exemplar in self.exemplars]
        self._matrix: np.ndarray | None = None

    @property
    def matrix(self) -> np.ndarray:
        if self._matrix is None:
            self._matrix = embed_queries([normalize(e.text) for e in self.exemplars])
        return self._matrix

    def analyse(self, text: str, per_label: int = 3) -> Neighbourhood:
        """One embedding of `text`, two readings of its neighbourhood (see Neighbourhood)."""
        query = embed_queries([normalize(text) or text])[0]
        similarities = self.matrix @ query
        nearest = np.argsort(-similarities)[: self.k]
        weights = np.exp((similarities[nearest] - similarities[nearest[0]]) / self.temperature)
        totals: dict[Intent, float] = {}
        for index, weight in zip(nearest, weights, strict=True):
            totals[self._labels[index]] = totals.get(self._labels[index], 0.0) + float(weight)
        norm = sum(totals.values())
        votes = {intent: value / norm for intent, value in sorted(totals.items(), key=lambda kv: -kv[1])}
        by_label: dict[Intent, list[float]] = {}
        for label, similarity in zip(self._labels, similarities, strict=True):
            by_label.setdefault(label, []).append(float(similarity))
        ranking = sorted(
            ((label, float(np.mean(sorted(values, reverse=True)[:per_label]))) for label, values in by_label.items()),
            key=lambda pair: -pair[1],
        )
        return Neighbourhood(votes=votes, ranking=ranking)

    def predict(self, text: str) -> tuple[Intent, float]:
        votes = self.analyse(text).votes
        intent = max(votes, key=votes.get)
        return intent, votes[intent]


@lru_cache(maxsize=1)
def default_classifier() -> NearestExemplarClassifier:
    """The classifier over the packaged exemplars, embedded once per process."""
    classifier = NearestExemplarClassifier(load_exemplars())
    _ = classifier.matrix  # embed now: the cost belongs to cold start, not to a user's turn
    return classifier


# First-person possession of a policy: the question is about the user's own contract (account),
# not about the products in general (knowledge). Matched against normalize(text).
_OWNERSHIP = (
    re.compile(
        r"\bmy\s+(?:[\w-]+\s+){0,3}(?:policy|policies|plan|insurance|coverage|cover|deductible|premium|contract|claim)s?\b"
        r"|\b(?:do|did|have)\s+i\s+(?:have|got|paid|pay)\b|\bam\s+i\s+(?:paying|insured|covered)\b"
        r"|\bi\s+(?:have|hold|bought|purchased)\s+(?:a|an|the|any)?\s*(?:[\w-]+\s+){0,2}(?:policy|policies|insurance|plan)",
        re.IGNORECASE,
    ),
    re.compile(
        r"(?:بیمه|بیمه نامه|قرارداد|پوشش|فرانشیز)(?: [^ ]+){0,3} (?:من|خودم|ام|م)(?= |$|[?!.,])"
        r"|(?:بیمه|نامه|ثالث|عمر|بدنه|تکمیلی|درمان|سالانه|حق بیمه)(?:م|ام)\b"
        r"|(?:به|روی|رو) (?:اسم|نام) (?:من|خودم)"
        r"|\bمن\b(?: [^ ]+){0,4} (?:دارم|داشتم|خریدم|گرفتم|پرداخت کردم)"
    ),
)

# Closed class of small talk: greetings, thanks, farewells, "who/what are you", "how are you".
_SMALL_TALK = re.compile(
    r"سلام|درود|بخیر|خوبی|خوبین|خوبید|چطوری|حالت|حالتون|ممنون|مرسی|متشکر|سپاس|دمت گرم|خداحافظ|خدانگهدار|"
    r"کی هستی|چی هستی|چی هستین|شما کی|اسمت|از دستت|چه کار(?:ی|هایی)? (?:می|بلد)|عالی بود|کارت عالی|"
    r"\b(?:hi|hello|hey|thanks|thank|appreciate|bye|goodbye|morning|evening|afternoon|night|nice to meet|"
    r"how are you|how's it going|what's up|who are you|what are you|what can you do|are you a|see you)\b",
    re.IGNORECASE,
)
# Words that make a message about insurance at all.
_INSURANCE = re.compile(
    r"بیمه|پوشش|خسارت|فرانشیز|تعهد|غرامت|دیه|ثالث|بدنه|تکمیلی|درمان|بستری|جراحی|زایمان|تصادف|حادثه|"
    r"آتش ?سوزی|زلزله|سرقت|دوره انتظار|بازخرید|مسافرتی|سرمایه فوت|اقساط|قسط|تمدید|الحاقیه|"
    r"\b(?:insur\w*|polic(?:y|ies)|coverage|covered|covers?\s+(?:for|against|under|the|my)|premiums?|deductibles?|"
    r"claims?|third[- ]party|liability|underwrit\w*|beneficiar\w*|reimburs\w*|hospitali[sz]\w*|outpatient|inpatient|"
    r"surcharge|payout|waiting period|plan)\b",
    re.IGNORECASE,
)


def owns_policy(text: str) -> bool:
    """Whether the message speaks of the user's own policy ("my policy", «بیمه‌نامه‌ام», «بیمه من»)."""
    normalized = normalize(text)
    return any(pattern.search(normalized) for pattern in _OWNERSHIP)


def small_talk(text: str) -> bool:
    return bool(_SMALL_TALK.search(normalize(text)))


def insurance_talk(text: str) -> bool:
    return bool(_INSURANCE.search(normalize(text)))


def turn_language(message: str, locale: str | None, previous: str | None = None) -> str:
    """The language to answer in (text.turn_language): the dominant one; locale or history on a tie."""
    return detect_turn_language(message, locale, previous).language


def _continues(message: str, last: HistoryTurn) -> bool:
    """A follow-up of an insurance question whose own words (if any) are about insurance or a
    person/vehicle/line of insurance ("what about for my wife?", «اون یکی چی؟»)."""
    if not (last.query.strip() or last.status == "clarify") or not is_follow_up(message):
        return False
    words = residual_words(message)
    return (
        not words
        or insurance_talk(message)
        or any(slot_of(word) for word in words)
        or all(not content_terms(word) for word in words)
    )


class LocalTriager:
    def __init__(
        self,
        classifier: NearestExemplarClassifier | None = None,
        policy: EscalationPolicy | None = None,
        gate: float = 0.75,
        handoff_gate: float = 0.9,
        scope: str | None = None,
    ) -> None:
        self._classifier = classifier
        self._policy = policy
        self.gate = gate
        self.handoff_gate = handoff_gate
        self._scope = scope

    @property
    def scope(self) -> str:
        """"insurance", or "corpus": whatever the tenant's documents cover is a knowledge question."""
        return self._scope or get_settings().policy.topic_scope

    @property
    def classifier(self) -> NearestExemplarClassifier:
        if self._classifier is None:
            self._classifier = default_classifier()
        return self._classifier

    @property
    def policy(self) -> EscalationPolicy:
        return self._policy or load_policy()

    def classify(self, message: str, policy: EscalationPolicy) -> tuple[Intent, float]:
        """The k-NN vote, checked against the lexicons.

        - hand-off needs the policy's hand-off lexicon or a vote of at least `handoff_gate`;
        - small talk needs the small-talk lexicon or a vote of at least `gate`;
        - knowledge/account need an insurance word or a vote of at least `gate`, else out of scope;
        - between knowledge and account, first-person possession of a policy decides.
        A vetoed intent gives way to the next one by exemplar similarity, checked the same way.
        """
        neighbourhood = self.classifier.analyse(message)
        votes = neighbourhood.votes
        intent = max(votes, key=votes.get)
        confidence = votes[intent]
        ranked = [label for label, _ in neighbourhood.ranking]
        vetoed: set[Intent] = set()
        while True:
            if (
                intent == Intent.HANDOFF_REQUEST
                and not policy.asks_for_human(message)
                and confidence < self.handoff_gate
            ):
                vetoed.add(intent)
            elif intent == Intent.CHITCHAT and not small_talk(message) and (
                confidence < self.gate or self.scope == "corpus"
            ):
                # Under the corpus scope any question may be a knowledge question: small talk needs its lexicon.
                vetoed.add(intent)
            elif (
                intent in (Intent.KNOWLEDGE, Intent.ACCOUNT)
                and self.scope == "insurance"
                and not insurance_talk(message)
                and confidence < self.gate
            ):
                vetoed.add(intent)
                intent = Intent.OUT_OF_SCOPE
                confidence = votes.get(intent, 0.0)
                continue
            else:
                break
            remaining = [label for label in ranked if label not in vetoed] or [Intent.OUT_OF_SCOPE]
            intent = remaining[0]
            confidence = votes.get(intent, 0.0)  # a fallback is only as sure as the vote for it
        if intent == Intent.OUT_OF_SCOPE and self.scope == "corpus":
            # No topic is out of scope a priori: retrieval and the evidence gates decide (and escalate).
            intent = Intent.KNOWLEDGE
        if intent in (Intent.KNOWLEDGE, Intent.ACCOUNT):
            owned = owns_policy(message)
            if owned != (intent == Intent.ACCOUNT):
                intent = Intent.ACCOUNT if owned else Intent.KNOWLEDGE
        return intent, confidence

    def __call__(self, request: TriageRequest) -> TriageResult:
        message = request.message
        history = request.history
        last = history[-1] if history else None
        language = detect_turn_language(message, request.locale, last.language if last else None)
        policy = self.policy

        if last is not None and last.status == "clarify" and pick_option(message, last.options) is not None:
            intent, confidence = Intent.KNOWLEDGE, 1.0
        else:
            intent, confidence = self.classify(message, policy)
            if intent in (Intent.CHITCHAT, Intent.OUT_OF_SCOPE) and last is not None and _continues(message, last):
                intent, confidence = Intent.KNOWLEDGE, 1.0
        if policy.asks_for_human(message):
            intent, confidence = Intent.HANDOFF_REQUEST, 1.0

        category = policy.restricted_category(message)
        frustrated = is_frustrated(message, [turn.message for turn in history], policy)
        return TriageResult(
            intent=intent,
            restricted=category is not None,
            restricted_category=category,
            frustration=frustrated,
            language=language.language,
            mixed_language=language.mixed,
            confidence=round(float(confidence), 4),
        )
