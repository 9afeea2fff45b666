"""The loaders on real renderings of a statute excerpt (tests/data/ingest, made by benchmarks/ingest_formats.py).

The excerpt's Markdown is the source of truth: every format must give back its sentences intact,
in logical order, with headings, the table's rows and the half-spaces the renderer kept.
"""

from __future__ import annotations

import re
import sys
import unicodedata
from pathlib import Path

import pytest

from insurance_search.chunking import chunk_document

REPO = Path(__file__).resolve().parents[3]
DATA = REPO / "tests" / "data" / "ingest"
sys.path.insert(0, str(REPO / "benchmarks"))
from ingest_formats import half_spaces, survival, word_recall  # noqa: E402

from insurance_ingest import LoadError, load_file  # noqa: E402
from insurance_ingest.bidi import logical_order  # noqa: E402
from insurance_ingest.ocr import available  # noqa: E402
from insurance_ingest.textfix import clean_text  # noqa: E402

SOURCE = (DATA / "claims-excerpt.md").read_text(encoding="utf-8")
PRESENTATION_OR_BIDI = re.compile("[\ufb50-\ufdff\ufe70-\ufefe\u202a-\u202e\u2066-\u2069\u200e\u200f]")
TABLE_ROW = "| الف | گزارش کارشناس راهنمایی و رانندگی یا مقامات انتظامی |"


@pytest.fixture(scope="module")
def docs():
    return {kind: load_file(DATA / name) for kind, name in
            (("pdf", "claims-excerpt.pdf"), ("docx", "claims-excerpt.docx"), ("html", "claims-excerpt.html"))}


@pytest.mark.parametrize("kind, least", [("pdf", 1.0), ("docx", 1.0), ("html", 1.0)])
def test_every_source_sentence_survives(docs, kind, least):
    ok, total, missing = survival(SOURCE, docs[kind].text)
    assert total >= 15
    assert ok / total >= least, missing


@pytest.mark.parametrize("kind", ["pdf", "docx", "html"])
def test_text_is_canonical_logical_order(docs, kind):
    text = docs[kind].text
    assert unicodedata.is_normalized("NFC", text)
    assert not PRESENTATION_OR_BIDI.search(text)
    # The lam-alef ligature in its logical order, and numbers not reversed.
    assert "جمهوری اسلامی ایران" in text and "اسالمی" not in text
    assert "اصطلاحات" in text and "اصطالحات" not in text
    assert "۱۳۹۶/۵/۸" in text and "۸/۵/۶۹۳۱" not in text
    assert "مواد (۲) و (۳)" in text
    assert "زیان\u200cدیده" in text  # the half-space kept


@pytest.mark.parametrize("kind", ["pdf", "docx", "html"])
def test_headings_and_table_rows_reach_the_chunker(docs, kind):
    text = docs[kind].text
    headings = [line for line in text.splitlines() if line.startswith("#")]
    assert any(h.endswith("تبصره ۲") for h in headings)
    assert any(h.endswith("ماده ۵") for h in headings)
    assert any("مصوب جلسه ۱۳۹۶/۵/۸ هیئت وزیران" in h for h in headings)
    assert TABLE_ROW in text.splitlines()
    chunks = chunk_document(docs[kind], "t-formats")
    assert any((c.heading or "").endswith("ماده ۵") and "رهگیری" in c.text for c in chunks)


def test_pdf_drops_running_header_footer_and_page_numbers(docs):
    doc = docs["pdf"]
    assert doc.pages == 2 and doc.format == "pdf"
    assert "مجموعه مقررات" not in doc.text and "صفحه" not in doc.text
    assert doc.title == "آیین‌نامه اجرایی ماده (۳۰) قانون بیمه اجباری شخص ثالث (گزیده)"
    assert doc.file_id == "claims-excerpt"


def test_docx_title_and_half_spaces(docs):
    assert docs["docx"].title.startswith("آیین‌نامه اجرایی ماده (۳۰)")
    kept, total = half_spaces(SOURCE, docs["docx"].text)
    assert total >= 10 and kept == total


def test_html_keeps_the_main_content_only(docs):
    text = docs["html"].text
    for chrome in ("پربازدیدترین", "ورود به حساب کاربری", "تمامی حقوق", "حریم خصوصی", "خیابان ولیعصر"):
        assert chrome not in text
    assert docs["html"].title == "آیین‌نامه اجرایی ماده (۳۰) قانون بیمه اجباری شخص ثالث (گزیده)"
    kept, total = half_spaces(SOURCE, text)
    assert kept == total


@pytest.mark.skipif(not available("fas"), reason="tesseract with Persian (tesseract-ocr-fas) is not installed")
def test_scanned_pdf_is_read_by_ocr_with_a_warning():
    doc = load_file(DATA / "claims-excerpt-scan.pdf")
    assert doc.warnings == ["page 1 had no text layer: OCR"]
    assert doc.pages == 1
    assert "راهنمایی و رانندگی موظف است" in doc.text
    first_page = SOURCE.split("### ماده ۵")[0]
    assert word_recall(first_page, doc.text) >= 0.7


def test_scanned_pdf_without_ocr_says_so(monkeypatch):
    monkeypatch.setenv("AGENT_INGEST_OCR", "0")
    with pytest.raises(LoadError) as caught:
        load_file(DATA / "claims-excerpt-scan.pdf")
    assert caught.value.reason == "no_text_layer"
    assert "OCR is switched off" in caught.value.detail


def test_glyph_order_keeps_ligatures_numbers_and_latin_runs():
    # Glyphs as a PDF draws a right-to-left line, left to right: the ligature is one glyph «لا».
    assert logical_order(["ی", "م", "لا", "س", "ا"]) == "اسلامی"
    line = list("تئیه ") + list("۱۳۹۶/۵/۸") + list(" بوصم")  # visual order of «مصوب ۱۳۹۶/۵/۸ هیئت»
    assert logical_order(line) == "مصوب ۱۳۹۶/۵/۸ هیئت"
    line = list("دش هتخاس ") + list("Microsoft Word") + list(" اب")  # «با Microsoft Word ساخته شد»
    assert logical_order(line, rtl=True) == "با Microsoft Word ساخته شد"  # the document's direction wins
    assert logical_order(list("Policy 12")) == "Policy 12"


def test_clean_text_fixes_presentation_forms_and_marks():
    assert clean_text("\ufe8d\ufeb3\ufefc\ufee1\ufef2") == "اسلامی"
    assert clean_text("\u202bبیمه\u200fنامه\u202c (\u202a۳۰\u202c)") == "بیمه\u200cنامه (۳۰)"
    assert clean_text("آیین\u00ad\u200c\u200cنامه") == "آیین\u200cنامه"
    assert clean_text("ماده ۱۲") == "ماده ۱۲"  # digits kept as written


@pytest.mark.skipif(not available("fas"), reason="tesseract with Persian (tesseract-ocr-fas) is not installed")
def test_only_the_page_without_a_text_layer_is_ocred(tmp_path):
    import pypdf

    writer = pypdf.PdfWriter()
    writer.append(str(DATA / "claims-excerpt.pdf"))
    writer.append(str(DATA / "claims-excerpt-scan.pdf"))
    mixed = tmp_path / "mixed.pdf"
    with open(mixed, "wb") as handle:
        writer.write(handle)
    doc = load_file(mixed)
    assert doc.pages == 3
    assert doc.warnings == ["page 3 had no text layer: OCR"]
    assert "جمهوری اسلامی ایران" in doc.text  # page 2, from its text layer
    assert doc.text.count("راهنمایی و رانندگی موظف است") == 2  # page 1 read, and again by OCR from page 3
