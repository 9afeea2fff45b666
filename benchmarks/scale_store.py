"""The embedded store at scale, the old engine beside the new: qdrant-client's local mode and Qdrant Edge.

    .venv/bin/python benchmarks/scale_store.py [--sizes 2000,20000,200000] [--local-max 20000]
                                               [--queries 200] [--searches 40] [--no-turns]

Each (engine, size) runs in a fresh worker process through the project's own store code
(`index.get_client()` with AGENT_QDRANT_ENGINE=local or edge, `index.ensure_collection`,
`index.optimize`, `search()`), so the figures include the translation layer Edge sits behind.
The tenant under test ("sepehr") holds SIZE synthetic chunks plus the sample corpus (really
embedded), and a second tenant holds a tenth as many, so that the tenant filter has something to
exclude. Synthetic chunks are random unit 384-d vectors, 40-term sparse vectors from a Zipf-like
vocabulary and 120-word texts: they measure the store, not retrieval quality
(benchmarks/scale_recall.py measures recall at 20k chunks of real text).

Per worker:
- write: upserts of 512 points, then `index.optimize()` (Edge builds HNSW and payload indexes);
- store query: the retrieve node's query shape on random query vectors (dense and BM25 prefetches
  30 deep with the tenant + audience filter, RRF, top 6, the filter at the top level too);
- whole search: `search()` on the demo's questions, the real query encoders, BM25 terms, the store
  and context expansion (first call, which loads the encoders, left out);
- warm turn (--no-turns to skip): the demo conversations through the real ASL on the local stack,
  every turn after each thread's first;
- ingest/model: the sample corpus ingested into the grown store (`ingest_directory`, as `agent
  ingest` runs it), in chunks/s, over the dense model alone on the same chunks' texts;
- open: a new client on the grown store and its first hybrid query (what a process pays to start);
- peak RSS of the worker, and the store's size on disk per chunk.
Local mode above --local-max is not run: it is brute force (about 17 s a query at 100k chunks).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "benchmarks"))
TENANT, OTHER = "sepehr", "other"
DIM = 384
BATCH = 512


def _words() -> list[str]:
    text = " ".join(p.read_text(encoding="utf-8") for p in sorted((REPO / "samples" / "corpus").rglob("*.md")))
    return sorted({w for w in text.split() if len(w) > 2})


def _synthetic(n: int, tenant: str, rng: np.random.Generator, words: list[str]):
    from qdrant_client import models

    from insurance_search import index

    for start in range(0, n, BATCH):
        size = min(BATCH, n - start)
        dense = rng.standard_normal((size, DIM)).astype(np.float32)
        dense /= np.linalg.norm(dense, axis=1, keepdims=True)
        points = []
        for row, i in enumerate(range(start, start + size)):
            terms = np.unique((rng.pareto(1.1, 40) * 50).astype(np.int64) % 200_000)
            chunk_id = f"{tenant}-syn{i // 20}#{i % 20}"
            payload = {"chunk_id": chunk_id, "file_id": f"{tenant}-syn{i // 20}", "title": f"synthetic {i // 20}",
                       "domain": ("car", "health", "life")[i % 3], "chunk_index": i % 20, "language": "fa",
                       "audience": ["user", "officer", "admin"] if i % 5 else ["officer", "admin"],
                       "tenant_id": tenant, "heading": None, "flags": [],
                       "text": " ".join(words[j] for j in rng.integers(0, len(words), 120))}
            points.append(models.PointStruct(
                id=index.point_id(tenant, chunk_id),
                vector={"dense": dense[row].tolist(),
                        "bm25": models.SparseVector(indices=terms.tolist(), values=rng.integers(1, 5, len(terms)).astype(float).tolist())},
                payload=payload))
        yield points


def _percentiles(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    return {"p50": round(statistics.median(ordered) * 1000, 1),
            "p95": round(ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))] * 1000, 1), "n": len(ordered)}


def _questions() -> list[str]:
    threads = json.loads((REPO / "samples" / "conversations" / "demo.json").read_text(encoding="utf-8"))
    return [t for thread in threads for t in thread["turns"] if len(t.split()) > 2]


def worker(engine: str, n: int, queries: int, searches: int, turns: bool) -> dict:
    from private_store import use_private_store

    home = Path(tempfile.mkdtemp(prefix=f"scale-{engine}-"))
    use_private_store(home, AGENT_QDRANT_ENGINE=engine, AGENT_LATE_MODEL="none")
    from qdrant_client import models

    from insurance_agent.config import get_settings
    from insurance_search import index
    from insurance_search.ingest import ingest_directory
    from insurance_search.search import search

    name = get_settings().retrieval.collection
    rng = np.random.default_rng(7)
    words = _words()
    index.ensure_collection()
    client = index.get_client()
    started = time.perf_counter()
    written = 0
    for tenant, count in ((TENANT, n), (OTHER, n // 10)):
        for points in _synthetic(count, tenant, rng, words):
            client.upsert(name, points=points, wait=True)
            written += len(points)
    write_s = time.perf_counter() - started
    started = time.perf_counter()
    index.optimize()
    optimize_s = time.perf_counter() - started
    # Ingest into the grown store against the dense model alone on the same chunks (the model is
    # loaded first, so neither leg pays for it).
    from ingest_throughput import chunk_texts, dense_alone

    texts = chunk_texts(REPO / "samples" / "corpus" / "sepehr")
    dense_alone(texts[:2], 32)
    report = ingest_directory(REPO / "samples" / "corpus" / "sepehr", TENANT)
    model_s, _ = dense_alone(texts, 32)

    flt = models.Filter(must=[models.FieldCondition(key="tenant_id", match=models.MatchValue(value=TENANT)),
                              models.FieldCondition(key="audience", match=models.MatchAny(any=["user"]))])
    store_times = []
    for _ in range(queries):
        dense = rng.standard_normal(DIM)
        dense = (dense / np.linalg.norm(dense)).tolist()
        terms = np.unique((rng.pareto(1.1, 8) * 50).astype(np.int64) % 200_000).tolist()
        prefetch = [models.Prefetch(query=dense, using="dense", filter=flt, limit=30),
                    models.Prefetch(query=models.SparseVector(indices=terms, values=[1.0] * len(terms)), using="bm25",
                                    filter=flt, limit=30)]
        t0 = time.perf_counter()
        client.query_points(name, prefetch=prefetch, query=models.RrfQuery(rrf=models.Rrf(k=60)), query_filter=flt,
                            limit=6, with_payload=True)
        store_times.append(time.perf_counter() - t0)

    questions = _questions()
    search(questions[0], tenant_id=TENANT, roles=["user"])  # loads the query encoders
    search_times = []
    for i in range(searches):
        t0 = time.perf_counter()
        search(questions[i % len(questions)], tenant_id=TENANT, roles=["user"])
        search_times.append(time.perf_counter() - t0)

    turn_times = _turns(home) if turns else []
    index.reset_caches()  # a process that opens the grown store: its first hybrid query
    t0 = time.perf_counter()
    client = index.get_client()
    client.query_points(name, prefetch=prefetch, query=models.RrfQuery(rrf=models.Rrf(k=60)), query_filter=flt,
                        limit=6, with_payload=True)
    open_s = time.perf_counter() - t0
    # Allocated blocks, not file sizes: Edge's log and segment files are sparse, preallocated ahead.
    disk = sum(p.stat().st_blocks * 512 for p in (home / "qdrant").rglob("*") if p.is_file())
    return {
        "engine": engine, "chunks": written + report.chunks, "write_s": round(write_s, 1),
        "optimize_s": round(optimize_s, 1), "open_s": round(open_s, 2), "written_per_s": round(written / write_s),
        "store": _percentiles(store_times), "search": _percentiles(search_times),
        "turn": _percentiles(turn_times) if turn_times else None,
        "ingest_per_s": round(report.chunks / report.seconds, 2), "model_per_s": round(len(texts) / model_s, 2),
        "rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
        "disk_bytes_per_chunk": round(disk / (written + report.chunks)),
    }


def _turns(home: Path) -> list[float]:
    """Warm turns of the demo conversations through the real ASL (each thread's first turn left out)."""
    from agent_local.cli import Script
    from agent_local.operations import load_accounts
    from agent_local.stack import LocalStack

    threads = json.loads((REPO / "samples" / "conversations" / "demo.json").read_text(encoding="utf-8"))
    accounts = json.loads((REPO / "samples" / "accounts.json").read_text(encoding="utf-8"))
    times = []
    with LocalStack(home, persist=False) as stack:
        load_accounts(accounts if isinstance(accounts, list) else accounts["policies"])
        for item in threads:
            for i, payload in enumerate(Script.model_validate(item).payloads()):
                t0 = time.perf_counter()
                stack.run_turn(payload)
                if i:
                    times.append(time.perf_counter() - t0)
    return times


def _row(r: dict) -> str:
    turn = f"{r['turn']['p50']:>7,.0f} | {r['turn']['p95']:>7,.0f}" if r.get("turn") else f"{'-':>7} | {'-':>7}"
    return (f"| {r['engine']:<5} | {r['chunks']:>8,} | {r['write_s']:>7.1f} | {r['optimize_s']:>6.1f} "
            f"| {r['store']['p50']:>8,.1f} | {r['store']['p95']:>8,.1f} | {r['search']['p50']:>8,.1f} "
            f"| {r['search']['p95']:>8,.1f} | {turn} | {r['ingest_per_s'] / r['model_per_s']:.2f} "
            f"| {r['open_s']:.2f} | {r['rss_mib']:>6,} | {r['disk_bytes_per_chunk']:>6,} |")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="2000,20000,200000", help="synthetic chunks of the measured tenant")
    parser.add_argument("--local-max", type=int, default=20000, help="largest size run on qdrant-client's local mode")
    parser.add_argument("--queries", type=int, default=200, help="store queries per worker (local mode: a tenth)")
    parser.add_argument("--searches", type=int, default=40, help="whole search() calls per worker (local mode: a quarter)")
    parser.add_argument("--no-turns", action="store_true", help="skip the warm turns through the local stack")
    parser.add_argument("--turns-at", type=int, default=20000, help="the size whose workers also time warm turns")
    parser.add_argument("--worker", nargs=2, metavar=("ENGINE", "SIZE"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        engine, size = args.worker[0], int(args.worker[1])
        local = engine == "local"
        print(json.dumps(worker(engine, size, max(5, args.queries // 10) if local else args.queries,
                                max(5, args.searches // 4) if local else args.searches,
                                not args.no_turns and size == args.turns_at)))
        return 0
    load = os.getloadavg()[0]
    print(f"load average at start {load:.1f} on {os.cpu_count()} cores; ms unless marked\n")
    print("| store | chunks | write s | index s | store p50 | store p95 | search p50 | search p95 "
          "| turn p50 | turn p95 | ingest/model | open s | RSS MiB | disk B/chunk |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    results = []
    for size in (int(s) for s in args.sizes.split(",")):
        for engine in ("local", "edge"):
            if engine == "local" and size > args.local_max:
                print(f"| local | {size:,} | not run: brute force (about 17 s a query at 100k chunks) |")
                continue
            command = [sys.executable, __file__, "--worker", engine, str(size), "--queries", str(args.queries),
                       "--searches", str(args.searches), "--turns-at", str(args.turns_at)]
            if args.no_turns:
                command.append("--no-turns")
            done = subprocess.run(command, capture_output=True, text=True, env=os.environ | {"HF_HUB_OFFLINE": "1"})
            if done.returncode:
                print(f"| {engine} | {size:,} | failed: {done.stderr.strip().splitlines()[-1:]} |")
                continue
            results.append(json.loads(done.stdout.strip().splitlines()[-1]))
            print(_row(results[-1]), flush=True)
    by = {(r["engine"], r["chunks"] // 1000): r for r in results}
    for (engine, size), r in sorted(by.items()):
        old = by.get(("local", size))
        if engine == "edge" and old:
            print(f"\nat ~{size}k chunks Edge/local: store p95 {r['store']['p95'] / old['store']['p95']:.3f}, "
                  f"search p95 {r['search']['p95'] / old['search']['p95']:.3f}, RSS {r['rss_mib'] / old['rss_mib']:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
