"""The hybrid query: dense + BM25 prefetch -> RRF -> optional ColBERT MAX_SIM rerank -> context window.

The security filter (tenant, audience allowlist, domain, scope) is put in every prefetch and at the
top level, and the returned payloads are checked again: qdrant-client's local mode has ignored a
top-level filter under fusion (issues 1372/1373), so no single layer is trusted alone.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from typing import Any

from qdrant_client import models

from insurance_agent.config import get_settings
from insurance_agent.errors import IndexMissingError, InvalidInputError
from insurance_agent.models.chunks import RetrievedChunk
from insurance_agent.models.scope import SCOPE_KEYS, Scope
from insurance_search import index
from insurance_search.access import allowed_audiences, require_tenant
from insurance_search.chunking import HEADING_SEPARATOR, encoder_text
from insurance_search.embeddings import (
    DENSE_VECTOR,
    LATE_VECTOR,
    SPARSE_VECTOR,
    dense_encoder,
    late_encoder,
    sparse_encoder,
)

logger = logging.getLogger(__name__)

MAX_QUERY_CHARS = 2000
MAX_K = 50
LEGS = ("dense", "sparse")
_WORD_WITH_SPACE = re.compile(r"\S+\s*")
_MIN_OVERLAP_WORDS = 5


def search(
    query: str,
    *,
    tenant_id: str,
    roles: list[str],
    domain: str | None = None,
    scope: Scope | dict[str, Any] | None = None,
    k: int | None = None,
    legs: Sequence[str] = LEGS,
    rerank: bool = True,
) -> list[RetrievedChunk]:
    """Chunks of `tenant_id` readable by `roles` that best answer `query`, best first.

    `domain` and `scope` (a Scope, or its mapping {"file_id": str | list, "domain": str | list})
    only ever narrow the result. Each hit's `text` is widened with its neighbouring chunks (`expanded_from`).
    `legs` (a subset of LEGS) and `rerank=False` switch off parts of the pipeline for measurement
    and diagnosis (one leg is still a fused query over a single, equally filtered prefetch); the
    retrieve node always uses the defaults.
    """
    text = _validate_query(query)
    unknown = set(legs) - set(LEGS)
    if not legs or unknown:
        raise InvalidInputError(f"legs must be a non-empty subset of {list(LEGS)}")
    require_tenant(tenant_id)
    settings = get_settings().retrieval
    k = settings.top_k if k is None else k
    if not isinstance(k, int) or not 1 <= k <= MAX_K:
        raise InvalidInputError(f"k must be between 1 and {MAX_K}")
    audiences = allowed_audiences(roles)
    if not audiences:
        return []  # nothing is readable: do not even ask Qdrant
    constraints = _constraints(tenant_id, audiences, domain, Scope.of(scope))
    if not index.collection_exists():
        raise IndexMissingError(
            f"the chunk collection {settings.collection!r} does not exist: ingest documents first (agent ingest)"
        )

    security = models.Filter(must=list(constraints.values()))
    limit = max(settings.prefetch_limit, k)
    prefetch = []
    dense_query = None
    if "dense" in legs:
        dense = dense_encoder()
        dense_query = dense.embed_query(encoder_text(text))
        prefetch.append(models.Prefetch(query=dense_query, using=DENSE_VECTOR, filter=security, limit=limit))
    if "sparse" in legs:
        sparse = sparse_encoder().embed_query(encoder_text(text))
        if sparse.indices:  # a query of stopwords only has no BM25 terms; the dense leg still runs
            prefetch.append(models.Prefetch(query=sparse, using=SPARSE_VECTOR, filter=security, limit=limit))
    if not prefetch:
        return []
    fusion = _rrf(settings.rrf_k)
    late = late_encoder() if rerank else None
    client = index.get_client()
    with index.qdrant_errors():
        if late is None:
            response = client.query_points(
                settings.collection, prefetch=prefetch, query=fusion, query_filter=security, limit=k, with_payload=True
            )
        else:
            late_query = late.query_from_dense(dense.name, dense_query) if dense_query is not None else None
            fused = models.Prefetch(prefetch=prefetch, query=fusion, filter=security, limit=limit)
            response = client.query_points(
                settings.collection,
                prefetch=fused,
                query=late_query or late.embed_query(text),
                using=LATE_VECTOR,
                query_filter=security,
                limit=k,
                with_payload=True,
            )

    hits: list[RetrievedChunk] = []
    seen: set[str] = set()
    for point in response.points:
        payload = point.payload or {}
        if not _permitted(payload, tenant_id, audiences, constraints):
            logger.error("qdrant returned a point outside the security filter; dropped")
            continue
        if payload.get("chunk_id") in seen:  # nested prefetch can count a point twice (issue 1397)
            continue
        if settings.score_threshold is not None and point.score < settings.score_threshold:
            continue
        seen.add(payload["chunk_id"])
        hits.append(RetrievedChunk(**payload, score=point.score))
    # Fused scores tie often (rank 2 + rank 3 = rank 3 + rank 2), and the Qdrant engine orders ties
    # differently from one process to the next: ties go in document order, so the same question gets
    # the same hits, clarification options and answer in every process.
    hits.sort(key=lambda hit: (-hit.score, hit.file_id, hit.chunk_index))
    if not response.points and not index.tenant_has_chunks(tenant_id):
        # Legitimate (a tenant not onboarded yet) but worth an operator's look.
        logger.warning("tenant has no chunks in the collection", extra={"tenant_id": tenant_id})
    # A picked passage is shown with the neighbours it was offered with: the pick narrows the hits,
    # not their context (tenant, audience and document conditions still hold for every neighbour).
    around = {name: condition for name, condition in constraints.items() if name != "scope_chunk_id"}
    return _expand(hits, tenant_id, audiences, around, settings.context_window)


def _validate_query(query: Any) -> str:
    if not isinstance(query, str) or not query.strip():
        raise InvalidInputError("query is empty")
    if len(query) > MAX_QUERY_CHARS:
        raise InvalidInputError(f"query is longer than {MAX_QUERY_CHARS} characters")
    return query.strip()


def _constraints(
    tenant_id: str, audiences: list[str], domain: str | None, scope: Scope
) -> dict[str, models.FieldCondition]:
    """Named filter conditions (all must hold); the same set guards search and context expansion."""
    conditions = {
        "tenant_id": models.FieldCondition(key="tenant_id", match=models.MatchValue(value=tenant_id)),
        "audience": models.FieldCondition(key="audience", match=models.MatchAny(any=audiences)),
    }
    if domain:
        conditions["domain"] = models.FieldCondition(key="domain", match=models.MatchValue(value=domain))
    for key, values in scope.narrowing():
        # A scope domain next to `domain` adds a second condition on the same key: both must hold.
        conditions[f"scope_{key}"] = models.FieldCondition(key=key, match=models.MatchAny(any=values))
    return conditions


def _permitted(payload: dict[str, Any], tenant_id: str, audiences: list[str], constraints: dict) -> bool:
    """The security filter re-checked on a returned payload (defence in depth)."""
    if payload.get("tenant_id") != tenant_id or not set(payload.get("audience") or ()) & set(audiences):
        return False
    if "domain" in constraints and payload.get("domain") != constraints["domain"].match.value:
        return False
    for key in SCOPE_KEYS:
        condition = constraints.get(f"scope_{key}")
        if condition is not None and payload.get(key) not in condition.match.any:
            return False
    return True


def _rrf(k: int) -> models.Query:
    # Parametrised RRF needs qdrant-client >= 1.16 (and a server that knows it); older: the default k.
    if hasattr(models, "RrfQuery") and hasattr(models, "Rrf"):
        return models.RrfQuery(rrf=models.Rrf(k=k))
    return models.FusionQuery(fusion=models.Fusion.RRF)


def _expand(
    hits: list[RetrievedChunk], tenant_id: str, audiences: list[str], constraints: dict, window: int
) -> list[RetrievedChunk]:
    """Merge each hit with up to `window` neighbours on each side from the same file, in order.

    Neighbours are fetched with the same security conditions. A neighbour that is itself a hit, or
    was already merged into a better hit, is not repeated; expansion stops at such a gap so that the
    merged text is always contiguous.
    """
    if window <= 0 or not hits:
        return hits
    around = [
        models.Filter(
            must=[
                models.FieldCondition(key="file_id", match=models.MatchValue(value=hit.file_id)),
                models.FieldCondition(
                    key="chunk_index", range=models.Range(gte=hit.chunk_index - window, lte=hit.chunk_index + window)
                ),
            ]
        )
        for hit in hits
    ]
    flt = models.Filter(must=[*constraints.values(), models.Filter(should=around)])
    settings = get_settings().retrieval
    with index.qdrant_errors():
        points, _ = index.get_client().scroll(
            settings.collection,
            scroll_filter=flt,
            limit=len(hits) * (2 * window + 1),
            with_payload=True,
            with_vectors=False,
        )
    by_position = {}
    for point in points:
        payload = point.payload or {}
        if _permitted(payload, tenant_id, audiences, constraints):
            by_position[(payload["file_id"], payload["chunk_index"])] = payload

    used = {hit.chunk_id for hit in hits}
    expanded = []
    for hit in hits:
        before: list[dict] = []
        after: list[dict] = []
        for step, side in ((-1, before), (1, after)):
            for offset in range(1, window + 1):
                neighbour = by_position.get((hit.file_id, hit.chunk_index + step * offset))
                if neighbour is None or neighbour["chunk_id"] in used:
                    break
                used.add(neighbour["chunk_id"])
                side.append(neighbour)
        parts = [*reversed(before), hit.model_dump(), *after]
        text, own = _merge(parts, hit.heading, position=len(before))
        expanded.append(
            hit.model_copy(
                update={
                    "text": text,
                    "expanded_from": [p["chunk_id"] for p in parts if p["chunk_id"] != hit.chunk_id],
                    "own_span": list(own),
                }
            )
        )
    return expanded


def _merge(parts: list[dict], hit_heading: str | None, position: int) -> tuple[str, tuple[int, int]]:
    """Texts in document order; a heading line where the section changes; window overlaps removed.
    With the merged text, where the hit's own text (`parts[position]`) is in it: [start, end)."""
    pieces: list[str] = []
    heading = hit_heading
    previous = ""
    own = (0, 0)
    for number, part in enumerate(parts):
        text = part["text"]
        if part.get("heading") and part["heading"] != heading:
            pieces.append(part["heading"].split(HEADING_SEPARATOR)[-1])
        elif previous and number == position and pieces:
            # The chunker's window overlap goes from the neighbour before, not from the hit: the hit's
            # own span is then its whole text, the passage a clarifying question offered and a pick
            # quotes, whichever neighbours this query's window merged around it.
            pieces[-1] = _drop_tail_overlap(pieces[-1], text)
            if not pieces[-1]:
                pieces.pop()
        elif previous:
            text = _drop_overlap(previous, text)
        heading = part.get("heading")
        if text:
            if number == position:
                start = sum(len(piece) + 2 for piece in pieces)
                own = (start, start + len(text))
            pieces.append(text)
        previous = part["text"]
    return "\n\n".join(pieces), own


def _overlap_words(previous: str, text: str) -> int:
    """How many words `text` starts with that end `previous` (the chunker's window overlap), or 0."""
    prev_words, words = previous.split(), text.split()
    for n in range(min(len(prev_words), len(words)), _MIN_OVERLAP_WORDS - 1, -1):
        if prev_words[-n:] == words[:n]:
            return n
    return 0


def _drop_tail_overlap(previous: str, text: str) -> str:
    """Remove from `previous` the words at its end that `text` starts with."""
    n = _overlap_words(previous, text)
    if not n:
        return previous
    return previous[:list(re.finditer(r"\S+", previous))[-n].start()].rstrip()


def _drop_overlap(previous: str, text: str) -> str:
    """Remove from `text` the words that repeat the end of `previous` (the chunker's window overlap)."""
    n = _overlap_words(previous, text)
    return "".join(_WORD_WITH_SPACE.findall(text)[n:]).strip() if n else text
