"""Ingest scaling: chunks/s for generated corpora of growing size (is ingest linear in the corpus?).

    .venv/bin/python benchmarks/ingest_scaling.py [--sizes 1,10,100] [--full-sizes 1,10] [--file-kb 256]

A deterministic generator writes a Persian-looking corpus of the given size in MB (files of
--file-kb each; a third of the files have headings and blank-line paragraphs, a third are one
paragraph per line without headings, a third are whole files without any whitespace, the shapes
that used to become one giant chunk). Two legs are measured:

- `sparse`: the real ingest path up to the encoders without the dense model and Qdrant: file
  walk, load_document (regular files only), chunk_document (with the final size-bounding step and
  the untrusted-text flags) and the BM25 sparse encoder on every chunk's encoder text;
- `full`: `ingest_directory` into a fresh embedded Qdrant store in a temporary AGENT_HOME (dense +
  sparse encoders, upserts, stale-chunk bookkeeping), exactly as `agent ingest` runs.

Linear means chunks/s (and MB/s) stay flat as the corpus grows; bounded memory means the peak RSS
printed after each size does not grow with it (chunks are encoded and written in batches). The figures depend on the machine's
load (other processes share its cores); the load average is printed with them.
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import sys
import tempfile
import time
from pathlib import Path

from private_store import use_private_store

WORDS = (
    "بیمه بدنه فرانشیز خسارت پوشش حق قرارداد بیمه‌گذار بیمه‌گر مبلغ درصد سال خودرو حادثه درمان "
    "بیمارستان سرقت آتش‌سوزی زلزله سیل تعهد سقف پرداخت مدارک کارشناس ارزیابی تمدید فسخ الحاقیه "
    "استثنا شرایط عمومی خصوصی مسافرت عمر پس‌انداز سرمایه فوت ازکارافتادگی"
).split()


def _sentence(rng: random.Random) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(8, 22))) + "."


def _file_text(rng: random.Random, shape: int, nbytes: int) -> str:
    parts: list[str] = []
    size = 0
    section = 0
    while size < nbytes:
        if shape == 0:
            if section % 6 == 0:
                parts.append(f"\n## بخش {section // 6 + 1}\n")
            piece = " ".join(_sentence(rng) for _ in range(rng.randint(2, 6))) + "\n"
            section += 1
        elif shape == 1:
            piece = _sentence(rng)
        else:
            piece = _sentence(rng).replace(" ", "")
        parts.append(piece)
        size += len(piece.encode("utf-8")) + 1
    joiner = "\n" if shape != 2 else ""
    return joiner.join(parts)


def generate(folder: Path, megabytes: float, file_kb: int, seed: int = 11) -> tuple[int, int]:
    rng = random.Random(seed)
    total = int(megabytes * 1_000_000)
    written = files = 0
    while written < total:
        nbytes = min(file_kb * 1000, total - written)
        shape = files % 3
        text = f"---\nfile_id: doc-{files:05d}\ntitle: سند {files}\n---\n# سند {files}\n\n" + _file_text(rng, shape, nbytes)
        path = folder / f"doc-{files:05d}.md"
        path.write_text(text, encoding="utf-8")
        written += path.stat().st_size
        files += 1
    return files, written


def sparse_leg(folder: Path, tenant: str) -> tuple[int, float]:
    from insurance_search.chunking import chunk_document, embedding_text, encoder_text
    from insurance_search.documents import load_document
    from insurance_search.embeddings import sparse_encoder
    from insurance_search.ingest import _candidates

    encoder = sparse_encoder()
    started = time.perf_counter()
    files, _ = _candidates(folder)
    chunks = 0
    batch: list[str] = []
    for path in files:
        for chunk in chunk_document(load_document(path, max_bytes=10**9), tenant):
            batch.append(encoder_text(embedding_text(chunk)))
            chunks += 1
            if len(batch) == 32:
                encoder.embed_passages(batch)
                batch = []
    if batch:
        encoder.embed_passages(batch)
    return chunks, time.perf_counter() - started


def full_leg(folder: Path, tenant: str) -> tuple[int, float]:
    from insurance_search import index
    from insurance_search.ingest import ingest_directory

    use_private_store(Path(tempfile.mkdtemp(prefix="ingest-scaling-home-")))
    started = time.perf_counter()
    report = ingest_directory(folder, tenant, reset=True, max_bytes=10**9)
    seconds = time.perf_counter() - started
    index.reset_caches()
    return report.chunks, seconds


def _peak_rss_mib() -> int:
    """The process's peak RSS so far: sizes run in increasing order, so each row's is that size's own bound."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="1,10,100", help="corpus sizes in MB for the sparse leg")
    parser.add_argument("--full-sizes", default="1", help="corpus sizes in MB for the full leg (dense + Qdrant)")
    parser.add_argument("--file-kb", type=int, default=256)
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("AGENT_LATE_MODEL", "none")

    sizes = [float(s) for s in args.sizes.split(",") if s]
    full_sizes = [float(s) for s in args.full_sizes.split(",") if s]
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}", flush=True)
    print("| leg | corpus MB | files | chunks | seconds | chunks/s | MB/s | peak RSS MiB |")
    print("|---|---|---|---|---|---|---|---|", flush=True)
    for leg, leg_sizes in (("sparse", sizes), ("full", full_sizes)):
        for megabytes in leg_sizes:
            with tempfile.TemporaryDirectory(prefix="ingest-scaling-") as tmp:
                folder = Path(tmp)
                files, written = generate(folder, megabytes, args.file_kb)
                run = sparse_leg if leg == "sparse" else full_leg
                chunks, seconds = run(folder, "bench")
                print(f"| {leg} | {written / 1e6:.1f} | {files} | {chunks} | {seconds:.1f} | {chunks / seconds:.1f} "
                      f"| {written / 1e6 / seconds:.3f} | {_peak_rss_mib()} |", flush=True)
    print(f"load average at the end {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
