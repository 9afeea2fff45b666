"""What long-term memory may learn from a turn: durable facts from closed vocabularies only.

Products are the tenant's own: the product ids of the documents this turn retrieved (their front
matter), recognised in the user's words by the id's words or by a word of the document's title that
no other retrieved product's title has (a new insurer's «باربری» or "cyber" as much as «بدنه»).
Family members come from a fixed list. Free user text, and with it any personal data, never
reaches the profile; the PII filter in the store is a second line of defence.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from insurance_agent.text import normalize, split_sentences, tokens

# Words of a title that name no particular product.
_GENERIC_TITLE_WORDS = frozenset(
    "بیمه بیمه‌نامه نامه قانون آیین آیین‌نامه آئین شرایط عمومی خصوصی مصوب اصلاحیه ماده تبصره شرکت طرح "
    "و در از به با برای the of and for insurance policy terms conditions general plan".split()
)
_MIN_WORD = 3
_FAMILY = {
    "spouse": (r"همسر", r"خانمم", r"شوهرم", r"\bwife\b", r"\bhusband\b", r"\bspouse\b"),
    "children": (r"فرزند", r"بچه", r"پسرم", r"دخترم", r"\bchild", r"\bkids?\b", r"\bson\b", r"\bdaughter\b"),
    "parents": (r"پدرم", r"مادرم", r"والدین", r"\bparents?\b", r"\bmother\b", r"\bfather\b"),
}
_OWNERSHIP = (r"دارم", r"خریده ام", r"بیمه ام", r"بیمه نامه ام", r"\bi have\b", r"\bi hold\b", r"\bi bought\b")


def _matches(text: str, patterns: tuple[str, ...]) -> bool:
    return any(re.search(p, text, re.IGNORECASE) for p in patterns)


def product_names(documents: Iterable[dict]) -> dict[str, list[tuple[str, ...]]]:
    """Product id -> the word sequences that name it: the id's words, and each title word that the
    titles of the other products do not have. `documents`: dicts with `product` and `title`."""
    titles: dict[str, set[str]] = {}
    for document in documents:
        product = (document.get("product") or "").strip()
        if not product:
            continue
        words = {w for w in tokens(document.get("title") or "") if len(w) >= _MIN_WORD and not w.isdigit()}
        titles.setdefault(product, set()).update(words - _GENERIC_TITLE_WORDS)
    names: dict[str, list[tuple[str, ...]]] = {}
    for product, words in titles.items():
        others = set().union(*(titles[p] for p in titles if p != product)) if len(titles) > 1 else set()
        own = tuple(
            w for w in tokens(product.replace("_", " ").replace("-", " ")) if len(w) >= 2 and w not in _GENERIC_TITLE_WORDS
        )
        names[product] = ([own] if own else []) + [(word,) for word in sorted(words - others)]
    return names


def _names(sentence: str, words: tuple[str, ...]) -> bool:
    # a whole word or the word with a suffix («بدنه‌ام», "cyber-insurance"), all words in the sentence
    present = tokens(sentence)
    return all(any(token == word or token.startswith(word) for token in present) for word in words)


def extract_facts(message: str, documents: Sequence[dict] = ()) -> dict[str, list[str]]:
    """Products the user says they hold (among the tenant's products in `documents`, the retrieved
    documents' metadata) and family members relevant to coverage."""
    text = normalize(message)
    facts: dict[str, list[str]] = {}
    names = product_names(documents)
    # A product counts as held only when the same sentence says the user has it.
    held = {
        product
        for sentence in split_sentences(text)
        if _matches(sentence, _OWNERSHIP)
        for product, sequences in names.items()
        if any(_names(sentence, words) for words in sequences)
    }
    if held:
        facts["products"] = sorted(held)
    family = [name for name, patterns in _FAMILY.items() if _matches(text, patterns)]
    if family:
        facts["family"] = family
    return facts
