"""What a tenant's chunk store holds, by document: for `agent documents` (reads only, one scroll)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from insurance_agent.errors import InvalidInputError
from insurance_search import index


class DocumentSummary(BaseModel):
    file_id: str
    title: str | None = None
    format: str | None = None  # None: ingested before formats were recorded
    pages: int | None = None
    chunks: int = 0
    path: str | None = None
    warnings: list[str] = Field(default_factory=list)


def list_documents(tenant_id: str) -> list[DocumentSummary]:
    """The tenant's documents, by file_id."""
    found = index.file_sources(tenant_id)
    return [
        DocumentSummary(file_id=file_id, title=entry.get("title"), format=entry.get("format"), pages=entry.get("pages"),
                        chunks=entry["chunks"], path=entry.get("path"), warnings=list(entry.get("warnings") or []))
        for file_id, entry in sorted(found.items())
    ]


def document_chunks(tenant_id: str, file_id: str) -> list[dict[str, Any]]:
    """One document's chunks in order: chunk_id, chunk_index, heading, text, flags."""
    fields = ["chunk_id", "chunk_index", "heading", "text", "flags"]
    chunks = [{key: payload.get(key) for key in fields}
              for payload in index.tenant_points(tenant_id, fields, file_id=file_id)]
    if not chunks:
        raise InvalidInputError(f"tenant {tenant_id!r} has no document {file_id!r}")
    return sorted(chunks, key=lambda chunk: chunk.get("chunk_index") or 0)
