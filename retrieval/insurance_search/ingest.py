"""Ingestion: documents -> chunks -> embedded points in Qdrant, for one tenant.

Re-ingesting a file replaces its chunks: the new chunks are written first (deterministic point ids
overwrite the old ones in place) and then every other chunk of that file is deleted. The end state
is the same as delete-then-upsert, but a search running meanwhile never finds the file missing.
A skipped (bad) file never changes the index, so a broken edit keeps the last good version.

Documents are untrusted input. Only regular files under the folder are read: symbolic links (to
files or folders) are never followed and are reported as skipped, like over-sized, binary or
text-less files. Chunks with instruction-like text are flagged (payload `flags`, and `flagged` in
the report). Time is linear in the corpus: old chunks are only looked for in files that had some.

Formats: Markdown and text here; PDF, DOCX and HTML through the `insurance_ingest` package (the
ingest path only: it imports the parsing libraries, which no Lambda handler loads). Ingest is
incremental: every chunk records its file's content hash and path (payload `source`), and a file
whose bytes and sidecar are unchanged is not parsed or embedded again. `sync=True` also removes
the documents of files no longer in the folder.
"""

from __future__ import annotations

import logging
import os
import stat
import time
from collections.abc import Callable, Iterable
from pathlib import Path

from pydantic import BaseModel, Field

from insurance_agent.config import IngestSettings, read
from insurance_agent.errors import InvalidInputError
from insurance_agent.models.chunks import ChunkPayload
from insurance_search import index
from insurance_search.access import require_tenant
from insurance_search.chunking import chunk_document
from insurance_agent.policy.untrusted import INSTRUCTION_LIKE
from insurance_search.documents import MAX_DOCUMENT_BYTES, Document, DocumentError, load_document

SUFFIXES = (".md", ".txt")  # without insurance_ingest; with it, its SUFFIXES
logger = logging.getLogger(__name__)
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


class FlaggedFile(BaseModel):
    """A file ingested with chunks that need a reviewer's eye (text addressed to the assistant, fake citations)."""

    path: str
    flags: list[str]
    chunks: int


class IngestReport(BaseModel):
    files: int = 0  # files written (added + changed)
    chunks: int = 0
    # Incremental ingest, by file (path relative to the folder; removed: file ids).
    added: list[str] = Field(default_factory=list)
    changed: list[str] = Field(default_factory=list)
    unchanged: list[str] = Field(default_factory=list)
    removed: list[str] = Field(default_factory=list)
    skipped: list[SkippedFile] = Field(default_factory=list)
    # Ingested files with something ignored (e.g. an unknown front-matter key).
    warnings: list[IngestWarning] = Field(default_factory=list)
    flagged: list[FlaggedFile] = Field(default_factory=list)
    seconds: float = 0.0


class _Writer:
    """Buffers whole files' chunks so that embedding and upserts run in batches across small files."""

    def __init__(
        self, tenant_id: str, total: int, progress: Progress | None, batch_size: int = EMBED_BATCH,
        existing: set[str] | None = None,
    ) -> None:
        self.tenant_id = tenant_id
        # File ids that had chunks before this run (None: unknown, look for stale chunks everywhere).
        self.existing = existing
        self.total = total
        self.progress = progress
        self.batch_size = batch_size
        self.report = IngestReport()
        self.done = 0
        self._seen: dict[str, str] = {}
        self._pending: list[tuple[str, list[ChunkPayload]]] = []
        self._sources: dict[str, dict] = {}
        self._status: dict[str, tuple[str, str]] = {}  # file_id -> (added | changed, label)
        self._pending_chunks = 0

    def add(self, doc: Document, label: str, status: str | None = None) -> None:
        if doc.file_id in self._seen:
            # Two files with one id would overwrite each other's chunks; keep the first.
            self.skip(label, DUPLICATE_FILE_ID, f"{doc.file_id!r} is already used by {self._seen[doc.file_id]}")
            return
        self._seen[doc.file_id] = label
        if doc.ignored_keys:
            keys = ", ".join(doc.ignored_keys)
            self.report.warnings.append(IngestWarning(path=label, detail=f"ignored front-matter keys: {keys}"))
        for warning in doc.warnings:
            self.report.warnings.append(IngestWarning(path=label, detail=warning))
        chunks = chunk_document(doc, self.tenant_id)
        if not chunks:
            self.skip(label, NO_CHUNKS, "only headings or markup")
            return
        flagged = [chunk for chunk in chunks if chunk.flags]
        if flagged:
            flags = sorted({flag for chunk in flagged for flag in chunk.flags})
            self.report.flagged.append(FlaggedFile(path=label, flags=flags, chunks=len(flagged)))
            if INSTRUCTION_LIKE in flags:
                logger.warning("document has instruction-like text", extra={"file": label, "chunks": len(flagged)})
        self._pending.append((doc.file_id, chunks))
        self._sources[doc.file_id] = {"path": label, "format": doc.format, "pages": doc.pages,
                                      "warnings": list(doc.warnings), "hash": doc.content_hash}
        if status is None:
            status = "changed" if self.existing is None or doc.file_id in self.existing else "added"
        self._status[doc.file_id] = (status, label)
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
        index.upsert_chunks(chunks, batch_size=self.batch_size,
                            sources={file_id: self._sources[file_id] for file_id, _ in self._pending})
        for file_id, file_chunks in self._pending:
            if self.existing is None or file_id in self.existing:
                index.delete_stale(self.tenant_id, file_id, keep=file_chunks)
            status, label = self._status[file_id]
            (self.report.added if status == "added" else self.report.changed).append(label)
        self.report.files += len(self._pending)
        self.report.chunks += len(chunks)
        files = len(self._pending)
        self._pending, self._pending_chunks = [], 0
        self._advance(files)

    def unchanged(self, label: str, file_id: str) -> None:
        self._seen[file_id] = label
        self.report.unchanged.append(label)
        self._advance(1)

    @property
    def file_ids(self) -> set[str]:
        return set(self._seen)

    def _advance(self, files: int) -> None:
        self.done += files
        if self.progress is not None:
            self.progress(self.done, self.total)


def _candidates(root: Path, suffixes: tuple[str, ...] = SUFFIXES) -> tuple[list[Path], list[SkippedFile]]:
    """Regular files below `root` with one of `suffixes` (sorted), and the symlinks and special files passed over.

    os.walk without followlinks never enters a linked folder; entries are checked with lstat, so a
    link is reported, not read. Hidden files and folders are ignored.
    """
    files: list[Path] = []
    passed: list[SkippedFile] = []
    for folder, dirs, names in os.walk(root, followlinks=False):
        base = Path(folder)
        for name in [d for d in dirs if not d.startswith(".")]:
            if (base / name).is_symlink():
                passed.append(SkippedFile(path=(base / name).relative_to(root).as_posix(),
                                          reason=DocumentError.NOT_REGULAR, detail="symbolic link (not followed)"))
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and not (base / d).is_symlink())
        for name in sorted(names):
            path = base / name
            if name.startswith(".") or path.suffix.lower() not in suffixes:
                continue
            mode = path.lstat().st_mode
            if stat.S_ISREG(mode):
                files.append(path)
            else:
                detail = "symbolic link (not followed)" if stat.S_ISLNK(mode) else "not a regular file"
                passed.append(SkippedFile(path=path.relative_to(root).as_posix(), reason=DocumentError.NOT_REGULAR, detail=detail))
    return sorted(files), passed


def _loader(max_bytes: int | None) -> tuple[tuple[str, ...], Callable[[Path], Document], Callable[[Path], str] | None]:
    """(suffixes, load, content hash) of the installed loaders: every format with insurance_ingest, else .md/.txt."""
    configured = read(IngestSettings).max_document_bytes
    limit = max_bytes or (MAX_DOCUMENT_BYTES if configured is None else configured)
    try:
        import insurance_ingest
    except ImportError:  # a layer without the ingest package: Markdown and text only, never incremental
        return SUFFIXES, lambda path: load_document(path, max_bytes=limit), None
    limits = insurance_ingest.Limits.from_env()
    if max_bytes:
        from dataclasses import replace

        limits = replace(limits, text_bytes=max_bytes)
    return (insurance_ingest.SUFFIXES, lambda path: insurance_ingest.load_file(path, limits),
            lambda path: insurance_ingest.content_hash(path, limits))


def ingest_directory(
    path: str | Path, tenant_id: str, *, reset: bool = False, progress: Progress | None = None,
    max_bytes: int | None = None, sync: bool = False,
) -> IngestReport:
    """Ingest every supported regular file below `path` (sorted; hidden files and folders, symlinks ignored).

    Unchanged files (same content hash, same path) are neither parsed nor embedded again.
    `sync`: documents of the tenant that no file of the folder produced are removed (`removed`).
    `max_bytes` (default AGENT_MAX_DOCUMENT_BYTES, else 1 MiB): larger text files are reported and
    skipped (other formats: insurance_ingest.Limits).
    """
    started = time.perf_counter()
    require_tenant(tenant_id)
    root = Path(path)
    if not root.is_dir():
        raise InvalidInputError(f"{root} is not a folder")
    suffixes, load, digest = _loader(max_bytes)
    files, passed = _candidates(root, suffixes)
    if reset:
        index.reset(tenant_id)
    known = {} if reset else index.file_sources(tenant_id)
    by_path = {entry.get("path"): (file_id, entry.get("hash")) for file_id, entry in known.items() if entry.get("path")}
    writer = _Writer(tenant_id, len(files) + len(passed), progress, existing=set(known))
    kept: set[str] = set()
    for skipped in passed:
        writer.skip(skipped.path, skipped.reason, skipped.detail)
    for file in files:
        label = file.relative_to(root).as_posix()
        try:
            if digest is not None and label in by_path:
                file_id, previous = by_path[label]
                if previous and digest(file) == previous and file_id not in writer.file_ids:
                    writer.unchanged(label, file_id)
                    continue
            doc = load(file)
        except DocumentError as exc:
            writer.skip(label, exc.reason, exc.detail)
            if label in by_path:  # a broken edit keeps the last good version, also under sync
                kept.add(by_path[label][0])
            continue
        writer.add(doc, label)
    writer.flush()
    if sync:
        for file_id in sorted(set(known) - writer.file_ids - kept):
            index.delete_file(tenant_id, file_id)
            writer.report.removed.append(file_id)
    index.optimize()
    writer.report.seconds = round(time.perf_counter() - started, 3)
    return writer.report


def ingest_documents(
    docs: Iterable[Document], tenant_id: str, *, progress: Progress | None = None
) -> IngestReport:
    """Ingest already loaded documents (benchmarks, tests); same replace semantics as a folder."""
    started = time.perf_counter()
    require_tenant(tenant_id)
    docs = list(docs)
    writer = _Writer(tenant_id, len(docs), progress, existing=index.existing_file_ids(tenant_id))
    for doc in docs:
        writer.add(doc, doc.source or doc.file_id)
    writer.flush()
    index.optimize()
    writer.report.seconds = round(time.perf_counter() - started, 3)
    return writer.report


def delete_file(tenant_id: str, file_id: str) -> int:
    """Remove one file's chunks for a tenant; returns how many were removed."""
    return index.delete_file(tenant_id, file_id)
