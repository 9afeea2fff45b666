"""Retrieval end to end on an embedded Qdrant store with the real offline encoders.

Two tenants hold a file with the same file_id; tenant A also has an officer-only document. The
assertions are about what must never come back (another tenant's text, a restricted chunk, a
neighbour from another file) as much as about what must.
"""

from __future__ import annotations

import pytest
from insurance_agent.errors import ConfigurationError, InvalidInputError, TransientError
from insurance_search import embeddings, index
from insurance_search.documents import Document
from insurance_search.ingest import delete_file, ingest_directory, ingest_documents
from insurance_search.search import search

A, B = "acme", "globex"

AUTO_A = """# بیمه بدنه خودرو

## پوشش‌ها

بیمه‌نامه بدنه خسارت‌های ناشی از تصادف، آتش‌سوزی و سرقت کلی خودرو را جبران می‌کند.

## فرانشیز

فرانشیز خسارت اول ۱۰ درصد و خسارت دوم ۲۰ درصد مبلغ خسارت است.

## مدارک لازم

برای دریافت خسارت، کارت ماشین، گواهینامه و کروکی پلیس را به شعبه تحویل دهید.

## مهلت اعلام

خسارت را حداکثر پنج روز کاری پس از حادثه به بیمه‌گر اعلام کنید.
"""

# Same file_id as tenant A's auto document, different words: any crossing is visible.
AUTO_B = """# Globex motor policy

## Zanzibar rider

The Zanzibar rider refunds forty-two percent of the premium to every Globex client who owns a blue car.

## Globex deductible

Globex clients pay a flat deductible of 777 dollars on every motor claim.
"""

HEALTH_A = """# Health insurance

## Dental cover

Dental treatment is reimbursed up to 300 dollars per year after a waiting period of six months.
"""

OFFICER_A = """# Fraud review

## Internal threshold

Claims above 90 million rials are sent to the fraud desk; the customer must not be told about the threshold.
"""

B_MARKERS = ("Zanzibar", "Globex", "777")


@pytest.fixture(scope="module", params=["edge", "local"])
def store(request, tmp_path_factory):
    """An embedded store with both tenants' documents; environment and caches restored afterwards.

    Every probe runs on both embedded engines: Qdrant Edge (the default) and qdrant-client's local
    mode (the client path a Qdrant server is read through).
    """
    root = tmp_path_factory.mktemp(f"retrieval-{request.param}")
    with pytest.MonkeyPatch.context() as mp:
        mp.delenv("AGENT_QDRANT_URL", raising=False)
        mp.setenv("AGENT_QDRANT_ENGINE", request.param)
        mp.setenv("AGENT_QDRANT_PATH", str(root / "qdrant"))
        mp.setenv("AGENT_COLLECTION", "test_chunks")
        mp.setenv("AGENT_LATE_MODEL", "none")
        mp.setenv("AGENT_CONTEXT_WINDOW", "1")
        mp.setenv("AGENT_TOP_K", "4")
        # No hub access: a download attempt fails fast, and would write into this folder.
        mp.setenv("HF_HUB_OFFLINE", "1")
        mp.setenv("FASTEMBED_CACHE_PATH", str(root / "fastembed_cache"))
        index.reset_caches()
        report_a = ingest_documents(
            [
                Document(file_id="auto-policy", title="بیمه بدنه خودرو", domain="auto", text=AUTO_A),
                Document(file_id="health", title="Health insurance", domain="health", text=HEALTH_A),
                Document(file_id="fraud-review", title="Fraud review", domain="auto", audience=["officer"], text=OFFICER_A),
            ],
            A,
        )
        report_b = ingest_documents([Document(file_id="auto-policy", title="Globex motor policy", domain="auto", text=AUTO_B)], B)
        assert (report_a.files, report_a.chunks, report_b.chunks) == (3, 6, 2)
        yield root
        index.reset_caches()


def texts(results):
    return "\n".join(r.text for r in results)


@pytest.mark.parametrize(
    "query",
    [
        "The Zanzibar rider refunds forty-two percent of the premium to every Globex client who owns a blue car.",
        "Globex deductible 777 dollars",
        "motor claim deductible",
        "فرانشیز خسارت",
        "premium refund blue car",
    ],
)
@pytest.mark.parametrize("roles", [["user"], ["admin"]])
def test_other_tenants_text_never_comes_back(store, query, roles):
    results = search(query, tenant_id=A, roles=roles)
    assert results, "tenant A has documents; something should match"
    assert {r.tenant_id for r in results} == {A}
    joined = texts(results)
    assert not any(marker in joined for marker in B_MARKERS)
    # And the other way round: tenant B sees only its own two chunks.
    results_b = search(query, tenant_id=B, roles=roles, k=10)
    assert {r.tenant_id for r in results_b} == {B}
    assert "فرانشیز" not in texts(results_b) and "Dental" not in texts(results_b)


def test_unknown_tenant_gets_nothing(store):
    assert search("Zanzibar rider", tenant_id="initech", roles=["admin"]) == []


def test_officer_only_chunk(store):
    quote = "Claims above 90 million rials are sent to the fraud desk"
    for roles in (["user"], ["user", "superuser"]):
        results = search(quote, tenant_id=A, roles=roles, k=10)
        assert "fraud-review" not in {r.file_id for r in results}
        assert "fraud desk" not in texts(results)
    for roles in (["officer"], ["admin"]):
        results = search(quote, tenant_id=A, roles=roles)
        assert results[0].file_id == "fraud-review"
    assert search(quote, tenant_id=A, roles=[]) == []
    assert search(quote, tenant_id=A, roles=["superuser"]) == []


def test_domain_and_scope_filters(store):
    health = search("dental treatment reimbursed", tenant_id=A, roles=["user"], domain="auto", k=10)
    assert health and {r.domain for r in health} == {"auto"}
    only_health = search("خسارت خودرو", tenant_id=A, roles=["user"], domain="health", k=10)
    assert {r.file_id for r in only_health} == {"health"}
    scoped = search("خسارت", tenant_id=A, roles=["admin"], scope={"file_id": ["health"]}, k=10)
    assert {r.file_id for r in scoped} == {"health"}
    # Scope narrows within the allowlist, never beyond it.
    assert search("fraud", tenant_id=A, roles=["user"], scope={"file_id": "fraud-review"}) == []
    assert search("خسارت", tenant_id=A, roles=["user"], domain="auto", scope={"domain": "health"}) == []


def test_context_expansion_stays_in_file_and_tenant(store):
    results = search("کارت ماشین گواهینامه کروکی پلیس", tenant_id=A, roles=["user"], k=1)
    [hit] = results
    assert hit.chunk_id == "auto-policy#2"
    assert hit.expanded_from == ["auto-policy#1", "auto-policy#3"]
    # Neighbours in document order, each section introduced by its heading.
    order = [hit.text.index(s) for s in ("فرانشیز خسارت اول", "مدارک لازم", "کارت ماشین", "مهلت اعلام", "پنج روز")]
    assert order == sorted(order)
    assert not any(marker in hit.text for marker in B_MARKERS)
    # Where the hit's own text is in the window: what a clarifying question offers and a pick shows.
    start, end = hit.own_span
    own = hit.text[start:end]
    assert "کارت ماشین" in own and "فرانشیز خسارت اول" not in own and "پنج روز" not in own
    # A pick of that passage narrows the hits to it, and keeps its neighbours as context.
    [picked] = search("مدارک", tenant_id=A, roles=["user"], scope={"chunk_id": hit.chunk_id})
    assert picked.chunk_id == hit.chunk_id and picked.expanded_from == hit.expanded_from
    # Tenant B's file with the same id expands within tenant B only.
    [hit_b] = search("Zanzibar rider", tenant_id=B, roles=["user"], k=1)
    assert hit_b.expanded_from == ["auto-policy#1"]
    assert "فرانشیز" not in hit_b.text and "777" in hit_b.text


def test_neighbour_that_is_a_hit_is_not_repeated(store):
    results = search("فرانشیز خسارت بیمه بدنه", tenant_id=A, roles=["user"], k=4)
    ids = [r.chunk_id for r in results]
    merged = [i for r in results for i in r.expanded_from]
    assert not set(ids) & set(merged)
    assert len(merged) == len(set(merged))
    assert all(i.startswith(r.file_id + "#") for r in results for i in r.expanded_from)


def test_persian_spelling_variants_find_the_chunk(store):
    # Arabic ي and ك, and "بیمه نامه" typed without its half-space.
    query = "فرانشيز خسارت دوم بيمه نامه بدنه چند درصد است؟"
    results = search(query, tenant_id=A, roles=["user"])
    assert results[0].chunk_id == "auto-policy#1"
    # The lexical leg agrees with the index: the query shares BM25 terms with the chunk.
    sparse = embeddings.sparse_encoder()
    query_terms = set(sparse.embed_query(query).indices)
    chunk_terms = set(sparse.embed_passages(["بیمه‌نامه بدنه: فرانشیز خسارت دوم ۲۰ درصد"])[0].indices)
    assert len(query_terms & chunk_terms) >= 4


def test_reingest_replaces_and_delete_removes(store, tmp_path):
    tenant = "initech"
    folder = tmp_path / "docs"
    folder.mkdir()
    sections = "\n\n".join(f"## Section {i}\n\nOld clause number {i} about windscreen repair." for i in range(4))
    (folder / "glass.md").write_text(f"# Glass cover\n\n{sections}\n", encoding="utf-8")
    (folder / "broken.md").write_bytes(b"\xff\xfe not utf-8")
    (folder / ".hidden.md").write_text("# Hidden\n\nNever ingested.", encoding="utf-8")
    seen = []
    report = ingest_directory(folder, tenant, progress=lambda done, total: seen.append((done, total)))
    assert (report.files, report.chunks) == (1, 4)
    assert [(s.path, s.reason) for s in report.skipped] == [("broken.md", "encoding")]
    assert seen[-1] == (2, 2)

    (folder / "glass.md").write_text("# Glass cover\n\n## Only section\n\nNew clause: windscreen repair is free.\n", encoding="utf-8")
    assert ingest_directory(folder, tenant).chunks == 1
    results = search("windscreen repair clause", tenant_id=tenant, roles=["user"], k=10)
    assert [r.chunk_id for r in results] == ["glass#0"]
    assert "Old clause" not in texts(results)
    assert _count(tenant, "glass") == 1

    assert delete_file(tenant, "glass") == 1
    assert _count(tenant, "glass") == 0
    assert search("windscreen repair", tenant_id=tenant, roles=["user"]) == []
    assert delete_file(tenant, "glass") == 0
    # Tenant A's data is untouched by another tenant's deletes.
    assert _count(A, "auto-policy") == 4


def test_reset_only_touches_one_tenant(store):
    ingest_documents([Document(file_id="tmp", title="Temp", text="Temporary text about boats.")], "hooli")
    assert index.reset("hooli") == 1
    assert _count(B, "auto-policy") == 2


@pytest.mark.parametrize("query", ["", "   ", "x" * 2001])
def test_invalid_queries(store, query):
    with pytest.raises(InvalidInputError):
        search(query, tenant_id=A, roles=["user"])


def test_invalid_scope_and_tenant(store):
    with pytest.raises(InvalidInputError):
        search("claims", tenant_id=A, roles=["user"], scope={"tenant_id": B})
    with pytest.raises(InvalidInputError):
        search("claims", tenant_id="", roles=["user"])


def test_nothing_was_downloaded(store):
    cache = store / "fastembed_cache"
    assert not cache.exists() or not any(cache.iterdir())
    assert sorted(p.name for p in embeddings.BM25_DIR.iterdir()) == ["README.txt"]


def test_vectors_and_an_incompatible_collection(store, monkeypatch):
    from qdrant_client import models

    config = embeddings.vector_config()
    assert (config.dense_name, config.dense_size, config.sparse_name, config.late_name) == ("dense", 384, "bm25", None)
    index.get_client().create_collection(
        "old_model", vectors_config={"dense": models.VectorParams(size=768, distance=models.Distance.COSINE)}
    )
    monkeypatch.setenv("AGENT_COLLECTION", "old_model")
    index.reset_caches()
    try:
        with pytest.raises(ConfigurationError, match="dense size 768"):
            index.ensure_collection()
    finally:
        monkeypatch.undo()
        index.reset_caches()


def test_unreachable_qdrant_url_is_transient(monkeypatch):
    monkeypatch.setenv("AGENT_QDRANT_URL", "http://127.0.0.1:9")
    index.reset_caches()
    try:
        with pytest.raises(TransientError):
            search("claims", tenant_id=A, roles=["user"])
    finally:
        monkeypatch.undo()
        index.reset_caches()


def _count(tenant: str, file_id: str) -> int:
    from qdrant_client import models

    flt = models.Filter(
        must=[
            models.FieldCondition(key="tenant_id", match=models.MatchValue(value=tenant)),
            models.FieldCondition(key="file_id", match=models.MatchValue(value=file_id)),
        ]
    )
    return index.get_client().count("test_chunks", count_filter=flt, exact=True).count
