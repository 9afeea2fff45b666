"""Persian and English text handling shared by ingestion, retrieval, the model roles and the guards.

One normalisation is used everywhere (index time and query time), so that the same words always
produce the same terms: Arabic ي/ك become Persian ی/ک, diacritics and tatweel go, Persian and
Arabic digits become Latin digits, and the half-space (ZWNJ) and its look-alikes become a plain
space for matching (display text keeps its ZWNJ).
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from typing import Literal

ZWNJ = "\u200c"
_CHAR_MAP = str.maketrans(
    {
        "ي": "ی",
        "ى": "ی",
        "ئ": "ی",
        "ك": "ک",
        "ة": "ه",
        "ۀ": "ه",
        "أ": "ا",
        "إ": "ا",
        "ٱ": "ا",
        "ؤ": "و",
        "ـ": None,  # tatweel
        "\u200d": ZWNJ,  # zero-width joiner used by mistake for the half-space
        "\u200e": None,
        "\u200f": None,
        "\u00ad": ZWNJ,  # soft hyphen, another half-space stand-in
        "\u00a0": " ",
        "٬": ",",  # Arabic thousands separator
        "٫": ".",  # Arabic decimal separator
        "،": ",",
        "؛": ";",
        "؟": "?",
        **{chr(0x06F0 + i): str(i) for i in range(10)},  # Persian digits
        **{chr(0x0660 + i): str(i) for i in range(10)},  # Arabic-Indic digits
    }
)
_DIACRITICS = re.compile("[\u064b-\u065f\u0670\u06d6-\u06ed]")
_SPACES = re.compile(r"[ \t\u2000-\u200b\u202f\u205f\u3000]+")
_PERSIAN_CHAR = re.compile("[\u0600-\u06ff\ufb50-\ufdff\ufe70-\ufeff]")
_LATIN_CHAR = re.compile(r"[A-Za-z]")
_TOKEN = re.compile(r"[\w]+", re.UNICODE)
_NUMBER = re.compile(r"(?<![\w.])\d+(?:[,.]\d+)*(?![\w])")
_SENTENCE_END = re.compile(r"(?<=[.!?؟;])\s+|\n+")

# Persian suffixes users write detached with a space instead of the half-space.
_DETACHED_SUFFIX = re.compile(r"(?<=[\u0600-\u06ff]) (ها|های|هایی|ی|ای|ام|ات|اش|تر|ترین|مان|تان|شان)(?=\s|$|[^\w])")
# The verbal prefix "می"/"نمی" written detached or joined, as a half-space form.
_DETACHED_PREFIX = re.compile(r"(?<![\w])(ن?می) (?=[\u0600-\u06ff])")


# A direction mark (U+200E/U+200F) inside a Persian word stands in for the half-space in text from word
# processors («بیمه» RLM «نامه»): dropped, it would glue two words into one that matches neither.
_MARK_IN_WORD = re.compile("(?<=[\u0600-\u06ff])[\u200e\u200f]+(?=[\u0600-\u06ff])")


class Normalized(str):
    """Text already in `normalize`'s form: normalising it again returns it as it is, so a message
    normalised once by a node is not normalised again by each check it is passed to."""

    __slots__ = ()


def normalize(text: str, *, keep_zwnj: bool = False) -> str:
    """Canonical form of `text` for matching: one spelling per word, Latin digits, single spaces."""
    if type(text) is Normalized and not keep_zwnj:
        return text
    text = _MARK_IN_WORD.sub(ZWNJ, unicodedata.normalize("NFKC", text)).translate(_CHAR_MAP)
    text = _DIACRITICS.sub("", text)
    text = _SPACES.sub(" ", text)
    text = re.sub(f" ?{ZWNJ}+ ?", ZWNJ, text)
    text = _DETACHED_PREFIX.sub(lambda m: m.group(1) + ZWNJ, text)
    text = _DETACHED_SUFFIX.sub(lambda m: ZWNJ + m.group(1), text)
    if keep_zwnj:
        return text.strip().lower()
    return Normalized(text.replace(ZWNJ, " ").strip().lower())


_DISPLAY_MAP = str.maketrans({"ي": "ی", "ى": "ی", "ك": "ک", "\u00ad": ZWNJ})
_LOOSE_MARK = re.compile("[\u200e\u200f](?![\u0600-\u06ff])|(?<![\u0600-\u06ff])[\u200e\u200f]")


def display_text(text: str) -> str:
    """Source text as shown to a user: Arabic ي/ك/ى in their Persian forms, direction marks between
    words dropped, a soft hyphen (a half-space stand-in, as in `normalize`) shown as the half-space.
    Words, digits and punctuation are kept exactly, and so is a mark inside a word (it stands in for
    the half-space there, and dropped it would join two words): a quote stays a quote and still
    matches its source."""
    return re.sub(f"{ZWNJ}{{2,}}", ZWNJ, _LOOSE_MARK.sub("", text.translate(_DISPLAY_MAP)))


def detect_language(text: str) -> str:
    """'fa' when Persian letters dominate, else 'en' (digits and punctuation do not count)."""
    persian = len(_PERSIAN_CHAR.findall(text))
    latin = len(_LATIN_CHAR.findall(text))
    return "en" if latin > persian else "fa"


# Words of two or more letters of each script, counted on normalised text (digits are Latin there).
_PERSIAN_WORD = re.compile("[\u0620-\u064a\u0671-\u06d3\u06d5\u06fa-\u06ff]{2,}")
_LATIN_WORD = re.compile(r"[A-Za-z]{2,}")


@dataclass(frozen=True)
class TurnLanguage:
    """`mix`: the scripts the turn is written in ("none" for "1" or "?"); `language`: the one to answer in."""

    mix: Literal["fa", "en", "mixed", "none"]
    language: Literal["fa", "en"]

    @property
    def mixed(self) -> bool:
        return self.mix == "mixed"


def _explicit(code: str | None) -> str | None:
    code = (code or "").split("-")[0].split("_")[0].lower()
    return code if code in ("fa", "en") else None


def turn_language(text: str, locale: str | None = None, previous: str | None = None) -> TurnLanguage:
    """The language of a user's turn, and the one to answer it in.

    Counted in words of each script: a mixed turn is answered in its dominant language; a tie, or a
    turn without words ("2", "?"), goes to the explicit locale, then to the previous turn's
    language, then to the letter count (Persian when nothing else decides).
    """
    normalized = normalize(text)
    persian = len(_PERSIAN_WORD.findall(normalized))
    latin = len(_LATIN_WORD.findall(normalized))
    mix = "none" if not (persian or latin) else "mixed" if persian and latin else "fa" if persian else "en"
    if persian != latin:
        return TurnLanguage(mix, "fa" if persian > latin else "en")
    fallback = _explicit(locale) or _explicit(previous)
    if fallback is None:
        fallback = detect_language(text) if any(char.isalpha() for char in text) else "fa"
    return TurnLanguage(mix, fallback)


def split_sentences(text: str) -> list[str]:
    """Sentences and list items of a chunk, stripped of Markdown bullets and heading marks."""
    parts = []
    for piece in _SENTENCE_END.split(text):
        piece = re.sub(r"^\s*(?:[#>*\-|]+|\d+[.)])\s*", "", piece).strip(" |")
        if len(piece) > 1:
            parts.append(piece)
    return parts


def numbers_in(text: str) -> set[str]:
    """Every number in `text` in canonical form: Latin digits, thousands separators removed."""
    found = set()
    for raw in _NUMBER.findall(normalize(text)):
        canonical = raw.replace(",", "")
        if canonical.count(".") > 1:
            canonical = raw.replace(".", "").replace(",", "")
        canonical = canonical.rstrip(".")
        if "." in canonical:
            canonical = canonical.rstrip("0").rstrip(".")
        found.add(canonical.lstrip("0") or "0")
    return found


def tokens(text: str) -> list[str]:
    """Lower-cased word tokens of the normalised text."""
    return _TOKEN.findall(normalize(text))
