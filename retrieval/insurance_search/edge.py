"""Qdrant Edge, the Qdrant engine in-process, behind the part of QdrantClient that retrieval uses.

The embedded default. qdrant-client's local mode is brute force and evaluates payload filters in
Python (seconds a query at 20k chunks); Edge runs Qdrant's own segments, HNSW and payload indexes
in this process. Requests arrive as qdrant_client models, the types the server path builds, and
answers go back as qdrant_client models, so the query code, ingest and the isolation probes are one
code path for a Qdrant server and for the embedded store. Anything this translation does not know
raises TypeError: a filter condition silently dropped would widen what a user can read.

One shard per collection under `<path>/edge/<collection>`. A shard's write-ahead log admits one
process; the folder's flock says so first, as a typed error the `agent` command can explain. A store
in a read-only folder (an index baked into a Lambda image, under /var/task) is opened from a copy in
the temporary folder: Edge writes its log even to read.
"""

from __future__ import annotations

import fcntl
import json
import logging
import os
import shutil
import tempfile
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import qdrant_edge as edge
from qdrant_client import models
from qdrant_client.http import models as rest

from insurance_agent.errors import StoreBusyError

logger = logging.getLogger(__name__)

EDGE_FOLDER = "edge"
_CONFIG_FILE = "edge_config.json"  # written by Edge itself: the collection's vector parameters
# Qdrant's own defaults for an HNSW graph (a server's collection gets the same).
_HNSW_EF_CONSTRUCT = 100
_HNSW_FULL_SCAN_KB = 10_000
_SCHEMAS = {
    models.PayloadSchemaType.KEYWORD: edge.PayloadSchemaType.Keyword,
    models.PayloadSchemaType.INTEGER: edge.PayloadSchemaType.Integer,
    models.PayloadSchemaType.FLOAT: edge.PayloadSchemaType.Float,
    models.PayloadSchemaType.BOOL: edge.PayloadSchemaType.Bool,
}
_DISTANCES = {
    models.Distance.COSINE: edge.Distance.Cosine,
    models.Distance.DOT: edge.Distance.Dot,
    models.Distance.EUCLID: edge.Distance.Euclid,
}


class EdgeClient:
    """The QdrantClient methods that insurance_search calls, served by Edge shards in one folder."""

    def __init__(self, path: str | Path) -> None:
        self.root = Path(path) / EDGE_FOLDER
        if self.root.is_dir() and not os.access(self.root, os.W_OK):
            copy = Path(tempfile.mkdtemp(prefix="edge-store-")) / EDGE_FOLDER
            shutil.copytree(self.root, copy, ignore=shutil.ignore_patterns(".lock"))
            logger.info("the chunk store folder is read-only; opened from a copy", extra={"copy": str(copy)})
            self.root = copy
        self.root.mkdir(parents=True, exist_ok=True)
        self._lock = open(self.root / ".lock", "a+")  # noqa: SIM115 - held for the client's life
        try:
            fcntl.flock(self._lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError as exc:
            self._lock.close()
            raise StoreBusyError(f"the chunk store {Path(path)} is open in another process") from exc
        self._shards: dict[str, edge.EdgeShard] = {}

    # -- collections -------------------------------------------------------------------------------

    def collection_exists(self, collection_name: str) -> bool:
        return (self._folder(collection_name) / _CONFIG_FILE).is_file()

    def get_collection(self, collection_name: str) -> rest.CollectionInfo:
        config = json.loads((self._folder(collection_name) / _CONFIG_FILE).read_text())
        params = rest.CollectionParams(
            vectors={name: rest.VectorParams.model_validate(v) for name, v in (config.get("vectors") or {}).items()},
            sparse_vectors={name: rest.SparseVectorParams.model_validate(v)
                            for name, v in (config.get("sparse_vectors") or {}).items()},
        )
        shard = self._shard(collection_name)
        info = shard.info()
        return rest.CollectionInfo.model_construct(
            status=rest.CollectionStatus.GREEN, points_count=info.points_count,
            segments_count=info.segments_count, config=rest.CollectionConfig.model_construct(params=params),
            payload_schema={},
        )

    def create_collection(
        self, collection_name: str, vectors_config: dict[str, models.VectorParams],
        sparse_vectors_config: dict[str, models.SparseVectorParams] | None = None, **_: Any,
    ) -> bool:
        config = edge.EdgeConfig(
            vectors={name: _vector_params(params) for name, params in vectors_config.items()},
            sparse_vectors={name: _sparse_params(params) for name, params in (sparse_vectors_config or {}).items()},
        )
        folder = self._folder(collection_name)
        if folder.exists():  # a create that died before its config was written left only segments
            shutil.rmtree(folder)
        self._shards[collection_name] = edge.EdgeShard.create(str(folder), config)
        return True

    def delete_collection(self, collection_name: str) -> bool:
        shard = self._shards.pop(collection_name, None)
        if shard is not None:
            shard.close()
        folder = self._folder(collection_name)
        existed = folder.exists()
        shutil.rmtree(folder, ignore_errors=True)
        return existed

    def create_payload_index(
        self, collection_name: str, field_name: str, field_schema: Any, wait: bool = True, **_: Any,
    ) -> None:
        self._shard(collection_name).update(edge.UpdateOperation.create_field_index(field_name, _schema(field_schema)))

    # -- points ------------------------------------------------------------------------------------

    def upsert(self, collection_name: str, points: Sequence[models.PointStruct], wait: bool = True, **_: Any) -> None:
        batch = [edge.Point(str(p.id), _vectors(p.vector), p.payload) for p in points]
        self._shard(collection_name).update(edge.UpdateOperation.upsert_points(batch))

    def delete(self, collection_name: str, points_selector: models.FilterSelector, wait: bool = True, **_: Any) -> None:
        if not isinstance(points_selector, models.FilterSelector):
            raise TypeError(f"unsupported points selector {type(points_selector).__name__}")
        operation = edge.UpdateOperation.delete_points_by_filter(_filter(points_selector.filter))
        self._shard(collection_name).update(operation)

    def count(self, collection_name: str, count_filter: models.Filter | None = None, exact: bool = True) -> rest.CountResult:
        request = edge.CountRequest(exact=exact, filter=_filter(count_filter))
        return rest.CountResult(count=self._shard(collection_name).count(request))

    def scroll(
        self, collection_name: str, scroll_filter: models.Filter | None = None, limit: int = 10,
        offset: Any = None, with_payload: Any = True, with_vectors: Any = False, **_: Any,
    ) -> tuple[list[rest.Record], str | None]:
        request = edge.ScrollRequest(
            offset=str(offset) if offset is not None else None, limit=limit, filter=_filter(scroll_filter),
            with_payload=_payload_selector(with_payload), with_vector=_with_vectors(with_vectors),
        )
        records, next_offset = self._shard(collection_name).scroll(request)
        points = [rest.Record(id=str(r.id), payload=r.payload, vector=_vectors(r.vector, _rest_vector)) for r in records]
        return points, str(next_offset) if next_offset is not None else None

    def query_points(
        self, collection_name: str, query: Any = None, using: str | None = None,
        prefetch: models.Prefetch | Sequence[models.Prefetch] | None = None, query_filter: models.Filter | None = None,
        limit: int = 10, with_payload: Any = True, score_threshold: float | None = None, **_: Any,
    ) -> rest.QueryResponse:
        request = edge.QueryRequest(
            limit=limit, query=_query(query, using), prefetches=_prefetches(prefetch), filter=_filter(query_filter),
            with_payload=_payload_selector(with_payload), with_vector=False, score_threshold=score_threshold,
        )
        found = self._shard(collection_name).query(request)
        return rest.QueryResponse(points=[
            rest.ScoredPoint(id=str(p.id), version=p.version, score=p.score, payload=p.payload) for p in found
        ])

    # -- maintenance -------------------------------------------------------------------------------

    def optimize(self, collection_name: str) -> bool:
        """Build the HNSW graphs and payload indexes of grown segments (a server's optimizer does this
        in the background; in-process it is a call, made when an ingest finishes)."""
        shard = self._shard(collection_name)
        changed = shard.optimize()
        shard.flush()
        return changed

    def close(self) -> None:
        for shard in self._shards.values():
            shard.close()
        self._shards.clear()
        if not self._lock.closed:
            fcntl.flock(self._lock, fcntl.LOCK_UN)
            self._lock.close()

    def _folder(self, collection_name: str) -> Path:
        if not collection_name or "/" in collection_name or collection_name.startswith("."):
            raise ValueError(f"invalid collection name {collection_name!r}")
        return self.root / collection_name

    def _shard(self, collection_name: str) -> edge.EdgeShard:
        shard = self._shards.get(collection_name)
        if shard is None:
            if not self.collection_exists(collection_name):
                raise ValueError(f"Collection {collection_name} not found")
            shard = self._shards[collection_name] = edge.EdgeShard.load(str(self._folder(collection_name)))
        return shard


# -- translation: qdrant_client models -> qdrant_edge ---------------------------------------------------


def _vector_params(params: models.VectorParams) -> edge.EdgeVectorParams:
    multivector = None
    if params.multivector_config is not None:
        if params.multivector_config.comparator != models.MultiVectorComparator.MAX_SIM:
            raise TypeError(f"unsupported multivector comparator {params.multivector_config.comparator}")
        multivector = edge.MultiVectorConfig(edge.MultiVectorComparator.MaxSim)
    hnsw = None
    if params.hnsw_config is not None and params.hnsw_config.m is not None:
        hnsw = edge.HnswIndexConfig(
            m=params.hnsw_config.m, ef_construct=params.hnsw_config.ef_construct or _HNSW_EF_CONSTRUCT,
            full_scan_threshold=params.hnsw_config.full_scan_threshold or _HNSW_FULL_SCAN_KB,
        )
    return edge.EdgeVectorParams(size=params.size, distance=_DISTANCES[params.distance],
                                 multivector_config=multivector, hnsw_config=hnsw)


def _sparse_params(params: models.SparseVectorParams) -> edge.EdgeSparseVectorParams:
    modifier = edge.Modifier.Idf if params.modifier == models.Modifier.IDF else None
    return edge.EdgeSparseVectorParams(modifier=modifier)


def _schema(schema: Any) -> Any:
    if isinstance(schema, models.KeywordIndexParams):
        return edge.KeywordIndexParams(is_tenant=schema.is_tenant, on_disk=schema.on_disk)
    if schema in _SCHEMAS:
        return _SCHEMAS[schema]
    raise TypeError(f"unsupported payload index schema {schema!r}")


def _vectors(vector: Any, convert: Any = None) -> Any:
    """A point's vector or named vectors, each through `convert` (default: to Edge's types)."""
    convert = convert or _vector
    if isinstance(vector, dict):
        return {name: convert(value) for name, value in vector.items()}
    return convert(vector)


def _vector(value: Any) -> Any:
    if isinstance(value, models.SparseVector):
        return edge.SparseVector(list(value.indices), [float(v) for v in value.values])
    return value


def _rest_vector(value: Any) -> Any:
    if isinstance(value, edge.SparseVector):
        return rest.SparseVector(indices=value.indices, values=value.values)
    return value


def _filter(flt: models.Filter | None) -> edge.Filter | None:
    if flt is None:
        return None
    if not isinstance(flt, models.Filter):
        raise TypeError(f"unsupported filter {type(flt).__name__}")
    if flt.min_should is not None:
        raise TypeError("unsupported filter clause min_should")
    return edge.Filter(must=_conditions(flt.must), should=_conditions(flt.should), must_not=_conditions(flt.must_not))


def _conditions(conditions: Any) -> list | None:
    if conditions is None:
        return None
    if not isinstance(conditions, list):
        conditions = [conditions]
    return [_condition(c) for c in conditions]


def _condition(condition: Any) -> Any:
    if isinstance(condition, models.Filter):
        return _filter(condition)
    if isinstance(condition, models.HasIdCondition):
        return edge.HasIdCondition({str(i) for i in condition.has_id})
    if not isinstance(condition, models.FieldCondition):
        raise TypeError(f"unsupported filter condition {type(condition).__name__}")
    unsupported = [name for name in ("geo_bounding_box", "geo_radius", "geo_polygon", "values_count", "is_empty", "is_null")
                   if getattr(condition, name) is not None]
    if unsupported or (condition.match is None) == (condition.range is None):
        raise TypeError(f"unsupported condition on {condition.key!r}: one match or one range is translated")
    if condition.range is not None:
        if not isinstance(condition.range, models.Range):
            raise TypeError(f"unsupported range {type(condition.range).__name__}")
        r = condition.range
        return edge.FieldCondition(condition.key, range=edge.RangeFloat(gte=r.gte, gt=r.gt, lte=r.lte, lt=r.lt))
    return edge.FieldCondition(condition.key, match=_match(condition.match))


def _match(match: Any) -> Any:
    if isinstance(match, models.MatchValue):
        return edge.MatchValue(match.value)
    if isinstance(match, models.MatchAny):
        return edge.MatchAny(list(match.any))
    if isinstance(match, models.MatchExcept):
        return edge.MatchExcept(list(match.except_))
    raise TypeError(f"unsupported match {type(match).__name__}")


def _query(query: Any, using: str | None) -> Any:
    if query is None:
        return None
    if isinstance(query, models.RrfQuery):
        return edge.Fusion.Rrf(k=query.rrf.k if query.rrf.k is not None else 60)
    if isinstance(query, models.FusionQuery):
        if query.fusion != models.Fusion.RRF:
            raise TypeError(f"unsupported fusion {query.fusion}")
        return edge.Fusion.Rrf(k=60)  # Qdrant's default constant
    if isinstance(query, models.NearestQuery):
        query = query.nearest
    if isinstance(query, models.SparseVector | list):
        return edge.Query.Nearest(_vector(query), using=using)
    raise TypeError(f"unsupported query {type(query).__name__}")


def _prefetches(prefetch: models.Prefetch | Sequence[models.Prefetch] | None) -> list[edge.Prefetch] | None:
    if prefetch is None:
        return None
    items: Iterable[models.Prefetch] = [prefetch] if isinstance(prefetch, models.Prefetch) else prefetch
    out = []
    for item in items:
        if item.lookup_from is not None or item.params is not None:
            raise TypeError("unsupported prefetch: lookup_from and search params are not translated")
        out.append(edge.Prefetch(
            limit=item.limit if item.limit is not None else 10, query=_query(item.query, item.using),
            prefetches=_prefetches(item.prefetch), filter=_filter(item.filter), score_threshold=item.score_threshold,
        ))
    return out


def _payload_selector(with_payload: Any) -> Any:
    if isinstance(with_payload, bool):
        return with_payload
    if isinstance(with_payload, models.PayloadSelectorInclude):
        return edge.PayloadSelector.Include(list(with_payload.include))
    if isinstance(with_payload, models.PayloadSelectorExclude):
        return edge.PayloadSelector.Exclude(list(with_payload.exclude))
    if isinstance(with_payload, list):
        return list(with_payload)
    raise TypeError(f"unsupported with_payload {with_payload!r}")


def _with_vectors(with_vectors: Any) -> Any:
    if isinstance(with_vectors, bool | list):
        return with_vectors
    raise TypeError(f"unsupported with_vectors {with_vectors!r}")
