"""The Qdrant collection: client, schema, and writes (upsert, delete, reset).

Qdrant is a URL in production and an embedded store by default: Qdrant Edge (insurance_search.edge,
the Qdrant engine in-process, with its HNSW and payload indexes), or qdrant-client's local mode
(AGENT_QDRANT_ENGINE=local: brute force, payload filters in Python). Either embedded store can be
opened by one process at a time.
"""

from __future__ import annotations

import atexit
import json
import logging
import threading
import uuid
import warnings
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path

from qdrant_client import QdrantClient, models

from insurance_agent.config import get_settings
from insurance_agent.errors import ConfigurationError, TransientError
from insurance_agent.models.chunks import ChunkPayload
from insurance_search.access import require_tenant
from insurance_search.chunking import embedding_text, encoder_text
from insurance_search.embeddings import (
    DENSE_VECTOR,
    LATE_VECTOR,
    SPARSE_VECTOR,
    VectorConfig,
    dense_encoder,
    late_encoder,
    sparse_encoder,
    vector_config,
)
from insurance_agent.secrets import resolve

logger = logging.getLogger(__name__)

UPSERT_BATCH = 32
_POINT_NAMESPACE = uuid.UUID("6f1d7a52-3c0e-5b8e-9a51-2f0c4f6d8e21")
_KEYWORD_FIELDS = ("tenant_id", "domain", "audience", "file_id")
_RETRYABLE_STATUS = {408, 429, 500, 502, 503, 504}
_ready: set[str] = set()  # collections known to exist in this process
# Two threads opening the embedded store at once would each take its lock: the second one fails.
_client_lock = threading.Lock()
_client: QdrantClient | None = None


def get_client() -> QdrantClient:
    """The process-wide client: Qdrant at AGENT_QDRANT_URL, else the embedded store at qdrant_path.

    The embedded Edge store answers the QdrantClient methods used here (insurance_search.edge).
    """
    global _client
    if _client is None:
        with _client_lock:
            if _client is None:
                _client = _open_client()
    return _client


def _open_client() -> QdrantClient:
    s = get_settings().retrieval
    if s.qdrant_url:
        # No background version probe: a Lambda container is frozen between invocations, and the
        # probe's thread only ever logs a warning.
        api_key = s.qdrant_api_key or resolve("AGENT_QDRANT_API_KEY", "AGENT_QDRANT_API_KEY_SECRET")
        return QdrantClient(url=s.qdrant_url, api_key=api_key, timeout=10, check_compatibility=False)
    if not s.qdrant_path:
        raise ConfigurationError("set AGENT_QDRANT_URL or AGENT_QDRANT_PATH")
    Path(s.qdrant_path).mkdir(parents=True, exist_ok=True)
    if s.qdrant_engine == "edge":
        # Imported here: the functions' packages read a server and do not ship the engine.
        from insurance_search.edge import EdgeClient

        client = EdgeClient(s.qdrant_path)
        try:
            migrate_local_store(client, s.qdrant_path)
        except BaseException:
            client.close()
            raise
    else:
        client = QdrantClient(path=s.qdrant_path)
    # Release the store's lock while the interpreter is intact; closing it from __del__ at
    # shutdown fails with "sys.meta_path is None".
    atexit.register(client.close)
    return client


def is_edge() -> bool:
    s = get_settings().retrieval
    return not s.qdrant_url and s.qdrant_engine == "edge"


def local_store_collections(path: str | Path) -> list[str]:
    """Collections of a qdrant-client local-mode store in `path` (its layout: collection/NAME/)."""
    folder = Path(path) / "collection"
    return sorted(p.name for p in folder.iterdir() if p.is_dir()) if folder.is_dir() else []


def migrate_local_store(client, path: str | Path, page: int = 256) -> dict[str, int]:
    """Copy each collection of a local-mode store in `path` that `client` lacks: vectors, payloads, ids.

    A home made before Edge was the embedded default keeps its chunks without re-embedding them. The
    old files stay where they were (qdrant-client's layout), so AGENT_QDRANT_ENGINE=local still reads
    them; once a collection exists on Edge it is never copied again.
    """
    pending = [name for name in local_store_collections(path) if not client.collection_exists(name)]
    if not pending:
        return {}
    copied: dict[str, int] = {}
    source = QdrantClient(path=str(path))
    try:
        for name in pending:
            params = source.get_collection(name).config.params
            client.create_collection(name, vectors_config=params.vectors, sparse_vectors_config=params.sparse_vectors)
            _create_payload_indexes(client, name)
            offset, copied[name] = None, 0
            while True:
                points, offset = source.scroll(name, limit=page, offset=offset, with_payload=True, with_vectors=True)
                client.upsert(name, points=[models.PointStruct(id=p.id, vector=p.vector, payload=p.payload)
                                            for p in points])
                copied[name] += len(points)
                if offset is None:
                    break
            client.optimize(name)
            logger.warning("copied %d chunks of collection %r from the local-mode store to Qdrant Edge; "
                           "the old files under %s/collection can be deleted", copied[name], name, path)
    finally:
        source.close()
    return copied


def optimize() -> None:
    """After an ingest: the embedded Edge engine builds its HNSW graphs and payload indexes now (a
    Qdrant server's optimizer does it by itself; qdrant-client's local mode has none)."""
    if is_edge() and collection_exists():
        get_client().optimize(get_settings().retrieval.collection)


def reset_caches() -> None:
    """Forget the client and settings (tests that change the environment).

    Closing the client releases the embedded store's lock. Encoders stay cached: they are keyed on
    the model settings, so a changed model still gets its own encoder.
    """
    global _client
    with _client_lock:
        client, _client = _client, None
    if client is not None:
        client.close()
        atexit.unregister(client.close)
    get_settings.cache_clear()
    _ready.clear()


def is_remote() -> bool:
    return bool(get_settings().retrieval.qdrant_url)


@contextmanager
def qdrant_errors() -> Iterator[None]:
    """Turn a networked Qdrant's connection failures and 429/5xx into TransientError (retried by the ASL)."""
    if not is_remote():
        yield
        return
    import httpx
    from qdrant_client.http.exceptions import ResponseHandlingException, UnexpectedResponse

    try:
        yield
    except UnexpectedResponse as exc:
        if exc.status_code in _RETRYABLE_STATUS:
            raise TransientError(f"qdrant returned {exc.status_code}") from exc
        raise
    except (ResponseHandlingException, httpx.TransportError, ConnectionError, TimeoutError) as exc:
        raise TransientError(f"qdrant unreachable ({type(exc).__name__})") from exc


def point_id(tenant_id: str, chunk_id: str) -> str:
    """Deterministic point id: re-ingesting a file overwrites its points instead of duplicating them."""
    return str(uuid.uuid5(_POINT_NAMESPACE, json.dumps([tenant_id, chunk_id])))


def collection_exists() -> bool:
    name = get_settings().retrieval.collection
    if name in _ready:
        return True
    with qdrant_errors():
        exists = get_client().collection_exists(name)
    if exists:
        _ready.add(name)
    return exists


def tenant_has_chunks(tenant_id: str) -> bool:
    """Whether any chunk of the tenant exists (any audience): tells "no match" from "no corpus"."""
    require_tenant(tenant_id)
    with qdrant_errors():
        points, _ = get_client().scroll(
            get_settings().retrieval.collection, scroll_filter=models.Filter(must=[_match("tenant_id", tenant_id)]),
            limit=1, with_payload=False, with_vectors=False,
        )
    return bool(points)


def existing_file_ids(tenant_id: str, page: int = 2048) -> set[str]:
    """The file ids that have chunks for the tenant (one pass over its points, payload field only)."""
    require_tenant(tenant_id)
    if not collection_exists():
        return set()
    client = get_client()
    name = get_settings().retrieval.collection
    found: set[str] = set()
    offset = None
    with qdrant_errors():
        while True:
            points, offset = client.scroll(
                name, scroll_filter=models.Filter(must=[_match("tenant_id", tenant_id)]), limit=page,
                offset=offset, with_payload=models.PayloadSelectorInclude(include=["file_id"]), with_vectors=False,
            )
            found.update(str((point.payload or {}).get("file_id")) for point in points)
            if offset is None:
                return found


def tenant_points(tenant_id: str, fields: Sequence[str], *, file_id: str | None = None, page: int = 2048) -> Iterator[dict]:
    """The payloads (only `fields`) of every chunk of a tenant, or of one of its files; one scroll."""
    require_tenant(tenant_id)
    if not collection_exists():
        return
    client = get_client()
    name = get_settings().retrieval.collection
    conditions = [_match("tenant_id", tenant_id)] + ([_match("file_id", file_id)] if file_id else [])
    offset = None
    while True:
        with qdrant_errors():
            points, offset = client.scroll(
                name, scroll_filter=models.Filter(must=conditions), limit=page, offset=offset,
                with_payload=models.PayloadSelectorInclude(include=list(fields)), with_vectors=False,
            )
        for point in points:
            yield point.payload or {}
        if offset is None:
            return


def file_sources(tenant_id: str) -> dict[str, dict]:
    """file_id -> {"chunks": n, **source} for a tenant's documents (source: what ingest recorded)."""
    found: dict[str, dict] = {}
    for payload in tenant_points(tenant_id, ["file_id", "title", "source"]):
        file_id = str(payload.get("file_id"))
        entry = found.setdefault(file_id, {"title": payload.get("title"), "chunks": 0, **(payload.get("source") or {})})
        entry["chunks"] += 1
    return found


def ensure_collection() -> None:
    """Create the collection if missing; refuse an existing one whose vectors do not fit the models."""
    name = get_settings().retrieval.collection
    if name in _ready:
        return
    client = get_client()
    config = vector_config()
    with qdrant_errors():
        if client.collection_exists(name):
            _check_compatible(client.get_collection(name), config)
        else:
            vectors = {config.dense_name: models.VectorParams(size=config.dense_size, distance=models.Distance.COSINE)}
            if config.late_name:
                vectors[config.late_name] = models.VectorParams(
                    size=config.late_size,
                    distance=models.Distance.COSINE,
                    multivector_config=models.MultiVectorConfig(comparator=models.MultiVectorComparator.MAX_SIM),
                    # Only used to rerank a prefetched set: an HNSW graph over token vectors is waste.
                    hnsw_config=models.HnswConfigDiff(m=0),
                )
            client.create_collection(
                name,
                vectors_config=vectors,
                sparse_vectors_config={config.sparse_name: models.SparseVectorParams(modifier=models.Modifier.IDF)},
            )
            _create_payload_indexes(client, name)
    _ready.add(name)


def upsert_chunks(
    chunks: Sequence[ChunkPayload], *, batch_size: int = UPSERT_BATCH, sources: Mapping[str, dict] | None = None,
) -> int:
    """Embed and write `chunks` in batches; returns how many points were written.

    `sources` (by file_id) is stored as the payload's `source` object: the document's format,
    pages, path, extraction warnings and content hash, for `agent documents` and incremental
    ingest. Retrieval never reads it (ChunkPayload ignores it), so turns do not carry it.
    """
    if not chunks:
        return 0
    for chunk in chunks:  # before any embedding work: a chunk without a valid tenant is a bug
        require_tenant(chunk.tenant_id)
    ensure_collection()
    client = get_client()
    name = get_settings().retrieval.collection
    dense, sparse, late = dense_encoder(), sparse_encoder(), late_encoder()
    for start in range(0, len(chunks), batch_size):
        batch = list(chunks[start : start + batch_size])
        texts = [encoder_text(embedding_text(chunk)) for chunk in batch]
        dense_vectors = dense.embed_passages(texts)
        sparse_vectors = sparse.embed_passages(texts)
        late_vectors = late.embed_passages(texts) if late else [None] * len(batch)
        points = []
        for chunk, d, sp, lt in zip(batch, dense_vectors, sparse_vectors, late_vectors, strict=True):
            vector: dict = {DENSE_VECTOR: d, SPARSE_VECTOR: sp}
            if lt is not None:
                vector[LATE_VECTOR] = lt
            payload = chunk.model_dump()
            if sources and chunk.file_id in sources:
                payload["source"] = sources[chunk.file_id]
            points.append(models.PointStruct(id=point_id(chunk.tenant_id, chunk.chunk_id), vector=vector, payload=payload))
        with qdrant_errors():
            client.upsert(name, points=points, wait=True)
    return len(chunks)


def delete_where(conditions: list[models.Condition]) -> int:
    """Delete the points matching all `conditions`; returns how many there were."""
    if not collection_exists():
        return 0
    client = get_client()
    name = get_settings().retrieval.collection
    flt = models.Filter(must=conditions)
    with qdrant_errors():
        count = client.count(name, count_filter=flt, exact=True).count
        if count:
            client.delete(name, points_selector=models.FilterSelector(filter=flt), wait=True)
    return count


def delete_file(tenant_id: str, file_id: str) -> int:
    """Remove every chunk of one file of one tenant; returns the number removed."""
    require_tenant(tenant_id)
    return delete_where([_match("tenant_id", tenant_id), _match("file_id", file_id)])


def delete_stale(tenant_id: str, file_id: str, keep: Sequence[ChunkPayload]) -> int:
    """Remove the chunks of a file that are not among `keep` (just written): what a re-ingest left over."""
    require_tenant(tenant_id)
    keep_ids = [point_id(tenant_id, chunk.chunk_id) for chunk in keep]
    conditions: list[models.Condition] = [_match("tenant_id", tenant_id), _match("file_id", file_id)]
    if keep_ids:
        conditions.append(models.Filter(must_not=[models.HasIdCondition(has_id=keep_ids)]))
    return delete_where(conditions)


def reset(tenant_id: str) -> int:
    """Remove every chunk of a tenant; returns the number removed."""
    require_tenant(tenant_id)
    return delete_where([_match("tenant_id", tenant_id)])


def _match(key: str, value: str) -> models.FieldCondition:
    return models.FieldCondition(key=key, match=models.MatchValue(value=value))


def _create_payload_indexes(client: QdrantClient, name: str) -> None:
    schemas: dict[str, models.PayloadSchemaType | models.KeywordIndexParams] = {
        field: models.PayloadSchemaType.KEYWORD for field in _KEYWORD_FIELDS
    }
    # Tenant-aware storage on a Qdrant server: every query filters on one tenant.
    schemas["tenant_id"] = models.KeywordIndexParams(type=models.KeywordIndexType.KEYWORD, is_tenant=True)
    # Context expansion filters on a chunk_index range.
    schemas["chunk_index"] = models.PayloadSchemaType.INTEGER
    with warnings.catch_warnings():
        # The embedded store warns that payload indexes do nothing there; that is expected.
        warnings.filterwarnings("ignore", message="Payload indexes have no effect", category=UserWarning)
        for field, schema in schemas.items():
            client.create_payload_index(name, field, field_schema=schema, wait=True)


def _check_compatible(info: models.CollectionInfo, config: VectorConfig) -> None:
    vectors = info.config.params.vectors or {}
    sparse = info.config.params.sparse_vectors or {}
    dense = vectors.get(config.dense_name) if isinstance(vectors, dict) else None
    if dense is None or dense.size != config.dense_size:
        have = dense.size if dense else "none"
        raise ConfigurationError(
            f"collection has dense size {have}, the dense model gives {config.dense_size}: use another collection or re-create it"
        )
    if config.sparse_name not in sparse:
        raise ConfigurationError(f"collection has no sparse vector {config.sparse_name!r}")
    if config.late_name:
        late = vectors.get(config.late_name)
        if late is None or late.size != config.late_size:
            raise ConfigurationError(f"collection has no {config.late_name!r} vector of size {config.late_size}")
