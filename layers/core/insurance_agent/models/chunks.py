"""Chunks as stored in Qdrant and as returned by retrieval."""

from __future__ import annotations

from pydantic import BaseModel, Field


class ChunkPayload(BaseModel):
    """Payload stored with every chunk point (docs/retrieval.md)."""

    chunk_id: str
    file_id: str
    title: str
    domain: str | None = None
    product: str | None = None
    chunk_index: int = 0
    language: str = "fa"
    audience: list[str] = Field(default_factory=lambda: ["user", "officer", "admin"])
    tenant_id: str
    text: str
    heading: str | None = None
    # Set at ingest by policy/untrusted.py: "instruction_like" (text addressing the assistant) and
    # "citation_markers" (look-alike citation markers were stripped from the text).
    flags: list[str] = Field(default_factory=list)


class RetrievedChunk(ChunkPayload):
    """A chunk returned for a query, best first; `score` is the final pipeline score."""

    score: float = 0.0
    # Neighbouring chunks merged in for context; `text` already holds the expanded window.
    expanded_from: list[str] = Field(default_factory=list)
    #: where the chunk's own text is in the expanded `text`: [start, end); empty when not expanded
    own_span: list[int] = Field(default_factory=list)
