"""DOCX -> Markdown-shaped text with python-docx, after the archive is checked.

python-docx was chosen over mammoth on measurement (docs/ingest.md): both keep every sentence,
python-docx gives the paragraph styles and the body order of paragraphs and tables directly,
without an HTML round trip. Headings come from the heading styles (any language: the style id or
the outline level), the document's title from its properties. Running headers and footers live in
their own parts of the file and are never read; tables become one `| cell | cell |` line per row.

Before python-docx opens it the archive is checked: entry count, total and per-entry expansion
(a zip bomb), and no DTD in any XML part (an entity-expansion bomb; lxml would refuse to expand
it anyway, the check says why the file is refused).
"""

from __future__ import annotations

import re
import zipfile
from pathlib import Path
from typing import Any

from insurance_ingest.errors import LoadError
from insurance_ingest.layout import markdown, promote_articles, table_row
from insurance_ingest.limits import Limits
from insurance_ingest.model import Extracted

_HEADING_STYLE = re.compile(r"^(?:heading|titre|überschrift|عنوان)\s*(\d)$", re.IGNORECASE)
_DTD = re.compile(rb"<!(?:DOCTYPE|ENTITY)", re.IGNORECASE)


def check_archive(path: Path, limits: Limits) -> None:
    try:
        archive = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError, ValueError):
        raise LoadError(LoadError.CORRUPT, "not a readable DOCX (broken zip archive)") from None
    with archive:
        entries = archive.infolist()
        if len(entries) > limits.zip_entries:
            raise LoadError(LoadError.ZIP_BOMB, f"{len(entries)} entries in the archive")
        total = 0
        for entry in entries:
            total += entry.file_size
            if entry.file_size > limits.unzipped_bytes or total > limits.unzipped_bytes:
                raise LoadError(LoadError.ZIP_BOMB, f"unpacks to more than {limits.unzipped_bytes // (1024 * 1024)} MB")
            if entry.file_size > 1_000_000 and entry.file_size > limits.zip_ratio * max(entry.compress_size, 1):
                raise LoadError(LoadError.ZIP_BOMB, f"{entry.filename} expands {entry.file_size // max(entry.compress_size, 1)}-fold")
        for entry in entries:
            if entry.filename.endswith((".xml", ".rels")):
                with archive.open(entry) as handle:
                    head = handle.read(4096)
                if _DTD.search(head):
                    raise LoadError(LoadError.XML_ENTITIES, f"{entry.filename} declares a DTD or entities")
        if "word/document.xml" not in archive.namelist():
            raise LoadError(LoadError.CORRUPT, "not a DOCX (no word/document.xml)")


def load_docx(path: Path, limits: Limits) -> Extracted:
    check_archive(path, limits)
    import docx
    from docx.table import Table
    from docx.text.paragraph import Paragraph

    try:
        document = docx.Document(str(path))
    except Exception as exc:  # noqa: BLE001 - python-docx and lxml raise many types for one broken file
        raise LoadError(LoadError.CORRUPT, f"not a readable DOCX ({type(exc).__name__})") from None
    blocks: list[str] = []
    chars = 0
    first_heading: str | None = None
    for element in document.element.body.iterchildren():
        tag = element.tag.rsplit("}", 1)[-1]
        if tag == "p":
            paragraph = Paragraph(element, document)
            text = " ".join(_paragraph_text(element).split())
            if not text:
                continue
            level = _heading_level(paragraph)
            if level is not None:
                first_heading = first_heading or text
                blocks.append("#" * level + " " + text)
            else:
                blocks.append(text)
        elif tag == "tbl":
            blocks.append("\n".join(_rows(Table(element, document))))
        else:
            continue
        chars += len(blocks[-1])
        if chars > limits.text_chars:
            raise LoadError(LoadError.TOO_LARGE, f"more than {limits.text_chars} characters of text")
    title = (document.core_properties.title or "").strip() or None
    return Extracted(text=markdown(promote_articles(blocks)), format="docx", title=title)


_W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
_TEXT_TAGS = {_W + "t": None, _W + "tab": " ", _W + "br": " ", _W + "cr": " ", _W + "noBreakHyphen": "-",
              # Persian writers use the optional hyphen as a half-space; clean_text makes it one.
              _W + "softHyphen": "\u00ad"}


def _paragraph_text(element: Any) -> str:
    """The paragraph's text in document order, hyperlinks and fields' results included."""
    parts = []
    for node in element.iter(*_TEXT_TAGS):
        if node.tag == _W + "t":
            parts.append(node.text or "")
        else:
            parts.append(_TEXT_TAGS[node.tag])
    return "".join(parts)


def _heading_level(paragraph: Any) -> int | None:
    style = paragraph.style
    names = [getattr(style, "style_id", "") or "", getattr(style, "name", "") or ""]
    for name in names:
        if name.lower() == "title":
            return 1
        match = _HEADING_STYLE.match(name.replace("Heading", "heading ").strip()) or _HEADING_STYLE.match(name)
        if match:
            return min(6, max(1, int(match.group(1))))
    # Outline level set on the paragraph itself (a "heading" made by hand).
    ppr = paragraph._p.pPr
    if ppr is not None:
        outline = ppr.find("{http://schemas.openxmlformats.org/wordprocessingml/2006/main}outlineLvl")
        if outline is not None:
            value = outline.get("{http://schemas.openxmlformats.org/wordprocessingml/2006/main}val")
            if value is not None and value.isdigit() and int(value) < 6:
                return int(value) + 1
    return None


def _rows(table: Any) -> list[str]:
    rows: list[str] = []
    for row in table.rows:
        seen: set[int] = set()
        cells = []
        for cell in row.cells:  # a merged cell is repeated once per grid column it spans
            if id(cell._tc) in seen:
                continue
            seen.add(id(cell._tc))
            cells.append(" ".join(" ".join(_paragraph_text(p._p) for p in cell.paragraphs).split()))
        line = table_row(cells)
        if line:
            rows.append(line)
    return rows
