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


# Figures written in words, in their normalised spellings (ی, ک; a half-space is a space there). Statutes
# write most periods and shares in words («ظرف شصت روز», «پنج درصد») and a model restating them
# writes digits, or the other way round: the number guard compares values, not spellings.
_PERSIAN_NUMBER_WORDS = {
    "صفر": 0, "یک": 1, "دو": 2, "سه": 3, "چهار": 4, "پنج": 5, "شش": 6, "شیش": 6, "هفت": 7, "هشت": 8, "نه": 9,
    "ده": 10, "یازده": 11, "دوازده": 12, "سیزده": 13, "چهارده": 14, "پانزده": 15, "پونزده": 15, "شانزده": 16,
    "شونزده": 16, "هفده": 17, "هیفده": 17, "هجده": 18, "هیجده": 18, "نوزده": 19, "بیست": 20, "سی": 30, "چهل": 40,
    "پنجاه": 50, "شصت": 60, "هفتاد": 70, "هشتاد": 80, "نود": 90, "صد": 100, "یکصد": 100,
    "دویست": 200, "سیصد": 300, "چهارصد": 400, "پانصد": 500, "پونصد": 500, "ششصد": 600, "هفتصد": 700,
    "هشتصد": 800, "نهصد": 900,
}
_ENGLISH_NUMBER_WORDS = {
    "zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9,
    "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15, "sixteen": 16,
    "seventeen": 17, "eighteen": 18, "nineteen": 19, "twenty": 20, "thirty": 30, "forty": 40, "fifty": 50,
    "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90,
}
_NUMBER_WORDS = {**_PERSIAN_NUMBER_WORDS, **_ENGLISH_NUMBER_WORDS}
# A multiplier after a unit ("two hundred", «یک صد» when the half-space of «یک‌صد» became a space).
_HUNDRED_WORDS = {"hundred", "صد"}
#: Scale words, after digits («۲۰۰ میلیون») or words («دو میلیون و پانصد هزار»): here and in policy/money.py.
SCALE_WORDS = {"هزار": 10**3, "یکهزار": 10**3, "میلیون": 10**6, "ملیون": 10**6, "میلیارد": 10**9,
               "thousand": 10**3, "million": 10**6, "billion": 10**9}
_JOINERS = {"و", "and"}
# Words that are a figure only inside a longer number: alone they are mostly "a" and "no" («یک روز»
# is "one day" and "a day"; «نه» is "nine" and "no"; "one" is also a pronoun).
_AMBIGUOUS_ALONE = {"یک", "نه", "one"}
_TENS = {20, 30, 40, 50, 60, 70, 80, 90}
_FIGURE_TOKEN = re.compile(r"\d+(?:[,.]\d+)*|[^\W\d_]+", re.UNICODE)
_SCALED_DIGITS = re.compile(r"\d+(?:[,.]\d+)*(?=\s+(?:%s)(?!\w))" % "|".join(SCALE_WORDS))


def _digits_value(raw: str) -> float | None:
    canonical = next(iter(numbers_in(raw)), None)
    try:
        return float(canonical) if canonical is not None else None
    except ValueError:
        return None


def _figure(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:.6f}".rstrip("0").rstrip(".")


def _figure_words(text: str) -> list[tuple[str, str]]:
    """The words and digit runs of `text`, each with what separates it from the one before, spaces
    and hyphens dropped (a comma or a full stop ends a number: «سه، پنج» is two figures)."""
    normalized = normalize(text)
    words, previous_end = [], 0
    for match in _FIGURE_TOKEN.finditer(normalized):
        words.append((match.group(), normalized[previous_end:match.start()].strip(" -") if words else "^"))
        previous_end = match.end()
    return words


@dataclass(frozen=True)
class Figure:
    """One figure a text states: its value (numbers_in's canonical form), the words that state it, and
    whether they start with digits («۵۰ میلیون») or are all words («شصت»). `lone`: one ambiguous word
    («یک», «نه», "one") or a scale word alone, a figure only where a text is read generously."""

    value: str
    wording: str
    in_digits: bool
    lone: bool


def written_figures(text: str) -> list[Figure]:
    """The figures `text` writes in words («شصت», «دو میلیون و پانصد هزار», "twenty-one") or in digits
    with a scale word («۵۰ میلیون» is 50000000), in reading order. A number's parts fall in value
    («صد و پنج», "one thousand and five"); «سه و پنج» is two figures, and so is «سه، پنج»."""
    words = _figure_words(text)
    found: list[Figure] = []
    index = 0
    while index < len(words):
        value, parts, end = _number_at(words, index)
        if parts:
            first = words[index][0]
            lone = parts == 1 and (first in _AMBIGUOUS_ALONE or first in SCALE_WORDS)
            wording = " ".join(word for word, _ in words[index:end])
            found.append(Figure(_figure(value), wording, first[0].isdigit(), lone))
            index = end
        else:
            index += 1
    return found


def figure_forms(text: str, *, alone: bool = True) -> tuple[set[str], dict[str, str]]:
    """The figures `text` writes in digits (numbers_in's, a digit run and its scale word one figure:
    «۵۰ میلیون» is 50000000, not also 50), and those it writes in words only, each value with its
    first wording («60»: «شصت»); with `alone` false, without the lone ones («یک», «نه», "one")."""
    figures = written_figures(text)
    digits = numbers_in(_SCALED_DIGITS.sub(" ", normalize(text))) | {f.value for f in figures if f.in_digits}
    words: dict[str, str] = {}
    for figure in figures:
        if not figure.in_digits and (alone or not figure.lone):
            words.setdefault(figure.value, figure.wording)
    return digits, words


def _number_at(words: list[tuple[str, str]], start: int) -> tuple[float, int, int]:
    """The number that starts at words[start]: its value, how many words make it, and where it ends."""
    total = group = 0.0
    last = scale = float("inf")  # the last part's value and the last scale's: each next part is smaller
    parts, position, joined = 0, start, False
    while position < len(words):
        word, gap = words[position]
        # "one thousand, five hundred": a comma may follow a scale word inside an English number.
        if parts and gap and not (gap == "," and last == scale and word not in SCALE_WORDS):
            break
        if word in _HUNDRED_WORDS and parts and not joined and 0 < group < 10:
            group *= 100
            last = group
        elif word in _NUMBER_WORDS and (not parts or _NUMBER_WORDS[word] < last and (
                joined or last == scale or last in _TENS and _NUMBER_WORDS[word] < 10)):
            group += _NUMBER_WORDS[word]
            last = _NUMBER_WORDS[word]
        elif word in _HUNDRED_WORDS and not parts:
            group, last = 100.0, 100.0
        elif word in SCALE_WORDS and SCALE_WORDS[word] < scale and (parts or not joined):
            total += (group or 1) * SCALE_WORDS[word]
            group, last = 0.0, float(SCALE_WORDS[word])
            scale = last
        elif word in SCALE_WORDS and parts and not joined and last == scale:  # «هزار میلیارد»: scales multiply
            total *= SCALE_WORDS[word]
            last = scale = float(total)
        elif word[0].isdigit() and not parts and position + 1 < len(words) and not words[position + 1][1] \
                and words[position + 1][0] in SCALE_WORDS and (value := _digits_value(word)) is not None:
            group, last = value, float("inf")
        elif word in _JOINERS and parts and not joined:
            joined = True
            position += 1
            continue
        else:
            break
        joined = False
        parts += 1
        position += 1
    if joined:  # a trailing «و» is not the number's
        position -= 1
    return total + group, parts, position


def figures_in(text: str) -> set[str]:
    """Every figure `text` states, in digits or in words, in numbers_in's canonical form; «یک», «نه»,
    "one" or a scale word alone is no figure."""
    digits, words = figure_forms(text, alone=False)
    return digits | set(words)


def tokens(text: str) -> list[str]:
    """Lower-cased word tokens of the normalised text."""
    return _TOKEN.findall(normalize(text))
