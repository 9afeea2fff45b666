"""What a loader returns: Markdown-shaped text for the chunker, plus what it learnt on the way."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Extracted:
    """Text in the chunker's input form: `#` headings, paragraphs separated by blank lines,
    one table row per line (`| cell | cell |`)."""

    text: str
    format: str  # md, txt, pdf, docx, html
    title: str | None = None  # from the document's own properties (PDF Title, DOCX title, <title>)
    pages: int | None = None
    warnings: list[str] = field(default_factory=list)
    ocr_pages: list[int] = field(default_factory=list)
