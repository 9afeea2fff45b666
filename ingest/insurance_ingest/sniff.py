"""What a file really is, from its first bytes, against what its name says."""

from __future__ import annotations

import re
import zipfile
from pathlib import Path

from insurance_ingest.errors import LoadError

# Formats by file name; `text` covers Markdown and plain text.
BY_SUFFIX = {".md": "text", ".markdown": "text", ".txt": "text", ".pdf": "pdf", ".docx": "docx",
             ".html": "html", ".htm": "html", ".xhtml": "html"}
_HTML = re.compile(rb"<(?:!doctype\s+html|html|head|body|meta|title|div|p|article|section|h[1-6])[\s>/]", re.IGNORECASE)
_SIGNATURES = (
    (b"%PDF-", "pdf"),
    (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1", "legacy Office (.doc/.xls)"),
    (b"{\\rtf", "RTF"),
    (b"\x89PNG\r\n\x1a\n", "PNG image"),
    (b"\xff\xd8\xff", "JPEG image"),
    (b"GIF8", "GIF image"),
    (b"II*\x00", "TIFF image"),
    (b"MM\x00*", "TIFF image"),
    (b"\x1f\x8b", "gzip archive"),
    (b"7z\xbc\xaf\x27\x1c", "7z archive"),
    (b"Rar!", "RAR archive"),
)


def content_format(path: Path, head: bytes) -> str:
    """pdf, docx, html, text, or a description of another binary format."""
    stripped = head.lstrip(b"\xef\xbb\xbf \t\r\n")
    for signature, name in _SIGNATURES:
        if stripped.startswith(signature) or (name == "pdf" and signature in head[:1024]):
            return name
    if head.startswith(b"PK\x03\x04"):
        return _zip_kind(path)
    if b"\x00" in head[:4096]:
        return "binary data"
    if _HTML.search(head[:4096]):
        return "html"
    return "text"


def _zip_kind(path: Path) -> str:
    try:
        with zipfile.ZipFile(path) as archive:
            names = set(archive.namelist()[:5000])
    except (zipfile.BadZipFile, OSError, ValueError):
        return "corrupt zip archive"
    if "word/document.xml" in names:
        return "docx"
    if "xl/workbook.xml" in names:
        return "xlsx"
    if "ppt/presentation.xml" in names:
        return "pptx"
    if "content.xml" in names:
        return "OpenDocument"
    return "zip archive"


def check(path: Path, head: bytes) -> str:
    """The format to load `path` with; LoadError when the content contradicts the name."""
    claimed = BY_SUFFIX.get(path.suffix.lower())
    if claimed is None:
        raise LoadError(LoadError.UNSUPPORTED, f"{path.suffix or 'no extension'} files are not read")
    actual = content_format(path, head)
    if actual == claimed:
        return claimed
    # Markdown and text may quote HTML tags; a web page saved as .txt is still text to read.
    if claimed == "text" and actual == "html":
        return "text"
    if claimed == "html" and actual == "text":
        return "html"
    if actual == "corrupt zip archive":
        raise LoadError(LoadError.CORRUPT, "not a readable DOCX (broken zip archive)")
    raise LoadError(LoadError.FORMAT_MISMATCH, f"named {path.suffix} but the content is {actual}")
