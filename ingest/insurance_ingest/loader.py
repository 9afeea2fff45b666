"""One file -> one validated Document: size check, format sniffing, sidecar, isolated parse, clean text."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from insurance_search.documents import Document, make_document, read_regular, text_parts

from insurance_ingest import sniff
from insurance_ingest.errors import LoadError
from insurance_ingest.isolation import run_isolated
from insurance_ingest.limits import Limits
from insurance_ingest.model import Extracted
from insurance_ingest.sidecar import read_sidecar
from insurance_ingest.textfix import clean_text

SUFFIXES = tuple(sniff.BY_SUFFIX)
# Part of every content hash: a change to extraction or chunking re-embeds unchanged files once.
PIPELINE_VERSION = b"ingest-formats-1"


def max_bytes(path: Path, limits: Limits) -> int:
    claimed = sniff.BY_SUFFIX.get(path.suffix.lower())
    return {"text": limits.text_bytes, "html": limits.html_bytes}.get(claimed or "", limits.binary_bytes)


def content_hash(path: Path, limits: Limits | None = None) -> str:
    """sha256 of the file, its sidecar and the pipeline version; LoadError if it cannot be read."""
    limits = limits or Limits.from_env()
    raw = read_regular(path, max_bytes(path, limits))
    side = path.with_name(path.name + ".metadata.json")
    side_raw = side.read_bytes() if side.is_file() and not side.is_symlink() and side.stat().st_size <= 65536 else b""
    return _digest(raw, side_raw)


def _digest(raw: bytes, side_raw: bytes) -> str:
    h = hashlib.sha256(PIPELINE_VERSION)
    for part in (raw, side_raw):
        h.update(len(part).to_bytes(8, "big"))
        h.update(part)
    return h.hexdigest()


def load_file(path: Path, limits: Limits | None = None) -> Document:
    """Read, check, parse and validate one document; LoadError (a DocumentError) with the reason otherwise."""
    limits = limits or Limits.from_env()
    path = Path(path)
    raw = read_regular(path, max_bytes(path, limits))
    if not raw.strip():
        raise LoadError(LoadError.EMPTY, "the file is empty")
    kind = sniff.check(path, raw[:8192])
    side_meta, side_ignored, side_raw = read_sidecar(path)
    meta: dict[str, Any] = {}
    if kind == "text":
        meta, body = text_parts(raw)
        extracted = Extracted(text=clean_text(body, tidy_spaces=False),
                              format="txt" if path.suffix.lower() == ".txt" else "md")
    else:
        extracted = run_isolated(_parse, (kind, path, limits), limits)
        extracted.text = clean_text(extracted.text)
    meta.update(side_meta)
    warnings = list(extracted.warnings)
    if side_ignored:
        warnings.append(f"ignored sidecar keys: {', '.join(side_ignored)}")
    title = clean_text(extracted.title) if extracted.title else None
    return make_document(extracted.text, meta, path, title_hint=title or None, format=extracted.format,
                         pages=extracted.pages, warnings=warnings, content_hash=_digest(raw, side_raw))


def _parse(kind: str, path: Path, limits: Limits) -> Extracted:
    """Runs in the isolated child: the format's loader, imported there."""
    if kind == "pdf":
        from insurance_ingest.pdf_loader import load_pdf

        return load_pdf(path, limits)
    if kind == "docx":
        from insurance_ingest.docx_loader import load_docx

        return load_docx(path, limits)
    if kind == "html":
        from insurance_ingest.html_loader import load_html

        return load_html(path, limits, path.read_bytes()[: limits.html_bytes + 1])
    raise LoadError(LoadError.UNSUPPORTED, f"no loader for {kind}")
