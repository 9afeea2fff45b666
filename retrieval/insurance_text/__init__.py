"""Word analysis of Persian and English text: stopwords, stems and content terms.

Shekar's Persian stemmer and stopword list and the Snowball English stemmer, on the normalised text of
`insurance_agent.text`. Shipped with the code that stems (the BM25 encoder of the Retrieve image, the
offline provider's layer and the Triage image), never with the core layer: a Bedrock or OpenAI
deployment's zip functions need none of it.
"""

from __future__ import annotations

from functools import lru_cache

from insurance_agent.text import normalize, tokens


@lru_cache(maxsize=1)
def stopwords() -> frozenset[str]:
    """Persian (shekar's list, minus insurance words it wrongly drops) and English stopwords."""
    from shekar.data import stopwords as persian_stopwords

    keep = {"خطر", "دوم", "اول", "سوم", "سال", "ماه", "روز", "کل", "بیشتر", "کمتر", "حداکثر", "حداقل"}
    persian = {normalize(word) for word in persian_stopwords} - keep
    persian |= {"ها", "های", "هایی", "ی", "ای", "را", "رو", "که", "می", "نمی", "است", "هست", "بود", "شود"}
    # spoken plural possessives after a half-space («اداره‌مون», «ماشین‌تونو»): the written «مان» and
    # «شان» are in shekar's list already
    persian |= {"مون", "تون", "شون", "مونو", "تونو", "شونو"}
    english = {
        "a", "an", "the", "and", "or", "of", "to", "in", "on", "for", "is", "are", "was", "be", "by",
        "with", "what", "which", "who", "how", "does", "do", "did", "my", "your", "i", "me", "it",
        "this", "that", "at", "as", "from", "can", "about", "if", "any", "there", "their", "its",
        "will", "would", "should", "much", "many",
    }
    return frozenset(persian | english)


class _Stemmer:
    """Shekar's Persian stemmer for Persian words, Snowball English for Latin words."""

    def __init__(self) -> None:
        from py_rust_stemmers import SnowballStemmer
        from shekar import Stemmer

        self._persian = Stemmer()
        self._english = SnowballStemmer("english")

    def stem_word(self, word: str) -> str:
        if word.isascii():
            return self._english.stem_word(word)
        stem = self._persian(word)
        return stem or word


@lru_cache(maxsize=1)
def stemmer() -> _Stemmer:
    return _Stemmer()


def content_terms(text: str) -> list[str]:
    """Stemmed tokens without stopwords: the unit of lexical overlap in heuristics and BM25."""
    stop = stopwords()
    stem = stemmer().stem_word
    return [stem(token) for token in tokens(text) if token not in stop and (len(token) > 1 or token.isdigit())]
