"""Local triage: a nearest-exemplar classifier over a multilingual embedding, plus lexicons.

The intent is a k-nearest-neighbour vote over labelled example messages (data/
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
from insurance_agent.policy.escalation import EscalationPolicy, load_policy
from insurance_agent.policy.routing import analyse_message
from insurance_offline.contextualize import is_follow_up, residual_words, slot_of
from insurance_offline.embedding import embed_queries
from insurance_agent.text import detect_language, normalize, tokens
from insurance_text import content_terms
from insurance_agent.text import turn_language as detect_turn_language

EXEMPLARS_FILE = Path(__file__).resolve().parent / "data" / "triage_exemplars.jsonl"


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
        self.texts = [normalize(exemplar.text) for exemplar in self.exemplars]  # as embedded
        self._matrix: np.ndarray | None = None

    @property
    def matrix(self) -> np.ndarray:
        if self._matrix is None:
            self._matrix = embed_queries(self.texts)
        return self._matrix

    @staticmethod
    def embed(text: str) -> np.ndarray:
        return embed_queries([normalize(text) or text])[0]

    def analyse(self, text: str, per_label: int = 3, vector: np.ndarray | None = None) -> Neighbourhood:
        """One embedding of `text` (or `vector`, its embedding), two readings of its neighbourhood."""
        query = self.embed(text) if vector is None else vector
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


POLICY_EXEMPLARS_FILE = EXEMPLARS_FILE.parent / "triage_exemplars_policy.jsonl"
NO_SIGNAL = "none"


class PolicyExemplars:
    """Paraphrase recogniser of the policy signals: labelled messages ("handoff", "frustration",
    a restricted intent's name, or "none" for ordinary questions, including questions about the
    rules that share their words) and, per label, the mean similarity of its `per_label` nearest
    exemplars to a message."""

    def __init__(self, rows: Sequence[tuple[str, str]], per_label: int = 2) -> None:
        if not rows or NO_SIGNAL not in {label for _, label in rows}:
            raise ConfigurationError(f"policy exemplars need examples, including {NO_SIGNAL!r} ones")
        self.rows = list(rows)
        self.per_label = per_label
        self._labels = np.array([label for _, label in self.rows])
        self.texts = [normalize(text) for text, _ in self.rows]  # as embedded
        self._matrix: np.ndarray | None = None

    @property
    def matrix(self) -> np.ndarray:
        if self._matrix is None:
            self._matrix = embed_queries(self.texts)
        return self._matrix

    def scores(self, vector: np.ndarray) -> dict[str, float]:
        similarities = self.matrix @ vector
        result = {}
        for label in dict.fromkeys(self._labels.tolist()):
            values = np.sort(similarities[self._labels == label])[::-1][: self.per_label]
            result[label] = float(values.mean())
        return dict(sorted(result.items(), key=lambda kv: -kv[1]))


def load_policy_exemplars(path: str | Path = POLICY_EXEMPLARS_FILE, names: Sequence[str] = ()) -> PolicyExemplars:
    """{"text", "label"} per line; a label is handoff, frustration, none or a restricted intent in `names`."""
    path = Path(path)
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise ConfigurationError(f"policy exemplars {path} cannot be read: {exc}") from exc
    allowed = {"handoff", "frustration", NO_SIGNAL, *names}
    rows = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            text, label = str(row["text"]).strip(), str(row["label"])
        except (ValueError, KeyError, TypeError) as exc:
            raise ConfigurationError(f"policy exemplars {path}:{number}: {exc}") from exc
        if names and label not in allowed:
            raise ConfigurationError(f"policy exemplars {path}:{number}: unknown label {label!r}")
        rows.append((text, label))
    return PolicyExemplars(rows)


@lru_cache(maxsize=4)
def default_policy_exemplars(names: tuple[str, ...]) -> PolicyExemplars:
    exemplars = load_policy_exemplars(names=names)
    _ = exemplars.matrix
    return exemplars


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
    r"بیمه|پوشش|خسارت|فرانشیز|تعهد|غرامت|دیه|ثالث|بدنه|تکمیلی|درمان|بستری|جراحی|زایمان|تصادف|حادثه|حوادث|ارزیاب|"
    r"آتش ?سوزی|زلزله|سرقت|دوره انتظار|بازخرید|مسافرتی|سرمایه فوت|اقساط|قسط|تمدید|الحاقیه|جبران|زیان|آسیب دید|"
    r"\b(?:insur\w*|polic(?:y|ies)|coverage|covered|covers?\s+(?:for|against|under|the|my)|premiums?|deductibles?|"
    r"claims?|third[- ]party|liability|underwrit\w*|beneficiar\w*|reimburs\w*|hospitali[sz]\w*|outpatient|inpatient|"
    r"surcharge|payout|waiting period|plan|compensat\w*|liab\w*|damaged?|damages|loss|losses|repairs?|"
    r"pays?\s+for|reimburs\w*)\b",
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


SHORT_FOLLOW_UP_WORDS = 6


def _continues(message: str, last: HistoryTurn, in_corpus: bool | None = None) -> bool:
    """A short follow-up of an answered or clarified question ("what about for my wife?", «اون یکی
    چی؟», «در حوادث منجر به فوت چطور؟») is in scope, unless its own words are known to lie outside
    the tenant's corpus and are not about insurance ("and the weather tomorrow?")."""
    if not (last.query.strip() or last.status == "clarify"):
        return False
    if in_corpus and len(tokens(message)) <= SHORT_FOLLOW_UP_WORDS:
        return True  # a short message whose words the tenant's documents use
    if not is_follow_up(message):
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
        paraphrases: PolicyExemplars | None = None,
        paraphrase_margin: float = 0.03,
    ) -> None:
        self._classifier = classifier
        self._policy = policy
        self.gate = gate
        self.handoff_gate = handoff_gate
        self._scope = scope
        self._paraphrases = paraphrases
        self.paraphrase_margin = paraphrase_margin

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

    def paraphrases(self, policy: EscalationPolicy) -> PolicyExemplars:
        if self._paraphrases is None:
            self._paraphrases = default_policy_exemplars(tuple(i.name for i in policy.restricted_intents))
        return self._paraphrases

    def paraphrased_signal(self, message: str, vector: np.ndarray, policy: EscalationPolicy) -> str | None:
        """The policy signal whose exemplars are nearest, by at least `paraphrase_margin` over the
        ordinary questions' ("none"); a restricted intent only when the message is not a question
        about the rule. Catches what no lexicon was written for ("get me your supervisor")."""
        scores = self.paraphrases(policy).scores(vector)
        best = next(iter(scores))
        if best == NO_SIGNAL or scores[best] - scores.get(NO_SIGNAL, 0.0) < self.paraphrase_margin:
            return None
        if best not in ("handoff", "frustration") and policy.asks_about_rule(message):
            return None
        if small_talk(message) and not policy.requests_action(message):
            return None  # greetings, thanks and farewells ask for nothing ("see you later")
        return best

    def classify(
        self, message: str, policy: EscalationPolicy, in_corpus: bool | None = None, vector: np.ndarray | None = None
    ) -> tuple[Intent, float]:
        """The k-NN vote, checked against the lexicons and the tenant's corpus.

        - hand-off needs the policy's hand-off lexicon or a vote of at least `handoff_gate`;
        - small talk needs the small-talk lexicon or a vote of at least `gate`;
        - a message is in scope when the tenant's corpus covers its words (`in_corpus`) or it has a
          word of insurance; in scope, an out-of-scope vote becomes knowledge; out of scope,
          knowledge/account need a vote of at least `gate`;
        - between knowledge and account, first-person possession of a policy decides.
        A vetoed intent gives way to the next one by exemplar similarity, checked the same way.
        """
        neighbourhood = self.classifier.analyse(message, vector=vector)
        votes = neighbourhood.votes
        intent = max(votes, key=votes.get)
        confidence = votes[intent]
        ranked = [label for label, _ in neighbourhood.ranking]
        in_scope = bool(in_corpus) or insurance_talk(message)
        vetoed: set[Intent] = set()
        while True:
            if (
                intent == Intent.HANDOFF_REQUEST
                and not policy.asks_for_human(message)
                and confidence < self.handoff_gate
            ):
                vetoed.add(intent)
            elif intent == Intent.CHITCHAT and not small_talk(message) and (
                confidence < self.gate or self.scope == "corpus" or in_scope
            ):
                # Small talk needs its lexicon when the message may be a question for the documents.
                vetoed.add(intent)
            elif (
                intent in (Intent.KNOWLEDGE, Intent.ACCOUNT)
                and self.scope == "insurance"
                and not in_scope
                and confidence < self.gate
            ):
                vetoed.add(intent)
                intent = Intent.OUT_OF_SCOPE
                confidence = votes.get(intent, 0.0)
                continue
            elif intent == Intent.OUT_OF_SCOPE and in_scope:
                # The tenant's documents speak of it: a question for them, whatever its shape.
                intent, confidence = Intent.KNOWLEDGE, votes.get(Intent.KNOWLEDGE, 0.0)
                break
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
        policy = self.policy
        analysis = request.analysis
        if analysis is None:  # called without the triage node (warm-up, a direct caller)
            language = detect_turn_language(message, request.locale, last.language if last else None)
            analysis = analyse_message(message, history, policy, language.language, language.mixed)

        # Policy first: a message that names an option may still ask us to act ("cancel that one").
        signals = analysis.signals
        # The lexicon checks below read normalised text only: they get the analysis's, normalised once.
        text = analysis.text
        vector = self.classifier.embed(text or message)
        paraphrase = self.paraphrased_signal(text, vector, policy)
        if analysis.picks_option and not signals.any and paraphrase is None:
            intent, confidence = Intent.KNOWLEDGE, 1.0
        else:
            intent, confidence = self.classify(text, policy, request.in_corpus, vector)
            if (
                intent in (Intent.CHITCHAT, Intent.OUT_OF_SCOPE)
                and last is not None
                and _continues(message, last, request.in_corpus)
            ):
                intent, confidence = Intent.KNOWLEDGE, 1.0
        if signals.handoff:
            intent, confidence = Intent.HANDOFF_REQUEST, 1.0
        elif paraphrase == "handoff" and not signals.frustrated:
            intent = Intent.HANDOFF_REQUEST
        category = signals.restricted_category
        if category is None and paraphrase not in (None, "handoff", "frustration"):
            category = paraphrase
        return TriageResult(
            intent=intent,
            restricted=category is not None,
            restricted_category=category,
            frustration=signals.frustrated or paraphrase == "frustration",
            language=analysis.language,
            mixed_language=analysis.mixed_language,
            confidence=round(float(confidence), 4),
        )
