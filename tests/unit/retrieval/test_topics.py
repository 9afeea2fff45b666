"""The corpus scope read from the store: the caller's readable chunks only, per tenant, kept fresh."""

from __future__ import annotations

from pathlib import Path

import pytest

CORPUS = Path(__file__).resolve().parents[2] / "data" / "routing_corpus"
TENANT = "routing-scope"


@pytest.fixture(scope="module")
def ingested(corpus):
    from insurance_search.ingest import ingest_directory
    from insurance_search.topics import clear_cache

    ingest_directory(CORPUS, TENANT, reset=True)
    clear_cache()
    yield
    clear_cache()


def test_scope_follows_the_callers_audience(ingested):
    from insurance_search.topics import corpus_scope

    user = corpus_scope(TENANT, ["user"])
    officer = corpus_scope(TENANT, ["officer"])
    question = "کد تخفیف داخلی مشتریان ناوگان چیست؟"
    # the officer-only fleet guideline widens an officer's scope, never a user's
    assert officer.covers(question) and not user.covers(question)
    assert "ناوگان" in officer.terms and "ناوگان" not in user.terms
    assert officer.chunks > user.chunks > 0
    assert "cargo" in user.topics and "cyber" in user.topics
    assert user.covers("کالای ما توی گمرک آسیب دید، چی کار باید بکنیم؟")
    assert not user.covers("قیمت طلا امروز چقدر شد؟")


def test_scope_is_per_tenant(ingested):
    from insurance_search.topics import corpus_scope

    other = corpus_scope("sepehr", ["admin"])
    assert other.chunks > 0 and "ناوگان" not in other.terms and "cargo" not in other.topics
    assert corpus_scope("nobody-here", ["user"]).chunks == 0


def test_scope_is_cached_and_rebuilt_when_the_readable_corpus_changes(ingested, tmp_path):
    from insurance_search.ingest import delete_file, ingest_directory
    from insurance_search.topics import corpus_scope

    first = corpus_scope(TENANT, ["user"])
    assert corpus_scope(TENANT, ["user"]) is first  # nothing changed: the cached scope
    extra = tmp_path / "livestock.md"
    extra.write_text(
        "---\ntitle: بیمه دام\nfile_id: routing-livestock\ndomain: agriculture\n---\n\n"
        "بیمه دام تلف شدن گاو و گوسفند بر اثر بیماری واگیر را جبران می‌کند.\n",
        encoding="utf-8",
    )
    ingest_directory(tmp_path, TENANT)
    try:
        widened = corpus_scope(TENANT, ["user"])
        assert widened is not first and "گوسفند" in widened.terms
        assert widened.covers("گوسفندام تلف شدن، جبران میشه؟")
    finally:
        delete_file(TENANT, "routing-livestock")
    narrowed = corpus_scope(TENANT, ["user"])
    assert narrowed is not widened and "گوسفند" not in narrowed.terms


def test_everyday_and_english_questions_are_in_the_scope_of_a_statute():
    """A bylaw's own words are formal («وسیله نقلیه», «زیان‌دیده»); a customer's question about it is
    in scope when its words, in their written or register form, or an English word's Persian
    rendering, are the bylaw's, and «را» of «خسارتمو» proves nothing."""
    from insurance_search.chunking import chunk_document
    from insurance_search.documents import load_document
    from insurance_search.topics import scope_from_payloads

    excerpt = Path(__file__).resolve().parents[2] / "data" / "statutes" / "claims-bylaw-excerpt.md"
    chunks = chunk_document(load_document(excerpt), "t-law")
    scope = scope_from_payloads(chunk.model_dump() for chunk in chunks)
    assert scope.covers("ماشینمو زدن، واسه خسارت مالی کجا برم؟")
    assert scope.covers("Which documents does the driver need for a property damage claim?")
    assert not scope.covers("قیمت طلا امروز چقدر شد؟")
    assert not scope.covers("دستور پخت قورمه‌سبزیمو بگو")
