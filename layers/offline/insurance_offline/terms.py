"""The offline provider's word analysis (insurance_agent.analysis.Terms): Persian/English stems, the
spoken register and the bilingual glossary."""

from __future__ import annotations

import re
from functools import lru_cache

from insurance_agent.analysis import FILLER_WORDS
from insurance_agent.text import tokens
from insurance_offline import lexical
from insurance_offline.colloquial import formal_word
from insurance_offline.glossary import ENGLISH_NOISE
from insurance_text import content_terms, stopwords

# Spoken Persian clitics on a word («ماشینمو», «خسارتم», «هزینه‌اش»): stripped for the lookup only.
_CLITIC = re.compile(r"(?:مونو|تونو|شونو|مون|تون|شون|مو|تو|شو|رو|ام|اش|م|ت|ش|و|ه)$")


@lru_cache(maxsize=1)
def _filler_terms() -> frozenset[str]:
    # English auxiliaries, pronouns and fillers (glossary.ENGLISH_NOISE) say nothing of the topic either
    words = f"{' '.join(sorted(FILLER_WORDS))} {ENGLISH_NOISE}"
    return frozenset(content_terms(words)) | frozenset(tokens(words))


def _forms(word: str) -> set[str]:
    """The spellings under which a message word may occur in the corpus vocabulary: its written
    form («میدن» -> «می‌دهند»), without its clitics, and the words documents use for it (the register:
    «ماشین» -> «خودرو», «وسیله نقلیه»; an English word's Persian renderings)."""
    forms = {word, *content_terms(word)}
    if not word.isascii():
        bare = _CLITIC.sub("", word)
        if bare != word and len(bare) >= 3:
            forms |= {bare, *content_terms(bare)}
        for written in formal_word(word):
            forms |= {written, *content_terms(written)}
    for form in list(forms):
        forms |= lexical.word_alternatives(form)
    # «خسارتمو» -> «خسارتم را»: the object marker is in every corpus and says nothing of the word
    return {form for form in forms if form == word or form not in stopwords()}


class LexicalTerms:
    """Terms backed by the stemmer, the spoken register and the bilingual glossary (lexical.py)."""

    def content_terms(self, value: str) -> list[str]:
        return content_terms(value)

    def text_terms(self, value: str) -> frozenset[str]:
        return lexical.text_terms(value)

    def query_concepts(self, value: str) -> list[lexical.Concept]:
        return lexical.query_concepts(value)

    def scope_terms(self, value: str) -> frozenset[str]:
        return frozenset(content_terms(value)) | frozenset(tokens(value))

    def message_words(self, message: str) -> list[frozenset[str]]:
        fillers, stop = _filler_terms(), stopwords()
        words = []
        for word in dict.fromkeys(tokens(message)):
            if word in stop or word in fillers or word.isdigit() or len(word) < 2:
                continue
            forms = _forms(word)
            if forms & fillers or all(form in stop for form in forms - {word}) and len(forms) > 1:
                continue
            words.append(frozenset(forms))
        # Generic words («قیمت», "claim", "documents") are in every insurer's documents and in questions
        # on anything: they say nothing of the topic unless the message has nothing else.
        specific = [forms for forms in words if not forms & lexical.generic_stems()]
        return specific or words


LEXICAL_TERMS = LexicalTerms()
