"""Visual-order glyphs of one PDF line -> logical-order text.

A PDF draws glyphs where they go on the page; for a right-to-left line the left-most glyph is the
last letter. Plain extractors reverse the line as a *string*, which turns every multi-letter glyph
around (the lam-alef ligature «لا» comes out «ال»: «اسلامی» -> «اسالمی») and every number too
(«۱۳۹۶» -> «۶۹۳۱»). Here the unit is the glyph: the line's glyphs are reversed, each glyph's own
text stays as the font maps it, and runs that are drawn left to right inside a right-to-left line
(numbers with their separators, Latin words with the spaces between them) are put back in their
drawn order, as the Unicode bidi algorithm lays them out.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence

_NUMBER_JOINERS = set("/.,:٫٬-+%٪")


def _kind(unit: str) -> str:
    """'R' right-to-left letter, 'L' Latin letter, 'D' digit, 'N' neutral (space, punctuation)."""
    for ch in unit:
        direction = unicodedata.bidirectional(ch)
        if direction in ("R", "AL"):
            return "R"
        if direction == "L":
            return "L"
        if direction in ("EN", "AN"):
            return "D"
    return "N"


def is_rtl(units: Sequence[str]) -> bool:
    kinds = [_kind(u) for u in units]
    return kinds.count("R") >= max(1, kinds.count("L"))


def logical_order(units: Sequence[str], rtl: bool | None = None) -> str:
    """Logical text of a line given its glyph texts from left to right.

    `rtl` is the paragraph direction (the document's, when known): a Persian line that quotes
    more Latin letters than it has Persian ones is still a right-to-left line. A line without
    any right-to-left letter is left to right whatever the document.
    """
    kinds = [_kind(u) for u in units]
    if "R" not in kinds or not (is_rtl(units) if rtl is None else rtl):
        return "".join(units)
    reversed_units = list(reversed(units))
    kinds = [_kind(u) for u in reversed_units]
    out: list[str] = []
    i = 0
    while i < len(reversed_units):
        if kinds[i] not in ("L", "D"):
            out.append(reversed_units[i])
            i += 1
            continue
        j = _run_end(reversed_units, kinds, i)
        out.extend(reversed(reversed_units[i:j]))
        i = j
    return "".join(out)


def _run_end(units: Sequence[str], kinds: Sequence[str], start: int) -> int:
    """End (exclusive) of the left-to-right run that starts at `start`.

    Digits join across number separators («۱۳۹۶/۵/۸»); Latin words also across spaces and other
    neutrals, as long as the next strong glyph is Latin again.
    """
    end = start + 1
    latin = kinds[start] == "L"
    k = end
    while k < len(units):
        if kinds[k] in ("L", "D"):
            latin = latin or kinds[k] == "L"
            end = k = k + 1
            continue
        if kinds[k] == "R":
            break
        # A neutral: part of the run only if the run continues after it.
        if not latin and units[k] not in _NUMBER_JOINERS:
            break
        k += 1
    return end
