"""Shared fixtures of the local-provider tests: a few real-looking chunks and the triage classifier.

The embedding model and the exemplar matrix are loaded once per session (default_classifier is
process-cached), so the triage tests cost one cold start, not one per test.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from insurance_agent.models.chunks import RetrievedChunk

STATUTES = Path(__file__).resolve().parents[2] / "data" / "statutes"


def _statute_chunks(name: str, tenant_id: str = "t-law") -> list[RetrievedChunk]:
    """The chunks of a real statute excerpt (tests/data/statutes/), as retrieval returns them, best first."""
    from insurance_search.chunking import chunk_document
    from insurance_search.documents import load_document

    document = load_document(STATUTES / name)
    return [
        RetrievedChunk(**chunk.model_dump(), score=0.03 - i * 0.001)
        for i, chunk in enumerate(chunk_document(document, tenant_id))
    ]


def make_chunk(chunk_id, file_id, title, text, score, product=None, domain="auto", language="fa"):
    return RetrievedChunk(
        chunk_id=chunk_id,
        file_id=file_id,
        title=title,
        text=text,
        score=score,
        product=product,
        domain=domain,
        language=language,
        tenant_id="t1",
    )


@pytest.fixture(scope="session")
def statute_chunks():
    """`statute_chunks(name, tenant_id)`: the chunks of a real statute excerpt of tests/data/statutes/."""
    return _statute_chunks


@pytest.fixture
def chunk_factory():
    return make_chunk


@pytest.fixture
def body_chunk():
    return make_chunk(
        "body-1",
        "f-body",
        "بیمه بدنه خودرو",
        "بیمه بدنه خسارت‌های وارد به خودروی بیمه‌شده را جبران می‌کند. "
        "فرانشیز خسارت اول در بیمه بدنه ۱۰ درصد مبلغ خسارت است. "
        "حق بیمه بدنه بر اساس ارزش خودرو و سابقه عدم خسارت محاسبه می‌شود. "
        "تخفیف عدم خسارت تا ۷۰ درصد قابل اعمال است.",
        0.031,
        product="car_body",
    )


@pytest.fixture
def third_party_chunk():
    return make_chunk(
        "tp-1",
        "f-tp",
        "بیمه شخص ثالث",
        "بیمه شخص ثالث خسارت‌های مالی و جانی وارد به اشخاص ثالث را جبران می‌کند. "
        "حداقل تعهد مالی بیمه شخص ثالث ۲۰۰٬۰۰۰٬۰۰۰ ریال است. "
        "حق بیمه شخص ثالث هر سال توسط بیمه مرکزی اعلام می‌شود.",
        0.030,
        product="third_party",
    )


@pytest.fixture
def health_chunk():
    return make_chunk(
        "health-1",
        "f-health",
        "بیمه درمان تکمیلی",
        "بیمه درمان تکمیلی هزینه‌های بستری و جراحی را پوشش می‌دهد. "
        "دوره انتظار برای زایمان ۹ ماه است. "
        "همسر و فرزندان بیمه‌شده اصلی نیز تحت پوشش قرار می‌گیرند. "
        "حق بیمه درمان تکمیلی برای هر نفر در سال ۱۲٬۵۰۰٬۰۰۰ ریال است.",
        0.029,
        product="health_supp",
        domain="health",
    )


@pytest.fixture(scope="session")
def triage_classifier():
    from insurance_offline.triage import default_classifier

    return default_classifier()
