"""Query latency at a 20k-chunk tenant: the embedded qdrant-client store against Qdrant Edge.

    .venv/bin/pip install qdrant-edge-py==0.9.0     # not a project dependency: this benchmark only
    .venv/bin/python benchmarks/scale_edge.py [--chunks 20000] [--queries 200]

The embedded default (qdrant-client's local mode) is brute force and filters payloads in Python
(docs/retrieval.md: 1.7 s a hybrid query at 10k chunks). Qdrant Edge (`qdrant-edge-py`) is the
Qdrant engine in-process: HNSW, payload indexes and the same query API. Both get the retrieve
node's query shape: a dense and a sparse prefetch (each 30 deep, each with the tenant + audience
filter), RRF, top 6, the same filter at the top level. The data are synthetic (random unit 384-d
vectors, sparse vectors of 40 term ids from a Zipf-like vocabulary), written for the measured
tenant plus a second tenant of a tenth the size, so that the filter has something to exclude:
this measures the store, not retrieval quality (which needs real embeddings of every chunk: about
an hour for 20k chunks with the dense model on this machine, not run).
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
import uuid

DIM = 384


def _dense(rng: random.Random) -> list[float]:
    v = [rng.gauss(0, 1) for _ in range(DIM)]
    norm = sum(x * x for x in v) ** 0.5
    return [x / norm for x in v]


def _sparse(rng: random.Random) -> tuple[list[int], list[float]]:
    terms = sorted({int(rng.paretovariate(1.1) * 50) % 200_000 for _ in range(40)})
    return terms, [float(rng.randint(1, 4)) for _ in terms]


def _rows(n_main: int, seed: int):
    rng = random.Random(seed)
    for i in range(n_main + n_main // 10):
        tenant = "big" if i < n_main else "other"
        audience = ["user", "officer", "admin"] if i % 5 else ["officer", "admin"]
        payload = {"tenant_id": tenant, "file_id": f"f{i // 20}", "chunk_index": i % 20, "audience": audience,
                   "domain": ("car", "health", "life")[i % 3], "text": f"chunk {i}"}
        yield str(uuid.UUID(int=i + 1)), _dense(rng), _sparse(rng), payload


def edge(rows, queries, prefetch: int, k: int) -> dict:
    import qdrant_edge as q

    folder = tempfile.mkdtemp(prefix="edge-")
    config = q.EdgeConfig(vectors={"dense": q.EdgeVectorParams(size=DIM, distance=q.Distance.Cosine)},
                          sparse_vectors={"bm25": q.EdgeSparseVectorParams(modifier=q.Modifier.Idf)})
    shard = q.EdgeShard.create(folder, config)
    for field, schema in (("tenant_id", q.PayloadSchemaType.Keyword), ("audience", q.PayloadSchemaType.Keyword),
                          ("file_id", q.PayloadSchemaType.Keyword), ("chunk_index", q.PayloadSchemaType.Integer)):
        shard.update(q.UpdateOperation.create_field_index(field, schema))
    started = time.perf_counter()
    batch = []
    for pid, dense, (idx, val), payload in rows:
        batch.append(q.Point(pid, {"dense": dense, "bm25": q.SparseVector(idx, val)}, payload))
        if len(batch) == 512:
            shard.update(q.UpdateOperation.upsert_points(batch))
            batch = []
    if batch:
        shard.update(q.UpdateOperation.upsert_points(batch))
    shard.flush()
    shard.optimize()  # build HNSW and the payload indexes, as a server's optimizer would
    write_s = time.perf_counter() - started
    flt = q.Filter(must=[q.FieldCondition("tenant_id", match=q.MatchValue("big")),
                         q.FieldCondition("audience", match=q.MatchAny(["user"]))])
    times = []
    for dense, (idx, val) in queries:
        t0 = time.perf_counter()
        hits = shard.query(q.QueryRequest(
            limit=k, filter=flt, with_payload=True, query=q.Fusion.Rrf(k=60),
            prefetches=[q.Prefetch(limit=prefetch, query=q.Query.Nearest(dense, using="dense"), filter=flt),
                        q.Prefetch(limit=prefetch, query=q.Query.Nearest(q.SparseVector(idx, val), using="bm25"),
                                   filter=flt)]))
        times.append(time.perf_counter() - t0)
        assert hits and all(h.payload["tenant_id"] == "big" and "user" in h.payload["audience"] for h in hits)
    shard.close()
    return {"write_s": round(write_s, 1), **_stats(times)}


def local(rows, queries, prefetch: int, k: int) -> dict:
    from qdrant_client import QdrantClient, models

    client = QdrantClient(path=tempfile.mkdtemp(prefix="local-"))
    client.create_collection("c", vectors_config={"dense": models.VectorParams(size=DIM, distance=models.Distance.COSINE)},
                             sparse_vectors_config={"bm25": models.SparseVectorParams(modifier=models.Modifier.IDF)})
    started = time.perf_counter()
    batch = []
    for pid, dense, (idx, val), payload in rows:
        batch.append(models.PointStruct(id=pid, vector={"dense": dense, "bm25": models.SparseVector(indices=idx, values=val)},
                                        payload=payload))
        if len(batch) == 512:
            client.upsert("c", points=batch)
            batch = []
    if batch:
        client.upsert("c", points=batch)
    write_s = time.perf_counter() - started
    flt = models.Filter(must=[models.FieldCondition(key="tenant_id", match=models.MatchValue(value="big")),
                              models.FieldCondition(key="audience", match=models.MatchAny(any=["user"]))])
    times = []
    for dense, (idx, val) in queries:
        t0 = time.perf_counter()
        client.query_points("c", limit=k, query_filter=flt, query=models.FusionQuery(fusion=models.Fusion.RRF), prefetch=[
            models.Prefetch(query=dense, using="dense", limit=prefetch, filter=flt),
            models.Prefetch(query=models.SparseVector(indices=idx, values=val), using="bm25", limit=prefetch, filter=flt)])
        times.append(time.perf_counter() - t0)
    client.close()
    return {"write_s": round(write_s, 1), **_stats(times)}


def _stats(times: list[float]) -> dict:
    ordered = sorted(times)
    return {"queries": len(times), "p50_ms": round(statistics.median(ordered) * 1000, 1),
            "p95_ms": round(ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))] * 1000, 1)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--chunks", type=int, default=20_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--local-queries", type=int, default=10, help="the embedded store is slow: fewer queries")
    args = parser.parse_args()
    rng = random.Random(99)
    queries = [(_dense(rng), _sparse(rng)) for _ in range(args.queries)]
    print(f"{args.chunks} chunks for the measured tenant (+{args.chunks // 10} for another), 30-deep prefetches, top 6")
    print("| store | write s | queries | p50 ms | p95 ms |\n|---|---:|---:|---:|---:|")
    result = edge(_rows(args.chunks, 1), queries, 30, 6)
    print(f"| Qdrant Edge 0.9 (HNSW, payload indexes) | {result['write_s']} | {result['queries']} | "
          f"{result['p50_ms']} | {result['p95_ms']} |", flush=True)
    result = local(_rows(args.chunks, 1), queries[: args.local_queries], 30, 6)
    print(f"| qdrant-client local mode (the embedded default) | {result['write_s']} | {result['queries']} | "
          f"{result['p50_ms']} | {result['p95_ms']} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
