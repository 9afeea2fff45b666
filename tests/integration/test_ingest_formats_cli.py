"""`agent ingest` on a folder of mixed formats, `agent documents`, and incremental re-ingest (real encoders).

The folder holds the rendered statute excerpt as PDF, DOCX (with a sidecar), HTML and a scan,
a Markdown note, and two files that must be refused; everything readable is searchable.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest
from agent_local import cli
from insurance_search import index

REPO = Path(__file__).resolve().parents[2]
DATA = REPO / "tests" / "data" / "ingest"
sys.path.insert(0, str(REPO / "benchmarks"))
from ingest_fuzz import hostile_files  # noqa: E402

from insurance_ingest.ocr import available  # noqa: E402

TENANT = "formats"
OCR = available("fas")
NOTE = "---\nfile_id: note\ntitle: یادداشت\n---\n# یادداشت\n\nبیمه‌گذار باید حادثه را ظرف پنج روز اطلاع دهد.\n"


@pytest.fixture(scope="module")
def home(tmp_path_factory):
    root = tmp_path_factory.mktemp("formats-cli")
    corpus = root / "corpus"
    corpus.mkdir()
    shutil.copy(DATA / "claims-excerpt.pdf", corpus / "bylaw.pdf")
    shutil.copy(DATA / "claims-excerpt.docx", corpus / "draft.docx")
    (corpus / "draft.docx.metadata.json").write_text(json.dumps({"metadataAttributes": {
        "file_id": "claims-draft", "title": "پیش‌نویس آیین‌نامه", "audience": ["officer"], "domain": "car",
        "owner": "legal"}}, ensure_ascii=False), encoding="utf-8")
    shutil.copy(DATA / "claims-excerpt.html", corpus / "faq.html")
    shutil.copy(DATA / "claims-excerpt-scan.pdf", corpus / "scan.pdf")
    (corpus / "note.md").write_text(NOTE, encoding="utf-8")
    bad = root / "bad"
    bad.mkdir()
    hostile_files(bad)
    for name in ("encrypted.pdf", "word-named.pdf"):
        shutil.copy(bad / name, corpus / name)
    agent_home = root / "home"
    with pytest.MonkeyPatch.context() as mp:
        for name in ("AGENT_QDRANT_URL", "AGENT_QDRANT_PATH", "AGENT_COLLECTION", "AGENT_LATE_MODEL", "AGENT_TOP_K"):
            mp.delenv(name, raising=False)
        mp.setenv("AGENT_HOME", str(agent_home))
        mp.setenv("AGENT_LOG_FILE", str(agent_home / "agent.log"))
        mp.setenv("HF_HUB_OFFLINE", "1")
        index.reset_caches()
        yield agent_home, corpus
        index.reset_caches()


def agent(capsys, home, *args):
    capsys.readouterr()
    code = cli.main(["--home", str(home), *args])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(scope="module")
def first_run(home):
    # Module-scoped: capsys is per test, so the first ingest's output is captured here.
    from contextlib import redirect_stderr, redirect_stdout
    from io import StringIO

    agent_home, corpus = home

    out, err = StringIO(), StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = cli.main(["--home", str(agent_home), "ingest", str(corpus), "--tenant", TENANT])
    return code, out.getvalue(), err.getvalue()


def test_every_readable_file_is_ingested_and_the_rest_reported(first_run):
    code, out, err = first_run
    assert code == cli.EXIT_SKIPPED  # the readable files are in, and the exit status says some were not
    readable = 5 if OCR else 4
    assert f"ingested {readable} files" in out
    assert f"{readable} added, 0 changed, 0 removed, 0 unchanged" in out
    assert "skipped encrypted.pdf: encrypted (the PDF is password-protected)" in err
    assert "skipped word-named.pdf: format_mismatch (named .pdf but the content is docx)" in err
    assert "warning draft.docx: ignored sidecar keys: owner" in err
    if OCR:
        assert "warning scan.pdf: page 1 had no text layer: OCR" in err
    else:
        assert "skipped scan.pdf: no_text_layer" in err


def test_documents_lists_format_pages_chunks_and_warnings(capsys, home, first_run):
    code, out, _ = agent(capsys, home[0], "documents", "--tenant", TENANT, "--json")
    assert code == 0
    docs = {d["file_id"]: d for d in map(json.loads, out.splitlines())}
    assert "encrypted" not in docs and "word-named" not in docs  # nothing half-written for refused files
    assert docs["bylaw"]["format"] == "pdf" and docs["bylaw"]["pages"] == 2 and docs["bylaw"]["chunks"] >= 5
    assert docs["claims-draft"]["format"] == "docx" and docs["claims-draft"]["title"] == "پیش‌نویس آیین‌نامه"
    assert docs["faq"]["format"] == "html" and docs["faq"]["pages"] is None
    assert docs["note"]["format"] == "md" and docs["note"]["chunks"] == 1
    if OCR:
        assert docs["scan"]["warnings"] == ["page 1 had no text layer: OCR"]
    code, table, _ = agent(capsys, home[0], "documents", "--tenant", TENANT)
    assert code == 0 and table.splitlines()[0].split()[:4] == ["file_id", "format", "pages", "chunks"]


def test_show_prints_one_json_chunk_a_line(capsys, home, first_run):
    code, out, _ = agent(capsys, home[0], "documents", "--tenant", TENANT, "--show", "bylaw")
    assert code == 0
    chunks = [json.loads(line) for line in out.splitlines()]
    assert [c["chunk_id"] for c in chunks] == [f"bylaw#{i}" for i in range(len(chunks))]
    assert all(c["text"] for c in chunks)
    assert any((c["heading"] or "").endswith("ماده ۵") and "رهگیری" in c["text"] for c in chunks)
    assert any("| الف | گزارش کارشناس راهنمایی و رانندگی یا مقامات انتظامی |" in c["text"] for c in chunks)
    code, _, err = agent(capsys, home[0], "documents", "--tenant", TENANT, "--show", "nothing-here")
    assert code == 1 and "has no document 'nothing-here'" in err


def test_extracted_text_is_searchable_and_sidecar_audience_applies(capsys, home, first_run):
    query = "استعلام گواهینامه رانندگی ظرف دو هفته پاسخ"
    _, out, _ = agent(capsys, home[0], "search", query, "--tenant", TENANT, "--roles", "user", "--k", "8")
    files = {hit["file_id"] for hit in json.loads(out)["hits"]}
    assert {"bylaw", "faq"} <= files and "claims-draft" not in files
    _, out, _ = agent(capsys, home[0], "search", query, "--tenant", TENANT, "--roles", "officer", "--k", "8")
    assert "claims-draft" in {hit["file_id"] for hit in json.loads(out)["hits"]}


def test_reingest_is_incremental_and_sync_removes_deleted_files(capsys, home, first_run):
    agent_home, corpus = home
    code, out, _ = agent(capsys, agent_home, "ingest", str(corpus), "--tenant", TENANT)
    assert code == cli.EXIT_SKIPPED  # the refused files are refused again
    readable = 5 if OCR else 4
    assert "ingested 0 files, 0 chunks" in out and f"0 added, 0 changed, 0 removed, {readable} unchanged" in out
    seconds = float(out.split(" in ")[1].split(" s ")[0])
    assert seconds < 5

    (corpus / "note.md").write_text(NOTE.replace("پنج روز", "هفت روز"), encoding="utf-8")
    (corpus / "faq.html").unlink()
    code, out, _ = agent(capsys, agent_home, "ingest", str(corpus), "--tenant", TENANT)
    assert "0 added, 1 changed, 0 removed" in out  # without --sync the deleted page stays
    code, out, _ = agent(capsys, agent_home, "ingest", str(corpus), "--tenant", TENANT, "--sync")
    assert "0 added, 0 changed, 1 removed" in out
    _, listing, _ = agent(capsys, agent_home, "documents", "--tenant", TENANT, "--json")
    assert "faq" not in {json.loads(line)["file_id"] for line in listing.splitlines()}
    _, shown, _ = agent(capsys, agent_home, "documents", "--tenant", TENANT, "--show", "note")
    assert "هفت روز" in shown and "پنج روز" not in shown
