"""The escalation policy list (ADR-0006 trigger 6) and its lexicons, loaded from configuration.

The policy is a YAML file (packaged default: `policy/data/escalation_policy.yaml`, overridden by
`AGENT_POLICY_FILE`):

    version: 1                     # schema version (optional)
    restricted_intents:            # intents we never automate: disputes, complaints, cancellations...
      - name: claim_dispute
        description: ...
        patterns: {fa: [regex, ...], en: [regex, ...]}   # the user acts or reports their own case
        topics: {fa: [...], en: [...]}                   # optional: words of the intent (appeal, court)
    information_question: {fa: [...], en: [...]}  # optional: the message asks how something works
    action_request: {fa: [...], en: [...]}        # optional: the user asks us to act / states intent
    frustration: {fa: [...], en: [...]}   # explicit dissatisfaction
    handoff: {fa: [...], en: [...]}       # "connect me to a person"
    handoff_topics: {fa: [...], en: [...]}  # optional: bare words ("operator"), not in a question

Asking about a rule is not asking us to act: «مرور زمان شکایت از بیمه چند سال است؟» is answered
from the documents, «می‌خواهم شکایت کنم» is escalated. So an intent's `patterns` (first-person
acts, demands, threats, reports of the user's own case) always match, while its `topics` (the
nouns and verbs of the subject: complaint, appeal, court, cancel) match only when the message is
not an information question: a question form (`information_question`) with no request or stated
intent to act (`action_request`).

Patterns are Python regexes matched with re.IGNORECASE against `normalize(text)`. Both languages'
patterns are tried on every message (users mix languages). The file is validated when it is
loaded, so a bad deployment fails at cold start with ConfigurationError instead of silently never
escalating: unknown keys, empty lists, blank or invalid regexes and duplicate names are rejected.
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError, field_validator, model_validator

from insurance_agent.config import get_settings
from insurance_agent.errors import ConfigurationError
from insurance_agent.text import normalize

DEFAULT_POLICY_FILE = Path(__file__).parent / "data" / "escalation_policy.yaml"
MIN_QUESTION_WORDS = 3

# What a third party says, quoted in the user's words: «بیمارستان میتونه بگه دفترچه‌تو قبول نداریم و
# پذیرشم نکنه؟» asks whether a hospital may refuse; the refusal is the hospital's, not a dispute of
# the user's. The quoted clause runs from the verb of saying to the next clause boundary. First-person
# reports («گفتم قبول ندارم») are the user's own and stay.
_REPORTED_SPEECH = re.compile(
    r"(?<!\w)(?:بگه|بگن|میگه|میگن|می گه|می گن|گفت|گفته|گفتن|گفتند|گفته اند|می گوید|می گویند)(?!\w)[^,.;?!\n]*?(?=\s+و\s|[,.;?!\n]|$)"
)

# Character-level spellings that `normalize` rewrites in the text; applied to the patterns too so a
# pattern written with Arabic ي/ك, Persian digits or a half-space still matches. Only literal
# characters are touched: no regex syntax is affected.
_PATTERN_CHARS = str.maketrans(
    {
        "ي": "ی",
        "ى": "ی",
        "ك": "ک",
        "\u200c": " ",
        "\u200d": " ",
        **{chr(0x06F0 + i): str(i) for i in range(10)},
        **{chr(0x0660 + i): str(i) for i in range(10)},
    }
)


def _compile(patterns: list[str], where: str) -> list[re.Pattern[str]]:
    compiled = []
    for pattern in patterns:
        if not isinstance(pattern, str) or not pattern.strip():
            raise ValueError(f"{where}: blank pattern")
        try:
            regex = re.compile(pattern.translate(_PATTERN_CHARS), re.IGNORECASE)
        except re.error as exc:
            raise ValueError(f"{where}: invalid regex {pattern!r}: {exc}") from exc
        if regex.search(""):
            raise ValueError(f"{where}: pattern {pattern!r} matches the empty string (it would match every message)")
        compiled.append(regex)
    return compiled


class PatternSet(BaseModel):
    """Regexes per language; both lists must be non-empty."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    fa: list[str] = Field(min_length=1)
    en: list[str] = Field(min_length=1)

    _compiled: list[re.Pattern[str]] = PrivateAttr(default_factory=list)

    @model_validator(mode="after")
    def _compile_all(self) -> PatternSet:
        self._compiled = _compile(self.fa, "fa") + _compile(self.en, "en")
        return self

    def search(self, normalized_text: str) -> bool:
        return any(regex.search(normalized_text) for regex in self._compiled)


class RestrictedIntent(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(min_length=1, pattern=r"^[a-z][a-z0-9_]*$")
    description: str = Field(min_length=1)
    patterns: PatternSet
    topics: PatternSet | None = None


class EscalationPolicy(BaseModel):
    """The whole policy file. Construct through `from_file` / `load_policy` to get ConfigurationError."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    version: Literal[1] = 1
    restricted_intents: list[RestrictedIntent] = Field(min_length=1)
    information_question: PatternSet | None = None
    action_request: PatternSet | None = None
    frustration: PatternSet
    handoff: PatternSet
    handoff_topics: PatternSet | None = None

    @field_validator("restricted_intents")
    @classmethod
    def _unique_names(cls, value: list[RestrictedIntent]) -> list[RestrictedIntent]:
        names = [intent.name for intent in value]
        duplicates = sorted({name for name in names if names.count(name) > 1})
        if duplicates:
            raise ValueError(f"duplicate restricted intent names: {', '.join(duplicates)}")
        return value

    @classmethod
    def from_file(cls, path: str | Path) -> EscalationPolicy:
        path = Path(path)
        try:
            raw = yaml.safe_load(path.read_text(encoding="utf-8"))
        except OSError as exc:
            raise ConfigurationError(f"escalation policy file {path} cannot be read: {exc}") from exc
        except yaml.YAMLError as exc:
            raise ConfigurationError(f"escalation policy file {path} is not valid YAML: {exc}") from exc
        return cls.from_mapping(raw, source=str(path))

    @classmethod
    def from_mapping(cls, raw: object, *, source: str = "<mapping>") -> EscalationPolicy:
        if not isinstance(raw, dict):
            raise ConfigurationError(f"escalation policy {source} must be a mapping at the top level")
        try:
            return cls.model_validate(raw)
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(part) for part in error['loc']) or '<root>'}: {error['msg']}" for error in exc.errors()
            )
            raise ConfigurationError(f"escalation policy {source} is invalid: {problems}") from exc

    # -- matching ---------------------------------------------------------------------------------

    def restricted_category(self, text: str) -> str | None:
        """Name of the first restricted intent (file order) whose action patterns match; else the
        first whose topic words match, unless the message only asks about the rule; else None."""
        normalized = normalize(text)
        own = _REPORTED_SPEECH.sub(" ", normalized)
        for intent in self.restricted_intents:
            if intent.patterns.search(own):
                return intent.name
        topical = [intent for intent in self.restricted_intents if intent.topics and intent.topics.search(normalized)]
        if topical and not self._asks_about_rule(normalized):
            return topical[0].name
        return None

    def asks_about_rule(self, text: str) -> bool:
        """An information question ("how long do I have to appeal?") with no request to act."""
        return self._asks_about_rule(normalize(text))

    def requests_action(self, text: str) -> bool:
        """The user asks us to do something or states that they will ("I want to...", «لغو کنید»)."""
        return bool(self.action_request and self.action_request.search(normalize(text)))

    def _asks_about_rule(self, normalized: str) -> bool:
        if len(normalized.split()) < MIN_QUESTION_WORDS:
            return False  # "operator?", "appeal?": too short to be a question about a rule
        if self.information_question is None or not self.information_question.search(normalized):
            return False
        return not (self.action_request and self.action_request.search(normalized))

    def asks_for_human(self, text: str) -> bool:
        """The hand-off lexicon; its bare words ("operator") only outside a question about a rule."""
        normalized = normalize(text)
        if self.handoff.search(normalized):
            return True
        return bool(self.handoff_topics and self.handoff_topics.search(normalized)) and not self._asks_about_rule(
            normalized
        )

    def explicit_frustration(self, text: str) -> bool:
        return self.frustration.search(normalize(text))


def policy_path() -> Path:
    configured = get_settings().policy_file
    return Path(configured) if configured else DEFAULT_POLICY_FILE


@lru_cache(maxsize=4)
def _load(path: str) -> EscalationPolicy:
    return EscalationPolicy.from_file(path)


def load_policy(path: str | Path | None = None) -> EscalationPolicy:
    """The policy in force (configured file or the packaged default), parsed once per process."""
    return _load(str(Path(path) if path is not None else policy_path()))


load_policy.cache_clear = _load.cache_clear  # type: ignore[attr-defined]
