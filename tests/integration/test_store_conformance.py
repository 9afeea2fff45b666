"""One behaviour on both store paths: Qdrant Edge (the embedded default) and qdrant-client.

qdrant-client's local mode stands in for a Qdrant server's API: it is the same client code and the
same request models that production sends over the network. The same collection is built through
each path and the same requests must return the same points in the same order (points whose scores
tie may swap), with every filter shape the retrieval code sends: tenant and audience, domain and
scope, context expansion's range, a re-ingest's must_not, counts, scroll pages and deletes.
"""

from __future__ import annotations

import random

import pytest
from insurance_search import index
from insurance_search.documents import Document
from insurance_search.ingest import ingest_documents
from insurance_search.search import search
from qdrant_client import models

ENGINES = ("edge", "local")
COLLECTION = "conformance"
TENANTS = ("acme", "globex", "initech")
DIM = 384


def _use(mp: pytest.MonkeyPatch, engine: str, path) -> None:
    mp.delenv("AGENT_QDRANT_URL", raising=False)
    mp.setenv("AGENT_QDRANT_ENGINE", engine)
    mp.setenv("AGENT_QDRANT_PATH", str(path))
    mp.setenv("AGENT_COLLECTION", COLLECTION)
    mp.setenv("AGENT_LATE_MODEL", "none")
    mp.setenv("HF_HUB_OFFLINE", "1")
    index.reset_caches()


def _ranked(points) -> list[list[str]]:
    """Ids grouped by score, best first: the order that must agree, ties aside."""
    groups: dict[float, list[str]] = {}
    for point in points:
        groups.setdefault(round(point.score, 5), []).append(str(point.id))
    return [sorted(groups[score]) for score in sorted(groups, reverse=True)]


class Ranking(list):
    """Score groups, best first. The last group may be cut at the limit: which of its tied points
    make the cut is not part of the contract, only how many do."""

    def __eq__(self, other):
        return (len(self) == len(other) and list(self[:-1]) == list(other[:-1])
                and [len(g) for g in self[-1:]] == [len(g) for g in other[-1:]])


class Payloads(dict):
    """The payloads of returned points: equal wherever both paths returned the same point."""

    def __eq__(self, other):
        shared = self.keys() & other.keys()
        return len(shared) >= min(len(self), len(other)) - 2 and all(self[k] == other[k] for k in shared)


# -- the client calls, on synthetic vectors -------------------------------------------------------------


def _points(n: int, seed: int = 7) -> list[models.PointStruct]:
    rng = random.Random(seed)
    points = []
    for i in range(n):
        dense = [rng.gauss(0, 1) for _ in range(DIM)]
        terms = sorted(rng.sample(range(2000), 12))
        payload = {
            "tenant_id": TENANTS[i % 3], "file_id": f"f{i // 10}", "chunk_index": i % 10, "chunk_id": f"c{i}",
            "audience": ["user", "officer", "admin"] if i % 4 else ["officer", "admin"],
            "domain": ("auto", "health")[i % 2], "text": f"chunk {i}", "source": {"format": "md", "pages": [i % 3]},
        }
        points.append(models.PointStruct(
            id=index.point_id(payload["tenant_id"], payload["chunk_id"]),
            # Term weights vary as BM25's do: tied leg scores would make the fused order arbitrary.
            vector={"dense": dense, "bm25": models.SparseVector(indices=terms, values=[rng.uniform(0.5, 3) for _ in terms])},
            payload=payload,
        ))
    return points


def _security(tenant: str, audiences: list[str], domain: str | None = None) -> models.Filter:
    must = [models.FieldCondition(key="tenant_id", match=models.MatchValue(value=tenant)),
            models.FieldCondition(key="audience", match=models.MatchAny(any=audiences))]
    if domain:
        must.append(models.FieldCondition(key="domain", match=models.MatchValue(value=domain)))
    return models.Filter(must=must)


def _client_answers(client, points: list[models.PointStruct]) -> dict[str, object]:
    rng = random.Random(11)
    answers: dict[str, object] = {}
    for q in range(6):
        dense = [rng.gauss(0, 1) for _ in range(DIM)]
        sparse = models.SparseVector(indices=sorted(rng.sample(range(2000), 40)), values=[1.0] * 40)
        for tenant in (*TENANTS, "nobody"):
            for audiences in (["user"], ["officer", "admin"]):
                flt = _security(tenant, audiences, domain="auto" if q % 2 else None)
                prefetch = [models.Prefetch(query=dense, using="dense", filter=flt, limit=20),
                            models.Prefetch(query=sparse, using="bm25", filter=flt, limit=20)]
                key = f"{q}/{tenant}/{'+'.join(audiences)}"
                fused = client.query_points(COLLECTION, prefetch=prefetch, query=models.RrfQuery(rrf=models.Rrf(k=60)),
                                            query_filter=flt, limit=8, with_payload=True)
                answers[f"rrf {key}"] = Ranking(_ranked(fused.points))
                answers[f"payloads {key}"] = Payloads({str(p.id): p.payload for p in fused.points})
                dense_only = client.query_points(COLLECTION, query=dense, using="dense", query_filter=flt, limit=5)
                answers[f"dense {key}"] = [str(p.id) for p in dense_only.points]
                answers[f"dense scores {key}"] = [round(p.score, 4) for p in dense_only.points]
    around = models.Filter(must=[
        *_security("acme", ["user"]).must,
        models.Filter(should=[models.Filter(must=[
            models.FieldCondition(key="file_id", match=models.MatchValue(value=f"f{f}")),
            models.FieldCondition(key="chunk_index", range=models.Range(gte=2, lte=4)),
        ]) for f in (0, 3)]),
    ])
    records, _ = client.scroll(COLLECTION, scroll_filter=around, limit=50, with_payload=True, with_vectors=False)
    answers["expansion"] = sorted((r.payload["file_id"], r.payload["chunk_index"]) for r in records)
    pages, offset = [], None
    while True:
        records, offset = client.scroll(COLLECTION, scroll_filter=_security("globex", ["admin"]), limit=7, offset=offset,
                                        with_payload=models.PayloadSelectorInclude(include=["file_id"]), with_vectors=False)
        pages.append([(str(r.id), r.payload) for r in records])
        if offset is None:
            break
    answers["scroll pages"] = pages
    keep = [str(p.id) for p in points if p.payload["file_id"] == "f1"][:3]
    stale = models.Filter(must=[models.FieldCondition(key="file_id", match=models.MatchValue(value="f1")),
                                models.Filter(must_not=[models.HasIdCondition(has_id=keep)])])
    answers["count stale"] = client.count(COLLECTION, count_filter=stale, exact=True).count
    client.delete(COLLECTION, points_selector=models.FilterSelector(filter=stale), wait=True)
    answers["count after delete"] = client.count(COLLECTION, exact=True).count
    answers["tenant counts"] = [client.count(COLLECTION, count_filter=_security(t, ["admin"]), exact=True).count
                                for t in (*TENANTS, "nobody")]
    return answers


def test_the_client_calls_answer_alike_on_both_engines(tmp_path):
    points = _points(240)
    answers = {}
    for engine in ENGINES:
        with pytest.MonkeyPatch.context() as mp:
            _use(mp, engine, tmp_path / engine)
            index.ensure_collection()
            client = index.get_client()
            for start in range(0, len(points), 64):
                client.upsert(COLLECTION, points=points[start:start + 64], wait=True)
            index.optimize()
            answers[engine] = _client_answers(client, points)
            index.reset_caches()
    edge, local = answers["edge"], answers["local"]
    assert edge.keys() == local.keys()
    for key in edge:
        assert edge[key] == local[key], key
    # Not vacuous: the filters kept and excluded points, and the delete removed some.
    assert all(not edge[f"payloads 0/nobody/{a}"] for a in ("user", "officer+admin"))
    acme = edge["payloads 0/acme/user"].values()
    assert acme and all(p["tenant_id"] == "acme" and "user" in p["audience"] for p in acme)
    assert local["count stale"] == 7 and local["count after delete"] == 240 - 7
    assert local["expansion"] and len(local["scroll pages"]) > 1


# -- the retrieval pipeline, through search() ----------------------------------------------------------

DOCS = {
    "acme": [
        Document(file_id="auto", title="بیمه بدنه خودرو", domain="auto", text=(
            "# بیمه بدنه\n\n## فرانشیز\n\nفرانشیز خسارت اول ۱۰ درصد و خسارت دوم ۲۰ درصد است.\n\n"
            "## مدارک\n\nکارت ماشین، گواهینامه و کروکی پلیس لازم است.\n\n"
            "## مهلت\n\nخسارت را حداکثر پنج روز کاری پس از حادثه اعلام کنید.\n")),
        Document(file_id="health", title="بیمه درمان", domain="health", text=(
            "# درمان تکمیلی\n\n## دندانپزشکی\n\nهزینه دندانپزشکی پس از شش ماه دوره انتظار تا سقف تعهد جبران می‌شود.\n\n"
            "## زایمان\n\nدوره انتظار زایمان نه ماه است.\n")),
        Document(file_id="fraud", title="Fraud review", domain="auto", audience=["officer"], text=(
            "# Fraud review\n\n## Threshold\n\nClaims above 90 million rials go to the fraud desk.\n")),
    ],
    "globex": [
        Document(file_id="auto", title="Globex motor", domain="auto", text=(
            "# Globex motor\n\n## Deductible\n\nGlobex clients pay a flat deductible of 777 dollars on every claim.\n")),
    ],
}
QUERIES = ("فرانشیز خسارت دوم چقدر است؟", "مهلت اعلام خسارت", "دوره انتظار دندانپزشکی", "deductible claim",
           "fraud desk threshold")
ASKS = [
    {"tenant_id": "acme", "roles": ["user"]},
    {"tenant_id": "acme", "roles": ["officer"]},
    {"tenant_id": "acme", "roles": ["user"], "domain": "health"},
    {"tenant_id": "acme", "roles": ["admin"], "scope": {"file_id": ["auto", "fraud"]}},
    {"tenant_id": "globex", "roles": ["user"]},
    {"tenant_id": "initech", "roles": ["user"]},  # no chunks at all
]


def _search_answers() -> dict[str, list]:
    answers = {}
    for query in QUERIES:
        for ask in ASKS:
            hits = search(query, k=4, **ask)
            answers[f"{query} {ask}"] = [(h.tenant_id, h.chunk_id, h.text, tuple(h.expanded_from), round(h.score, 5))
                                         for h in hits]
    answers["has chunks"] = [index.tenant_has_chunks(t) for t in ("acme", "globex", "initech")]
    answers["sources"] = sorted(index.file_sources("acme"))
    return answers


def test_search_answers_alike_on_both_engines(tmp_path):
    answers = {}
    for engine in ENGINES:
        with pytest.MonkeyPatch.context() as mp:
            _use(mp, engine, tmp_path / engine)
            mp.setenv("AGENT_CONTEXT_WINDOW", "1")
            for tenant, docs in DOCS.items():
                ingest_documents(docs, tenant)
            answers[engine] = _search_answers()
            index.reset_caches()
    assert answers["edge"] == answers["local"]
    local = answers["local"]
    assert local.pop("has chunks") == [True, True, False] and local.pop("sources") == ["auto", "fraud", "health"]
    assert all(not hits for key, hits in local.items() if "initech" in key)
    assert all(t == "globex" for key, hits in local.items() if "'globex'" in key for t, *_ in hits)
    officer_only = [key for key, hits in local.items() if any(c.startswith("fraud#") for _, c, *_ in hits)]
    assert officer_only and all("officer" in key or "admin" in key for key in officer_only)


def test_a_local_mode_home_is_copied_to_edge_once(tmp_path):
    """A home written by qdrant-client's local mode opens on Edge with the same chunks, not re-embedded."""
    with pytest.MonkeyPatch.context() as mp:
        _use(mp, "local", tmp_path)
        ingest_documents(DOCS["acme"], "acme")
        before = _search_answers()
        index.reset_caches()
        _use(mp, "edge", tmp_path)
        assert index.local_store_collections(tmp_path) == [COLLECTION]
        after = _search_answers()
        assert after == before and before[f"{QUERIES[0]} {ASKS[0]}"]
        index.reset_caches()
        # Opened again: the Edge collection exists, so nothing is copied a second time.
        assert index.migrate_local_store(index.get_client(), tmp_path) == {}
        index.reset_caches()


def test_a_read_only_store_opens_from_a_copy(tmp_path, monkeypatch):
    """An index baked into a Lambda image lies under read-only /var/task; Edge writes its log to open."""
    from insurance_search import edge

    with pytest.MonkeyPatch.context() as mp:
        _use(mp, "edge", tmp_path)
        ingest_documents(DOCS["globex"], "globex")
        expected = search("deductible", tenant_id="globex", roles=["user"])
        index.reset_caches()
        baked = {p: p.stat().st_mtime_ns for p in (tmp_path / edge.EDGE_FOLDER).rglob("*") if p.is_file()}
        real_access = edge.os.access
        # The tests run as root, for whom every folder is writable: the folder says it is not.
        mp.setattr(edge.os, "access", lambda p, mode: False if mode == edge.os.W_OK else real_access(p, mode))
        client = index.get_client()
        assert client.root != tmp_path / edge.EDGE_FOLDER and client.root.is_dir()
        assert search("deductible", tenant_id="globex", roles=["user"]) == expected and expected
        index.reset_caches()
        assert {p: p.stat().st_mtime_ns for p in baked} == baked


@pytest.mark.parametrize("flt", [
    models.Filter(must=[models.FieldCondition(key="tenant_id", is_empty=True)]),
    models.Filter(must=[models.FieldCondition(key="loc", geo_radius=models.GeoRadius(
        center=models.GeoPoint(lon=0, lat=0), radius=1.0))]),
    models.Filter(min_should=models.MinShould(conditions=[
        models.FieldCondition(key="domain", match=models.MatchValue(value="auto"))], min_count=1)),
    models.Filter(must=[models.FieldCondition(key="text", match=models.MatchText(text="claim"))]),
    models.Filter(must=[models.IsNullCondition(is_null=models.PayloadField(key="domain"))]),
])
def test_a_filter_edge_cannot_translate_is_refused_not_dropped(tmp_path, flt):
    """Dropping a condition would widen what a caller reads: an unknown shape fails instead."""
    with pytest.MonkeyPatch.context() as mp:
        _use(mp, "edge", tmp_path)
        index.ensure_collection()
        client = index.get_client()
        with pytest.raises(TypeError, match="unsupported"):
            client.count(COLLECTION, count_filter=flt, exact=True)
        with pytest.raises(TypeError, match="unsupported"):
            client.query_points(COLLECTION, query=[0.1] * DIM, using="dense", query_filter=flt, limit=3)
        index.reset_caches()


def test_a_second_process_gets_a_typed_busy_error(tmp_path):
    import subprocess
    import sys

    from insurance_agent.errors import StoreBusyError
    from insurance_search.edge import EdgeClient

    holder = EdgeClient(tmp_path)
    try:
        done = subprocess.run([sys.executable, "-c", "import sys; from insurance_search.edge import EdgeClient\n"
                               "try:\n    EdgeClient(sys.argv[1])\nexcept Exception as e:\n"
                               "    print(type(e).__name__, e)", str(tmp_path)], capture_output=True, text=True)
        assert done.stdout.startswith("StoreBusyError the chunk store") and "another process" in done.stdout
        assert issubclass(StoreBusyError, RuntimeError)
    finally:
        holder.close()
    EdgeClient(tmp_path).close()  # released: the next process opens it


def test_tied_scores_come_back_in_document_order_whatever_the_engine_returns(tmp_path):
    """Qdrant orders fused ties differently from one process to the next; search() must not, or the
    same question gets its clarification options in another order in another function's container."""
    from pathlib import Path

    from insurance_search.ingest import ingest_directory

    corpus = Path(__file__).resolve().parents[2] / "samples" / "corpus" / "sepehr"
    with pytest.MonkeyPatch.context() as mp:
        _use(mp, "edge", tmp_path)
        ingest_directory(corpus, "sepehr")
        question = "حق بیمه چقدر است؟"
        hits = search(question, tenant_id="sepehr", roles=["user"])
        scores = [h.score for h in hits]
        assert len(set(scores)) < len(scores), "the question no longer has tied hits: pick another"
        client_type = type(index.get_client())
        real = client_type.query_points

        def reversed_ties(self, *args, **kwargs):
            response = real(self, *args, **kwargs)
            response.points.reverse()  # every tie in the other order (and everything else too)
            return response

        mp.setattr(client_type, "query_points", reversed_ties)
        again = search(question, tenant_id="sepehr", roles=["user"])
        assert [h.chunk_id for h in again] == [h.chunk_id for h in hits]
        index.reset_caches()


def test_threads_opening_the_store_at_once_share_one_client(tmp_path):
    """`agent serve` answers concurrent first requests: each opening the store would take its lock."""
    import threading

    with pytest.MonkeyPatch.context() as mp:
        _use(mp, "edge", tmp_path)
        start = threading.Barrier(8)
        clients, errors = [], []

        def open_store():
            start.wait()
            try:
                clients.append(index.get_client())
            except Exception as error:  # noqa: BLE001 - the assertion names it
                errors.append(error)

        threads = [threading.Thread(target=open_store) for _ in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert errors == [] and len(clients) == 8 and len({id(c) for c in clients}) == 1
        index.reset_caches()
