"""The word analysis a provider brings, and the plain one every provider has without an NLP package.

Policy steps (a pick among clarify options, the grade shortcut, repeated-question detection) and the
corpus scope of triage compare words. How words are compared belongs to the configured model
provider (`ModelProvider.terms`): the offline provider answers in code, so it brings the Persian
stemmer, the spoken-register rules and its bilingual glossary (insurance_offline/terms.py); a
language-model provider needs none of them and keeps `PLAIN_TERMS`: normalised words without
stopwords, matched exactly. Plain matching only ever finds fewer matches, so the shortcuts apply
less often and the model decides instead: conservative, never a confident wrong pick.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from insurance_agent.text import normalize, numbers_in, tokens

#: Question words, colloquial endings, greetings and fillers of both languages: they say nothing of
#: what a message is about («چقدره» and «چقدر است» ask the same thing). The one list of them.
FILLER_WORDS = frozenset(
    tokens(
        "چقدر چقدره چقد چنده چند چیه چیست چی چطور چطوره چطوری چجوری کدوم کدومه کدام آیا مگه میشه می‌شود "
        "میشود بشه باشه هست هستش است بود داره دارد دارم داریم کنم کنیم کنید میکنه می‌کند میده می‌دهد "
        "لطفا ممنون سلام خب حالا الان اینجا اونجا یعنی درسته آره نه بله خیر شد شده بگو بگید بگین "
        "please thanks hi hello ok okay yes no what whats how when where which who why is are does do can could "
        "would should tell me know about has have had happen happens happened get gets got will there my i "
        "if it its any need needs needed want"
    )
)

# Function words of both languages; a short, fixed list (the offline provider uses a fuller one).
_STOPWORDS = frozenset(
    normalize(word)
    for word in (
        "و در به از که این آن را با برای تا یا هم نیز اما اگر پس چون ها های هایی ی ای است هست بود شود"
        " می نمی باشد شده کرد کنم کنید کنیم کند من تو او ما شما آنها ایشان یک هر چه همه بر روی"
        " a an the and or of to in on for is are was be by with what which who how does do did my your"
        " i me it this that at as from can about if any there their its will would should much many"
    ).split()
)


class Concept(Protocol):
    """One thing a query asks about; covered by a text's terms when one of its wordings is."""

    def covered_by(self, terms: set[str] | frozenset[str]) -> bool: ...


class Terms(Protocol):
    """How words are compared (see the module docstring)."""

    def content_terms(self, text: str) -> list[str]:
        """The text's words that carry content, in the form they are compared in."""

    def text_terms(self, text: str) -> frozenset[str]:
        """Content terms and figures: what a text offers to a question."""

    def query_concepts(self, text: str) -> Sequence[Concept]:
        """What a query asks about, each with its alternative wordings."""

    def scope_terms(self, text: str) -> frozenset[str]:
        """The terms under which a corpus text makes a message's word in scope."""

    def message_words(self, message: str) -> list[frozenset[str]]:
        """The message's topic words (fillers, stopwords and numbers aside), each as the forms it
        may take in a corpus's `scope_terms`."""


@dataclass(frozen=True)
class PlainConcept:
    """A query word, covered by a text that contains the same normalised word."""

    term: str

    def covered_by(self, terms: set[str] | frozenset[str]) -> bool:
        return self.term in terms


class PlainTerms:
    """Normalised words minus stopwords, no stemming: what a language-model provider uses."""

    def content_terms(self, text: str) -> list[str]:
        return [t for t in tokens(text) if t not in _STOPWORDS and (len(t) > 1 or t.isdigit())]

    def text_terms(self, text: str) -> frozenset[str]:
        return frozenset(self.content_terms(text)) | numbers_in(text)

    def query_concepts(self, text: str) -> list[PlainConcept]:
        return [PlainConcept(term) for term in dict.fromkeys(self.content_terms(text))]

    def scope_terms(self, text: str) -> frozenset[str]:
        return frozenset(tokens(text))

    def message_words(self, message: str) -> list[frozenset[str]]:
        words = dict.fromkeys(self.content_terms(message))
        return [frozenset([word]) for word in words if word not in FILLER_WORDS and not word.isdigit()]


PLAIN_TERMS = PlainTerms()
