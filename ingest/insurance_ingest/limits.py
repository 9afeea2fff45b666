"""Resource limits of the document loaders; every one is configurable through the environment.

A loader parses untrusted files: each limit turns a file that would take unbounded time or memory
into a refusal with a reason, while the rest of the folder is ingested.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

MIB = 1024 * 1024


def _number(name: str, default: float) -> float:
    raw = os.environ.get(name)
    if raw is None or not raw.strip():
        return default
    try:
        value = float(raw)
    except ValueError:
        raise ValueError(f"{name} must be a number, got {raw!r}") from None
    if value <= 0:
        raise ValueError(f"{name} must be positive")
    return value


@dataclass(frozen=True)
class Limits:
    text_bytes: int = 1 * MIB  # .md / .txt (AGENT_MAX_DOCUMENT_BYTES, as before)
    binary_bytes: int = 32 * MIB  # one PDF or DOCX file
    html_bytes: int = 5 * MIB  # one web page
    pages: int = 500  # pages of one PDF
    page_pixels: int = 50_000_000  # one page rendered for OCR, or one embedded image
    unzipped_bytes: int = 64 * MIB  # everything inside one DOCX
    zip_ratio: int = 100  # uncompressed / compressed size of a DOCX entry
    zip_entries: int = 2000
    text_chars: int = 4_000_000  # extracted text of one document
    seconds: float = 120.0  # wall time without progress: one page of a PDF (OCR included), or a whole other file
    file_seconds: float = 1800.0  # wall time for one file, however many pages
    memory_bytes: int = 1024 * MIB  # address space a parse may add
    ocr: bool = True  # OCR pages without a text layer when tesseract is installed
    ocr_dpi: int = 300
    ocr_languages: str = "fas"  # measured: "fas+eng" reads Persian words as Latin garbage

    @classmethod
    def from_env(cls) -> Limits:
        d = cls()
        return cls(
            text_bytes=int(_number("AGENT_MAX_DOCUMENT_BYTES", d.text_bytes)),
            binary_bytes=int(_number("AGENT_INGEST_MAX_FILE_MB", d.binary_bytes / MIB) * MIB),
            html_bytes=int(_number("AGENT_INGEST_MAX_HTML_MB", d.html_bytes / MIB) * MIB),
            pages=int(_number("AGENT_INGEST_MAX_PAGES", d.pages)),
            page_pixels=int(_number("AGENT_INGEST_MAX_PAGE_MEGAPIXELS", d.page_pixels / 1e6) * 1e6),
            unzipped_bytes=int(_number("AGENT_INGEST_MAX_UNZIPPED_MB", d.unzipped_bytes / MIB) * MIB),
            zip_ratio=int(_number("AGENT_INGEST_MAX_ZIP_RATIO", d.zip_ratio)),
            text_chars=int(_number("AGENT_INGEST_MAX_TEXT_CHARS", d.text_chars)),
            seconds=_number("AGENT_INGEST_TIMEOUT_SECONDS", d.seconds),
            file_seconds=_number("AGENT_INGEST_MAX_FILE_SECONDS", d.file_seconds),
            memory_bytes=int(_number("AGENT_INGEST_MAX_MEMORY_MB", d.memory_bytes / MIB) * MIB),
            ocr=os.environ.get("AGENT_INGEST_OCR", "1").strip().lower() not in ("0", "false", "no", "off"),
            ocr_dpi=int(_number("AGENT_INGEST_OCR_DPI", d.ocr_dpi)),
            ocr_languages=os.environ.get("AGENT_INGEST_OCR_LANGUAGES", d.ocr_languages),
        )
