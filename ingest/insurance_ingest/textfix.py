"""Canonical display text for what a loader extracted: what reaches chunking.

Every loader ends here, so Markdown, PDF, DOCX, HTML and OCR text all arrive in one form: NFC,
Arabic presentation forms replaced by the letters they draw (the lam-alef ligature becomes «لا»,
in that order), bidi control characters dropped (a direction mark inside a Persian word stands in
for the half-space there and becomes one), ZWNJ kept, digits kept as written, whitespace tidied.
"""

from __future__ import annotations

import re
import unicodedata

ZWNJ = "\u200c"
# Explicit embeddings, overrides and isolates, and the Arabic letter mark: layout hints only.
_BIDI_CONTROLS = re.compile("[\u202a-\u202e\u2066-\u2069\u061c]")
_ARABIC = "\u0600-\u06ff"
# LRM/RLM between two Persian letters: a word processor's half-space; elsewhere a layout hint.
_MARK_IN_WORD = re.compile(f"(?<=[{_ARABIC}])[\u200e\u200f]+(?=[{_ARABIC}])")
_MARKS = re.compile("[\u200e\u200f]")
# Soft hyphen and zero-width joiner are half-space stand-ins inside Persian words.
_HALF_SPACE_STANDIN = re.compile(f"(?<=[{_ARABIC}])[\u00ad\u200d]+(?=[{_ARABIC}\u200c])|(?<=[{_ARABIC}\u200c])[\u00ad\u200d]+(?=[{_ARABIC}])")
_PRESENTATION = re.compile("[\ufb50-\ufdff\ufe70-\ufeff]+")
_ZWNJ_RUN = re.compile(f" *{ZWNJ}[{ZWNJ} ]*")
_SPACES = re.compile(r"[ \t\u00a0\u2000-\u200b\u202f\u205f\u3000]+")
_BLANK_LINES = re.compile(r"\n{3,}")
_STRAY_SOFT_HYPHEN = re.compile("\u00ad")


# Fonts shape Persian ی and ک with the Arabic letters' initial and medial forms (the glyphs are the
# same), so a PDF's presentation forms name Arabic ي/ك where the writer typed Persian letters.
_PERSIAN_LETTERS = str.maketrans({"ي": "ی", "ك": "ک"})


def _unpresent(match: re.Match[str]) -> str:
    # NFKC only on presentation forms: applied to the whole text it would also rewrite digits,
    # fractions and compatibility letters that the document means as written.
    return unicodedata.normalize("NFKC", match.group(0)).translate(_PERSIAN_LETTERS)


def clean_text(text: str, *, tidy_spaces: bool = True) -> str:
    """The canonical display form of extracted text (see the module docstring).

    `tidy_spaces=False` keeps each line's spacing (Markdown authored by hand: indentation means
    something there); characters are fixed either way.
    """
    text = unicodedata.normalize("NFC", text.replace("\r\n", "\n").replace("\r", "\n"))
    text = _PRESENTATION.sub(_unpresent, text)
    text = _BIDI_CONTROLS.sub("", text)
    text = _MARK_IN_WORD.sub(ZWNJ, text)
    text = _MARKS.sub("", text)
    text = _HALF_SPACE_STANDIN.sub(ZWNJ, text)
    text = _STRAY_SOFT_HYPHEN.sub("", text)
    text = text.replace("\ufeff", "").replace("\x00", "")
    # A half-space next to a space is a typing slip: the space is the word boundary the writer saw.
    text = _ZWNJ_RUN.sub(lambda m: " " if " " in m.group(0) else ZWNJ, text)
    if not tidy_spaces:
        return text.strip()
    lines = [_SPACES.sub(" ", line).strip() for line in text.split("\n")]
    return _BLANK_LINES.sub("\n\n", "\n".join(lines)).strip()
