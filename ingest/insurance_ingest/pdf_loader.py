"""PDF -> Markdown-shaped text, from the glyphs and their positions (pdfplumber / pdfminer.six).

Chosen on measurement (docs/ingest.md): pypdf, pdfminer.six's and pdfplumber's own text output,
pdftotext and PDFium all turn a right-to-left line around as a string (digits and the lam-alef
ligature come out reversed) or leave it in visual order. pdfplumber gives each glyph with its text,
position, size and font, so lines are rebuilt here glyph by glyph (`bidi.logical_order`), and the
layout tells what a string cannot:

- a glyph of zero advance drawn as a space is the half-space (ZWNJ) some writers emit;
- lines repeated in the top or bottom margin of most pages (running headers, footers) and bare
  page numbers there are dropped;
- lines set larger than the body text, or bold lines standing alone, are headings, by size rank;
- ruled tables become one `| cell | cell |` line per row, cells in reading order;
- a page without a text layer is rendered and read by tesseract (`ocr.py`), with a warning.
"""

from __future__ import annotations

import re
import statistics
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from insurance_ingest import ocr
from insurance_ingest.isolation import heartbeat
from insurance_ingest.bidi import is_rtl, logical_order
from insurance_ingest.errors import LoadError
from insurance_ingest.layout import ends_sentence, join_lines, markdown, promote_articles, table_row
from insurance_ingest.limits import Limits
from insurance_ingest.model import Extracted

_PAGE_NUMBER = re.compile(r"^\W*(?:صفحه|page|Page|ص)?\s*[\d۰-۹٠-٩]{1,5}(?:\s*(?:از|of|/|-)\s*[\d۰-۹٠-٩]{1,5})?\W*$")
_DIGITS = re.compile(r"[\d۰-۹٠-٩]+")
_BRACKETS = set("()[]{}«»")
MARGIN = 0.09  # share of the page height at top and bottom where running headers and footers live
MIN_TEXT_CHARS = 16  # fewer letters than this on a page: no text layer


@dataclass
class Line:
    text: str
    top: float
    bottom: float
    x0: float
    x1: float
    size: float
    bold: bool
    page: int
    kind: str = "text"  # text | table | ocr
    rows: list[str] = field(default_factory=list)


def load_pdf(path: Path, limits: Limits) -> Extracted:
    import pdfplumber

    try:
        pdf = pdfplumber.open(path)
    except Exception as exc:  # noqa: BLE001 - pdfminer raises many types for one broken file
        raise _classify(exc) from None
    with pdf:
        try:
            return _extract(pdf, path, limits)
        except LoadError:
            raise
        except Exception as exc:  # noqa: BLE001
            raise _classify(exc) from None


def _classify(exc: BaseException) -> LoadError:
    names = " ".join(type(e).__name__ for e in _chain(exc))
    if "Password" in names or "Encrypt" in names:
        return LoadError(LoadError.ENCRYPTED, "the PDF is password-protected")
    if isinstance(exc, MemoryError):
        return LoadError(LoadError.OUT_OF_MEMORY, "parsing needed more memory than allowed")
    return LoadError(LoadError.CORRUPT, f"not a readable PDF ({type(exc).__name__})")


def _chain(exc: BaseException | None):
    seen = 0
    while exc is not None and seen < 8:
        yield exc
        exc = exc.__cause__ or exc.__context__
        seen += 1


def _extract(pdf: Any, path: Path, limits: Limits) -> Extracted:
    pages = len(pdf.pages)
    if pages > limits.pages:
        raise LoadError(LoadError.TOO_MANY_PAGES, f"{pages} pages, more than {limits.pages}")
    if pages == 0:
        raise LoadError(LoadError.EMPTY, "the PDF has no pages")
    warnings: list[str] = []
    ocr_pages: list[int] = []
    per_page: list[list[Line]] = []
    chars_total = 0
    rtl = _document_rtl(pdf.pages[:3])
    for number, page in enumerate(pdf.pages, 1):
        _check_page_size(page, number, limits)
        lines = _page_lines(page, number, rtl)
        letters = sum(len(line.text) for line in lines)
        if letters < MIN_TEXT_CHARS and (page.images or not lines):
            text = _ocr_page(path, number, page, limits, warnings)
            if text is not None:
                ocr_pages.append(number)
                lines = [Line(t, float(i), float(i) + 1, 0, 0, 0, False, number, kind="ocr")
                         for i, t in enumerate(text.split("\n"))]
        chars_total += sum(len(line.text) for line in lines)
        if chars_total > limits.text_chars:
            raise LoadError(LoadError.TOO_LARGE, f"more than {limits.text_chars} characters of text")
        per_page.append(lines)
        heartbeat()
    if chars_total == 0:
        reason = warnings[0].split(": ", 1)[-1] if warnings else "no page has text"
        raise LoadError(LoadError.NO_TEXT, f"no page has a text layer ({reason})")
    _drop_running_lines(per_page, [page.height for page in pdf.pages])
    blocks = _blocks([line for lines in per_page for line in lines])
    title = _meta_title(pdf.metadata)
    return Extracted(text=markdown(promote_articles(blocks)), format="pdf", title=title, pages=pages,
                     warnings=warnings, ocr_pages=ocr_pages)


def _check_page_size(page: Any, number: int, limits: Limits) -> None:
    # A page rendered for OCR, or an image drawn on it, beyond the limit is refused before any
    # pixel is decoded.
    scale = limits.ocr_dpi / 72
    pixels = float(page.width) * float(page.height) * scale * scale
    if pixels > limits.page_pixels:
        raise LoadError(LoadError.PAGE_TOO_LARGE, f"page {number} is {page.width:.0f} x {page.height:.0f} points: "
                        f"{pixels / 1e6:.0f} megapixels at {limits.ocr_dpi} dpi (limit {limits.page_pixels / 1e6:.0f})")
    for image in page.images:
        width, height = image.get("srcsize") or (0, 0)
        if float(width) * float(height) > limits.page_pixels:
            raise LoadError(LoadError.PAGE_TOO_LARGE, f"page {number} has a {width} x {height} pixel image "
                            f"(limit {limits.page_pixels / 1e6:.0f} megapixels)")


def _ocr_page(path: Path, number: int, page: Any, limits: Limits, warnings: list[str]) -> str | None:
    if not limits.ocr:
        warnings.append(f"page {number} had no text layer: OCR is switched off, page skipped")
        return None
    if not ocr.available(limits.ocr_languages):
        warnings.append(f"page {number} had no text layer and tesseract ({limits.ocr_languages}) is not installed: page skipped")
        return None
    text = ocr.ocr_pdf_page(path, number - 1, limits)
    warnings.append(f"page {number} had no text layer: OCR")
    return text


def _meta_title(metadata: dict[str, Any] | None) -> str | None:
    title = (metadata or {}).get("Title")
    if isinstance(title, bytes):
        title = title.decode("utf-8", "ignore")
    if not isinstance(title, str):
        return None
    title = " ".join(title.split())
    # Exporters fill in the file name or a placeholder when the author set no title.
    if not title or title.lower() in {"untitled", "document", "microsoft word"} or title.lower().endswith((".doc", ".docx", ".pdf")):
        return None
    return title[:300]


# -- lines ----------------------------------------------------------------------------------------
def _document_rtl(pages: Any) -> bool:
    """Whether the document's text runs right to left (more Persian/Arabic letters than Latin ones)."""
    units = [c["text"] for page in pages for c in page.chars if c["text"].isalpha()]
    return is_rtl(units) if units else True


def _page_lines(page: Any, number: int, rtl: bool | None = None) -> list[Line]:
    page = page.dedupe_chars()
    tables = []
    if page.rects or page.lines:  # only a ruled table is found by its lines; no rules, no search
        tables = [table for table in page.find_tables() if len(table.rows) >= 1 and len(table.columns) >= 2]
    boxes = [table.bbox for table in tables]
    chars = [c for c in page.chars if c.get("upright", True) and c["text"] and not _inside(c, boxes)]
    lines = _group_lines(chars, number, rtl)
    for table in tables:
        rows = _table_rows(page, table, number, rtl)
        if rows:
            x0, top, x1, bottom = table.bbox
            lines.append(Line("\n".join(rows), top, bottom, x0, x1, 0.0, False, number, kind="table", rows=rows))
    lines.sort(key=lambda line: line.top)
    return lines


def _inside(char: dict[str, Any], boxes: list[tuple[float, float, float, float]]) -> bool:
    cx, cy = (char["x0"] + char["x1"]) / 2, (char["top"] + char["bottom"]) / 2
    return any(x0 <= cx <= x1 and top <= cy <= bottom for x0, top, x1, bottom in boxes)


def _group_lines(chars: list[dict[str, Any]], number: int, rtl: bool | None = None) -> list[Line]:
    chars = sorted(chars, key=lambda c: (c["top"], c["x0"]))
    groups: list[list[dict[str, Any]]] = []
    for char in chars:
        if groups:
            ref = groups[-1][0]
            if abs(char["top"] - ref["top"]) <= max(1.5, 0.35 * float(ref["size"])):
                groups[-1].append(char)
                continue
        groups.append([char])
    lines = []
    for group in groups:
        text = _line_text(group, rtl)
        if not text.strip():
            continue
        sizes = [round(float(c["size"]), 1) for c in group if not c["text"].isspace()]
        bold = [("Bold" in c.get("fontname", "") or "Black" in c.get("fontname", "")) for c in group if not c["text"].isspace()]
        lines.append(Line(
            text=text, top=min(c["top"] for c in group), bottom=max(c["bottom"] for c in group),
            x0=min(c["x0"] for c in group), x1=max(c["x1"] for c in group),
            size=statistics.median(sizes) if sizes else 0.0, bold=bool(bold) and sum(bold) > len(bold) / 2,
            page=number,
        ))
    return lines


def _line_text(group: list[dict[str, Any]], rtl: bool | None = None) -> str:
    """The logical text of one line's glyphs.

    A space glyph that overlaps a letter by more than half its width has no advance: it is the
    half-space (ZWNJ) a writer drew, and it belongs just left of the letter it overlaps.
    """
    glyphs = sorted((c for c in group if not c["text"].isspace()), key=lambda c: c["x0"])
    placed: list[tuple[float, str, dict[str, Any] | None]] = [(c["x0"], c["text"], c) for c in glyphs]
    for space in (c for c in group if c["text"].isspace()):
        width = space["x1"] - space["x0"]
        under = next((g for g in glyphs if width > 0 and min(space["x1"], g["x1"]) - max(space["x0"], g["x0"]) > 0.5 * width), None)
        if under is not None:
            placed.append((under["x0"] - 1e-3, "\u200c", None))
        else:
            placed.append((space["x0"], " ", None))
    placed.sort(key=lambda item: item[0])
    units: list[str] = []
    previous: dict[str, Any] | None = None
    for _, text, char in placed:
        if char is None:
            if text == "\u200c" or (units and units[-1] not in (" ", "\u200c")):
                units.append(text)
            previous = None
            continue
        if (previous is not None and char["x0"] - previous["x1"] > 0.22 * float(char["size"])
                and text not in _BRACKETS and previous["text"] not in _BRACKETS):
            units.append(" ")  # a word gap drawn by positioning, not by a space glyph
        units.append(text)
        previous = char
    return logical_order(units, rtl).strip()


def _table_rows(page: Any, table: Any, number: int, doc_rtl: bool | None = None) -> list[str]:
    rows_out: list[str] = []
    rtl = doc_rtl
    for row in table.rows:
        cells = []
        for cell in row.cells:
            if cell is None:
                continue
            inside = [c for c in page.chars if _inside(c, [cell])]
            cell_lines = _group_lines(inside, number, doc_rtl)
            cells.append((cell[0], join_lines([line.text for line in cell_lines])))
        if rtl is None:
            rtl = is_rtl([text for _, text in cells])
        cells.sort(key=lambda item: -item[0] if rtl else item[0])
        row_text = table_row([text for _, text in cells])
        if row_text:
            rows_out.append(row_text)
    return rows_out


# -- page furniture -------------------------------------------------------------------------------
def _drop_running_lines(per_page: list[list[Line]], heights: list[float]) -> None:
    """Remove running headers/footers (same text, digits aside, in a margin of most pages) and page numbers."""
    def in_margin(line: Line, height: float) -> bool:
        if line.kind == "ocr":  # no positions: the first and last two lines of an OCR page
            return True
        return line.bottom < height * MARGIN * 1.6 or line.top > height * (1 - MARGIN)

    keys: Counter[str] = Counter()
    for lines, height in zip(per_page, heights, strict=True):
        candidates = _margin_candidates(lines, height, in_margin)
        keys.update({_DIGITS.sub("#", line.text) for line in candidates})
    pages = len(per_page)
    repeated = {key for key, count in keys.items() if pages >= 2 and count >= max(2, (pages + 1) // 2)}
    for lines, height in zip(per_page, heights, strict=True):
        drop = {id(line) for line in _margin_candidates(lines, height, in_margin)
                if _DIGITS.sub("#", line.text) in repeated or _PAGE_NUMBER.match(line.text)}
        lines[:] = [line for line in lines if id(line) not in drop]


def _margin_candidates(lines: list[Line], height: float, in_margin) -> list[Line]:  # noqa: ANN001
    text_lines = [line for line in lines if line.kind != "table" and line.text.strip()]
    edge = text_lines[:2] + text_lines[-2:]
    return [line for line in edge if in_margin(line, height)]


# -- blocks ---------------------------------------------------------------------------------------
def _blocks(lines: list[Line]) -> list[str]:
    """Paragraphs and headings from the lines of every page, in reading order."""
    text_lines = [line for line in lines if line.kind == "text"]
    if text_lines:
        sizes = Counter()
        for line in text_lines:
            sizes[line.size] += len(line.text)
        body = sizes.most_common(1)[0][0]
        steps = [line.top - prev.top for prev, line in zip(text_lines, text_lines[1:], strict=False)
                        if line.page == prev.page and 0 < line.top - prev.top < 3 * body and abs(line.size - body) < 0.6
                        and abs(prev.size - body) < 0.6]
        spacing = statistics.median(steps) if steps else body * 1.2
        heading_sizes = sorted({round(line.size * 2) / 2 for line in text_lines if line.size >= body * 1.12}, reverse=True)[:4]
        width_right = max(line.x1 for line in text_lines)
        width_left = min(line.x0 for line in text_lines)
    else:
        body, spacing, heading_sizes, width_left, width_right = 0.0, 0.0, [], 0.0, 0.0

    def heading_level(line: Line) -> int | None:
        if line.kind != "text" or len(line.text.split()) > 25:
            return None
        size = round(line.size * 2) / 2
        if size in heading_sizes:
            return heading_sizes.index(size) + 1
        return None

    blocks: list[str] = []
    current: list[Line] = []
    current_level: int | None = None

    def flush() -> None:
        nonlocal current, current_level
        if not current:
            return
        text = join_lines([line.text for line in current])
        if current_level is not None:
            blocks.append("#" * current_level + " " + text)
        elif (current[0].bold and len(current) == 1 and len(text.split()) <= 12 and not ends_sentence(text)
              and not current[0].kind == "ocr"):
            # A short bold line on its own: a heading one below the smallest sized heading.
            blocks.append("#" * min(6, len(heading_sizes) + 1) + " " + text)
        else:
            blocks.append(text)
        current, current_level = [], None

    previous: Line | None = None
    for line in lines:
        if line.kind == "table":
            flush()
            blocks.append("\n".join(line.rows))
            previous = None
            continue
        if line.kind == "ocr":
            if not line.text.strip():
                flush()
            else:
                if current and current[-1].page != line.page and ends_sentence(current[-1].text):
                    flush()
                current.append(line)
            previous = line
            continue
        level = heading_level(line)
        new_block = (
            previous is None
            or level != current_level
            or abs(line.size - previous.size) >= 0.6
            or line.bold != previous.bold and level is None
            or (line.page == previous.page and line.top - previous.top > max(spacing, previous.size * 1.25) * 1.35)
            or (line.page != previous.page and ends_sentence(previous.text))
            or (ends_sentence(previous.text) and _short(previous, width_left, width_right, body))
        )
        if new_block:
            flush()
            current_level = level
        current.append(line)
        previous = line
    flush()
    return blocks


def _short(line: Line, left: float, right: float, body: float) -> bool:
    """The line stops well before the text block's far edge: the last line of a paragraph."""
    rtl = is_rtl(list(line.text))
    gap = (line.x0 - left) if rtl else (right - line.x1)
    return gap > 4 * max(body, 1.0)
