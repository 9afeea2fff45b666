"""Ingestion: documents -> chunks -> embedded points in Qdrant, for one tenant.

Re-ingesting a file replaces its chunks: the new chunks are written first (deterministic point ids
overwrite the old ones in place) and then every other chunk of that file is deleted. The end state
is the same as delete-then-upsert, but a search running meanwhile never finds the file missing.
A skipped (bad) file never changes the index, so a broken edit keeps the last good version.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from pathlib import Path

from pydantic import BaseModel, Field

from insurance_agent.errors import InvalidInputError
from insurance_agent.models.chunks import ChunkPayload
from insurance_agent.retrieval import index
from insurance_agent.retrieval.access import require_tenant
from insurance_agent.retrieval.chunking import chunk_document
from insurance_agent.retrieval.documents import Document, DocumentError, load_document

SUFFIXES = (".md", ".txt")
EMBED_BATCH = 32
NO_CHUNKS = "no_chunks"
DUPLICATE_FILE_ID = "duplicate_file_id"

Progress = Callable[[int, int], None]


class SkippedFile(BaseModel):
    path: str
    reason: str
    detail: str = ""


class IngestWarning(BaseModel):
    path: str
    detail: str


class IngestReport(BaseModel):
    files: int = 0
    chunks: int = 0
    skipped: list[SkippedFile] = Field(default_factory=list)
    # Ingested files with something ignored (e.g. an unknown front-matter key).
    warnings: list[IngestWarning] = Field(default_factory=list)
    seconds: float = 0.0


class _Writer:
    """Buffers whole files' chunks so that embedding and upserts run in batches across small files."""

    def __init__(self, tenant_id: str, total: int, progress: Progress | None, batch_size: int = EMBED_BATCH) -> None:
        self.tenant_id = tenant_id
        self.total = total
        self.progress = progress
        self.batch_size = batch_size
        self.report = IngestReport()
        self.done = 0
        self._seen: dict[str, str] = {}
        self._pending: list[tuple[str, list[ChunkPayload]]] = []
        self._pending_chunks = 0

    def add(self, doc: Document, label: str) -> None:
        if doc.file_id in self._seen:
            # Two files with one id would overwrite each other's chunks; keep the first.
            self.skip(label, DUPLICATE_FILE_ID, f"{doc.file_id!r} is already used by {self._seen[doc.file_id]}")
            return
        self._seen[doc.file_id] = label
        if doc.ignored_keys:
            keys = ", ".join(doc.ignored_keys)
            self.report.warnings.append(IngestWarning(path=label, detail=f"ignored front-matter keys: {keys}"))
        chunks = chunk_document(doc, self.tenant_id)
        if not chunks:
            self.skip(label, NO_CHUNKS, "only headings or markup")
            return
        self._pending.append((doc.file_id, chunks))
        self._pending_chunks += len(chunks)
        if self._pending_chunks >= self.batch_size:
            self.flush()

    def skip(self, label: str, reason: str, detail: str = "") -> None:
        self.report.skipped.append(SkippedFile(path=label, reason=reason, detail=detail))
        self._advance(1)

    def flush(self) -> None:
        if not self._pending:
            return
        chunks = [chunk for _, file_chunks in self._pending for chunk in file_chunks]
        index.upsert_chunks(chunks, batch_size=self.batch_size)
        for file_id, file_chunks in self._pending:
            index.delete_stale(self.tenant_id, file_id, keep=file_chunks)
        self.report.files += len(self._pending)
        self.report.chunks += len(chunks)
        files = len(self._pending)
        self._pending, self._pending_chunks = [], 0
        self._advance(files)

    def _advance(self, files: int) -> None:
        self.done += files
        if self.progress is not None:
            self.progress(self.done, self.total)


def ingest_directory(
    path: str | Path, tenant_id: str, *, reset: bool = False, progress: Progress | None = None
) -> IngestReport:
    """Ingest every .md/.txt file below `path` (sorted; hidden files and folders ignored)."""
    started = time.perf_counter()
    require_tenant(tenant_id)
    root = Path(path)
    if not root.is_dir():
        raise InvalidInputError(f"{root} is not a folder")
    files = sorted(
        p
        for p in root.rglob("*")
        if p.suffix.lower() in SUFFIXES and p.is_file() and not any(part.startswith(".") for part in p.relative_to(root).parts)
    )
    if reset:
        index.reset(tenant_id)
    writer = _Writer(tenant_id, len(files), progress)
    for file in files:
        label = file.relative_to(root).as_posix()
        try:
            doc = load_document(file)
        except DocumentError as exc:
            writer.skip(label, exc.reason, exc.detail)
            continue
        writer.add(doc, label)
    writer.flush()
    writer.report.seconds = round(time.perf_counter() - started, 3)
    return writer.report


def ingest_documents(
    docs: Iterable[Document], tenant_id: str, *, progress: Progress | None = None
) -> IngestReport:
    """Ingest already loaded documents (benchmarks, tests); same replace semantics as a folder."""
    started = time.perf_counter()
    require_tenant(tenant_id)
    docs = list(docs)
    writer = _Writer(tenant_id, len(docs), progress)
    for doc in docs:
        writer.add(doc, doc.source or doc.file_id)
    writer.flush()
    writer.report.seconds = round(time.perf_counter() - started, 3)
    return writer.report


def delete_file(tenant_id: str, file_id: str) -> int:
    """Remove one file's chunks for a tenant; returns how many were removed."""
    return index.delete_file(tenant_id, file_id)
