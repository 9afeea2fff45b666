"""Shared shaping of extracted text: article headings, table rows, paragraph joining.

Persian statutes and policy wordings are organised in numbered articles («ماده ۱۲», «تبصره ۲»,
«فصل سوم»). When one stands on a line of its own it is a heading: the chunker then starts a
section there and every chunk carries «ماده ۱۲» in its heading path. An article that starts a
paragraph («ماده۱ـ در این آیین‌نامه ...») stays a paragraph, as in the source.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

_ORDINAL = r"(?:[\d۰-۹٠-٩]+|اول|دوم|سوم|چهارم|پنجم|ششم|هفتم|هشتم|نهم|دهم|[\u0600-\u06ff]+م)"
_ARTICLE = re.compile(
    rf"^(?P<label>(?:ماده|تبصره|فصل|بخش|باب|مبحث|Article|Section|Chapter)\s*(?:\(\s*)?{_ORDINAL}(?:\s*\))?(?:\s*(?:مکرر|الحاقی))?)"
    r"\s*(?:[-ـ–—:.]\s*(?P<rest>.{0,80}))?$"
)
_LEVEL = {"فصل": 0, "بخش": 0, "باب": 0, "Chapter": 0, "مبحث": 1, "Section": 1, "ماده": 2, "Article": 2, "تبصره": 3}
_SENTENCE_END = ("." , "؟", "?", "!", "؛", ";")
_HYPHEN_BREAK = re.compile("(?<=[\u0620-\u064a\u066e-\u06d3\u06fa-\u06ff\u200c])-$")


def article_level(line: str) -> int | None:
    """0 chapter ... 3 note (تبصره) when `line` is only an article label (with a short title)."""
    line = line.strip()
    match = _ARTICLE.match(line)
    if not match or len(line.split()) > 12 or (match.group("rest") or "").endswith(_SENTENCE_END):
        return None
    word = match.group("label").split()[0].rstrip("(")
    for key, level in _LEVEL.items():
        if word.startswith(key):
            return level
    return None


def promote_articles(blocks: Iterable[str]) -> list[str]:
    """Blocks (paragraphs or `#` headings) with stand-alone article labels turned into headings.

    Their depth is one below the deepest document heading seen so far, deeper for a note than
    for its article, so that the heading path reads «… > ماده ۳ > تبصره ۱».
    """
    out: list[str] = []
    depth_of: dict[int, int] = {}  # article level -> heading depth, for the current document heading
    base = 0  # depth of the document's own heading above the articles
    for block in blocks:
        if block.startswith("#"):
            depth = len(block) - len(block.lstrip("#"))
            if article_level(block.lstrip("#").strip()) is None:
                base, depth_of = min(depth, 3), {}
            out.append(block)
            continue
        level = article_level(block) if "\n" not in block else None
        if level is None:
            out.append(block)
            continue
        parents = [d for lvl, d in depth_of.items() if lvl < level]
        depth = min(6, (max(parents) if parents else base) + 1)
        depth_of = {lvl: d for lvl, d in depth_of.items() if lvl < level} | {level: depth}
        out.append("#" * depth + " " + block.strip())
    return out


def table_row(cells: Sequence[str]) -> str | None:
    """One quotable line per table row; None for a row with nothing in it."""
    cleaned = [" ".join(cell.replace("|", "/").split()) for cell in cells]
    if not any(any(ch.isalnum() for ch in cell) for cell in cleaned):
        return None
    return "| " + " | ".join(cleaned) + " |"


def join_lines(lines: Sequence[str]) -> str:
    """The lines of one paragraph as one line: a word broken by a hyphen at a line end is joined."""
    out = ""
    for line in lines:
        line = line.strip()
        if not line:
            continue
        if not out:
            out = line
        elif _HYPHEN_BREAK.search(out):
            out = out[:-1] + line
        elif out.endswith(("(", "[", "«", "\u200c")) or line.startswith((")", "]", "»", ".", "،", ":")):
            out = out + line  # broken inside brackets, before punctuation or at a half-space
        else:
            out = f"{out} {line}"
    return out


def ends_sentence(text: str) -> bool:
    return text.rstrip().endswith(_SENTENCE_END + (":", "："))


def markdown(blocks: Iterable[str]) -> str:
    return "\n\n".join(block for block in blocks if block.strip())
