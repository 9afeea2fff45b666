"""How the deterministic policy compares words, without any NLP package or model provider.

Policy steps (a pick among clarify options, the grade shortcut, repeated-question detection) need
the content terms of a text and the concepts of a query. Which analysis produces them belongs to
the configured model provider: the local provider answers in code, so it brings the Persian
stemmer and its bilingual glossary (roles/local/terms.py); a language-model provider needs no
stemmer, and policy then uses `PlainTerms` below: normalised words without stopwords, matched
exactly. Plain matching only ever finds fewer matches, so with it the shortcuts apply less often
and the model decides instead: conservative, never a confident wrong pick.

Policy modules reach the analysis through `terms()`, so they import no stemmer, no numpy and no
provider code: a node that only runs policy ships none of it.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Protocol

from insurance_agent.config import get_settings
from insurance_agent.errors import ConfigurationError
from insurance_agent.text import normalize, numbers_in, tokens


class Concept(Protocol):
    """One thing a query asks about; covered by a text's terms when one of its wordings is."""

    def covered_by(self, terms: set[str] | frozenset[str]) -> bool: ...


class Terms(Protocol):
    """The word analysis policy code uses (see the module docstring)."""

    def content_terms(self, text: str) -> list[str]: ...

    def text_terms(self, text: str) -> frozenset[str]: ...

    def query_concepts(self, text: str) -> Sequence[Concept]: ...


# Function words of both languages; a short, fixed list (the local provider uses a fuller one).
_STOPWORDS = frozenset(
    normalize(word)
    for word in (
        "و در به از که این آن را با برای تا یا هم نیز اما اگر پس چون ها های هایی ی ای است هست بود شود"
        " می نمی باشد شده کرد کنم کنید کنیم کند من تو او ما شما آنها ایشان یک هر چه همه بر روی"
        " a an the and or of to in on for is are was be by with what which who how does do did my your"
        " i me it this that at as from can about if any there their its will would should much many"
    ).split()
)


@dataclass(frozen=True)
class PlainConcept:
    """A query word, covered by a text that contains the same normalised word."""

    term: str

    def covered_by(self, terms: set[str] | frozenset[str]) -> bool:
        return self.term in terms


class PlainTerms:
    """Normalised words minus stopwords, no stemming: what policy uses with a language-model provider."""

    def content_terms(self, text: str) -> list[str]:
        return [t for t in tokens(text) if t not in _STOPWORDS and (len(t) > 1 or t.isdigit())]

    def text_terms(self, text: str) -> frozenset[str]:
        return frozenset(self.content_terms(text)) | numbers_in(text)

    def query_concepts(self, text: str) -> list[PlainConcept]:
        return [PlainConcept(term) for term in dict.fromkeys(self.content_terms(text))]


#: provider name -> "module:attribute" of its analysis; imported only for the provider in use.
ANALYSES: dict[str, str] = {
    "local": "insurance_agent.roles.local.terms:LEXICAL_TERMS",
    "bedrock": "insurance_agent.policy.terms:PLAIN_TERMS",
    "openai": "insurance_agent.policy.terms:PLAIN_TERMS",
}
PLAIN_TERMS = PlainTerms()


@lru_cache(maxsize=4)
def _analysis(provider: str) -> Terms:
    target = ANALYSES.get(provider.strip().lower())
    if target is None:
        raise ConfigurationError(f"no word analysis for model provider {provider!r}")
    module_name, _, attribute = target.partition(":")
    return getattr(importlib.import_module(module_name), attribute)


def terms() -> Terms:
    """The analysis of the configured model provider (MODEL_PROVIDER)."""
    return _analysis(get_settings().models.provider)


def adds_terms(candidate: str, previous: str) -> bool:
    """Whether searching `candidate` can find anything `previous` could not: it has a term `previous` lacks."""
    analysis = terms()
    return bool(analysis.text_terms(candidate) - analysis.text_terms(previous))


def metadata_text(chunk) -> str:  # noqa: ANN001 - any chunk model with title/product/domain/file_id
    """The words naming a chunk's document: title, product, domain and file id ("expat_health" -> "expat health")."""
    parts = [chunk.title, chunk.product or "", chunk.domain or "", chunk.file_id]
    return " ".join(re.sub(r"[^\w]+|_", " ", part) for part in parts if part)

