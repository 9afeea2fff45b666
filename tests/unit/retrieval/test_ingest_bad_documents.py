"""Hostile and broken files are refused by name with a typed reason, quickly; sidecar metadata rules."""

from __future__ import annotations

import json
import shutil
import sys
import time
from pathlib import Path

import pytest

from insurance_search.documents import DocumentError

REPO = Path(__file__).resolve().parents[3]
DATA = REPO / "tests" / "data" / "ingest"
sys.path.insert(0, str(REPO / "benchmarks"))
from ingest_fuzz import hostile_files  # noqa: E402

from insurance_ingest import LoadError, load_file  # noqa: E402


@pytest.fixture(scope="module")
def hostile(tmp_path_factory):
    folder = tmp_path_factory.mktemp("hostile")
    return folder, hostile_files(folder)


def test_each_hostile_file_is_refused_with_its_reason_in_bounded_time(hostile):
    folder, expected = hostile
    for name, reason in expected.items():
        started = time.perf_counter()
        with pytest.raises(DocumentError) as caught:
            load_file(folder / name)
        assert caught.value.reason == reason, (name, caught.value.detail)
        assert caught.value.detail and "Traceback" not in caught.value.detail
        assert time.perf_counter() - started < 10, name


def test_a_parse_over_its_time_limit_is_stopped(monkeypatch):
    monkeypatch.setenv("AGENT_INGEST_TIMEOUT_SECONDS", "0.001")
    with pytest.raises(LoadError) as caught:
        load_file(DATA / "claims-excerpt.pdf")
    assert caught.value.reason == "timeout"


def test_a_parse_over_its_memory_limit_is_refused(monkeypatch, tmp_path):
    # A 3 MB page parsed with 2 MB of address space to spare: the child runs out, the caller does not.
    page = tmp_path / "big.html"
    rows = "".join(f"<p>بند {i}: بیمه‌گر مکلف است خسارت را ظرف پانزده روز بپردازد.</p>" for i in range(30_000))
    page.write_text(f"<html><body><article>{rows}</article></body></html>", encoding="utf-8")
    monkeypatch.setenv("AGENT_INGEST_MAX_MEMORY_MB", "2")
    with pytest.raises(LoadError) as caught:
        load_file(page)
    assert caught.value.reason in ("out_of_memory", "corrupt")
    monkeypatch.delenv("AGENT_INGEST_MAX_MEMORY_MB")
    assert "پانزده روز" in load_file(page).text


def test_limits_are_configurable(monkeypatch, tmp_path):
    monkeypatch.setenv("AGENT_INGEST_MAX_PAGES", "1")
    with pytest.raises(LoadError) as caught:
        load_file(DATA / "claims-excerpt.pdf")
    assert caught.value.reason == "too_many_pages" and "2 pages" in caught.value.detail
    monkeypatch.setenv("AGENT_INGEST_MAX_PAGES", "many")
    with pytest.raises(ValueError, match="AGENT_INGEST_MAX_PAGES"):
        load_file(DATA / "claims-excerpt.pdf")


def test_unsupported_suffix_and_legacy_word(tmp_path):
    legacy = tmp_path / "old.docx"
    legacy.write_bytes(b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\0" * 600)
    with pytest.raises(LoadError) as caught:
        load_file(legacy)
    assert caught.value.reason == "format_mismatch" and "legacy Office" in caught.value.detail


# -- sidecar metadata -------------------------------------------------------------------------------
def _with_sidecar(tmp_path: Path, name: str, sidecar: object) -> Path:
    target = tmp_path / name
    shutil.copy(DATA / "claims-excerpt.docx", target)
    raw = sidecar if isinstance(sidecar, str) else json.dumps(sidecar, ensure_ascii=False)
    (tmp_path / f"{name}.metadata.json").write_text(raw, encoding="utf-8")
    return target


def test_sidecar_sets_metadata_and_warns_about_unknown_keys(tmp_path):
    path = _with_sidecar(tmp_path, "policy.docx", {"metadataAttributes": {
        "title": "آیین‌نامه ماده ۳۰", "file_id": "tp-claims", "domain": "car", "product": "third_party",
        "audience": ["officer"], "language": "fa", "year": 1396}})
    doc = load_file(path)
    assert (doc.title, doc.file_id, doc.domain, doc.product, doc.audience, doc.language) == (
        "آیین‌نامه ماده ۳۰", "tp-claims", "car", "third_party", ["officer"], "fa")
    assert doc.warnings == ["ignored sidecar keys: year"]


def test_sidecar_typed_bedrock_values(tmp_path):
    path = _with_sidecar(tmp_path, "typed.docx", {"metadataAttributes": {
        "domain": {"value": {"type": "STRING", "stringValue": "car"}, "includeForEmbedding": True},
        "audience": {"value": {"type": "STRING_LIST", "stringListValue": ["user", "officer"]}}}})
    doc = load_file(path)
    assert doc.domain == "car" and doc.audience == ["user", "officer"]


def test_without_sidecar_title_from_properties_and_file_id_from_name(tmp_path):
    target = tmp_path / "بیمه نامه شخص‌ثالث.docx"
    shutil.copy(DATA / "claims-excerpt.docx", target)
    doc = load_file(target)
    assert doc.file_id == "بیمه-نامه-شخص-ثالث"
    assert doc.title.startswith("آیین‌نامه اجرایی ماده (۳۰)")
    assert doc.audience == ["user", "officer", "admin"]


@pytest.mark.parametrize("sidecar, reason", [
    ("{not json", "metadata"),
    ({"title": "no wrapper"}, "metadata"),
    ({"metadataAttributes": {"audiance": ["officer"]}}, "invalid_field"),
    ({"metadataAttributes": {"audience": ["everyone"]}}, "invalid_field"),
])
def test_a_bad_sidecar_refuses_the_document(tmp_path, sidecar, reason):
    with pytest.raises(DocumentError) as caught:
        load_file(_with_sidecar(tmp_path, "bad.docx", sidecar))
    assert caught.value.reason == reason


def test_a_file_over_its_total_time_is_stopped_even_while_pages_progress(monkeypatch):
    monkeypatch.setenv("AGENT_INGEST_MAX_FILE_SECONDS", "0.0001")
    with pytest.raises(LoadError) as caught:
        load_file(DATA / "claims-excerpt.pdf")
    assert caught.value.reason == "timeout" and "longer than" in caught.value.detail
