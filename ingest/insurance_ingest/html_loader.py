"""A web page -> its main content as Markdown-shaped text, with trafilatura.

trafilatura finds the main content and drops menus, sidebars, footers and cookie banners; it
keeps headings and tables. It also deletes every non-printing character, the half-space (ZWNJ)
among them, which would glue Persian words together («می‌رود» -> «میرود»): the half-space and its
stand-ins are swapped for printing placeholders before extraction and restored after it.
"""

from __future__ import annotations

import re
from pathlib import Path

from insurance_ingest.errors import LoadError
from insurance_ingest.layout import markdown, promote_articles
from insurance_ingest.limits import Limits
from insurance_ingest.model import Extracted

# Printing characters from a Unicode block no Persian or English page uses (Yi syllables).
_PLACEHOLDERS = {"\u200c": "\ua000", "\u200d": "\ua001", "\u00ad": "\ua002", "\u200e": "\ua003", "\u200f": "\ua004"}
_ENTITIES = {"&zwnj;": "\u200c", "&#8204;": "\u200c", "&#x200c;": "\u200c", "&#x200C;": "\u200c", "&zwj;": "\u200d",
             "&shy;": "\u00ad", "&lrm;": "\u200e", "&rlm;": "\u200f"}
_TITLE = re.compile(r"<title[^>]*>(.*?)</title>", re.IGNORECASE | re.DOTALL)
_TABLE_SEPARATOR = re.compile(r"^\|(?:\s*:?-{3,}:?\s*\|)+\s*$")


def load_html(path: Path, limits: Limits, raw: bytes) -> Extracted:
    import trafilatura
    from trafilatura.utils import decode_file

    html = decode_file(raw)
    if not isinstance(html, str):
        raise LoadError(LoadError.ENCODING, "the page's text encoding could not be read")
    for entity, char in _ENTITIES.items():
        html = html.replace(entity, char)
    if any(p in html for p in _PLACEHOLDERS.values()):
        placeholders: dict[str, str] = {}  # the page uses those characters itself: keep it as it is
    else:
        placeholders = _PLACEHOLDERS
    for char, placeholder in placeholders.items():
        html = html.replace(char, placeholder)
    try:
        text = trafilatura.extract(html, output_format="markdown", include_tables=True, include_formatting=True,
                                   include_links=False, include_images=False, include_comments=False,
                                   deduplicate=False, favor_recall=True)
    except Exception as exc:  # noqa: BLE001 - lxml raises many types for one broken page
        raise LoadError(LoadError.CORRUPT, f"not a readable web page ({type(exc).__name__})") from None
    if not text:
        raise LoadError(LoadError.EMPTY, "no main content found on the page")
    for char, placeholder in placeholders.items():
        text = text.replace(placeholder, char)
    if len(text) > limits.text_chars:
        raise LoadError(LoadError.TOO_LARGE, f"more than {limits.text_chars} characters of text")
    blocks = [_tidy(block) for block in re.split(r"\n\s*\n", text)]
    title = _title(html, placeholders)
    return Extracted(text=markdown(promote_articles(b for b in blocks if b)), format="html", title=title)


def _tidy(block: str) -> str:
    lines = [line for line in block.strip().split("\n") if not _TABLE_SEPARATOR.match(line.strip())]
    # Emphasis markers are noise for retrieval and quotation; headings and table pipes stay.
    return "\n".join(re.sub(r"(\*\*|__)(.+?)\1", r"\2", line) for line in lines).strip()


def _title(html: str, placeholders: dict[str, str]) -> str | None:
    match = _TITLE.search(html[:200_000])
    if not match:
        return None
    import html as html_lib

    title = html_lib.unescape(" ".join(match.group(1).split()))
    for char, placeholder in placeholders.items():
        title = title.replace(placeholder, char)
    # "Page title | Site name": the site's name is not the document's title.
    for separator in (" | ", " - ", " — ", " :: "):
        if separator in title:
            title = title.split(separator)[0].strip()
            break
    return title[:300] or None
