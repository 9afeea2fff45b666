"""Per-format extraction quality: real statutes rendered with real tools, read back by the loaders.

    .venv/bin/python benchmarks/ingest_formats.py --corpus ../shared/bench/insurance-law-fa/corpus [--ocr-pages 3]
    .venv/bin/python benchmarks/ingest_formats.py --fixtures tests/data/ingest   # re-render the test fixtures

Each Markdown statute is rendered as an insurer publishes it (Debian packages: pandoc,
libreoffice-writer-nogui, poppler-utils, img2pdf, tesseract-ocr, tesseract-ocr-fas):

- DOCX: pandoc, right-to-left, with a reference document whose running header and page-number
  footer are on every page;
- PDF: that DOCX exported by LibreOffice Writer (a Word-style PDF with a text layer);
- scanned PDF: the PDF's first pages rasterised (pdftoppm, 300 dpi grey) and wrapped as images
  (img2pdf): no text layer;
- HTML: pandoc's HTML of the text inside a page with a site menu, a sidebar and a footer.

A source sentence survives when it occurs intact in the extracted text. Both sides are compared
in the retrieval normal form (`text.normalize`: Arabic letters folded, Latin digits, one space)
with half-spaces, soft hyphens and bidi marks removed, since the renderers themselves drop some
of those. Half-spaces are counted apart: the share of the source's half-space words (ZWNJ or a
stand-in) found with their half-space in the output. Alternatives are measured on the same files
(pypdf, pdfminer.six, pdfplumber's own text, pdftotext and PDFium for PDF; mammoth for DOCX; the
page's whole text for HTML) when installed. Figures print as Markdown and go to
benchmarks/results/ingest_formats.json.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO / "layers" / "core"), str(REPO / "ingest")]

from insurance_agent.text import normalize  # noqa: E402

HEADER = "بیمه مرکزی جمهوری اسلامی ایران — مجموعه مقررات"
SITE = """<!DOCTYPE html><html lang="fa" dir="rtl"><head><meta charset="utf-8"><title>{title} | بیمه نمونه</title></head>
<body><header><nav><ul><li><a href="/">خانه</a></li><li><a href="/products">محصولات بیمه</a></li>
<li><a href="/claims">پرداخت خسارت</a></li><li><a href="/contact">تماس با ما</a></li><li><a href="/login">ورود به حساب کاربری</a></li></ul></nav></header>
<div class="container"><aside class="sidebar"><h3>پربازدیدترین مطالب</h3><ul><li><a href="/a">بیمه بدنه چیست و چه خسارت‌هایی را می‌پوشاند؟</a></li>
<li><a href="/b">خرید آنلاین بیمه شخص ثالث با تخفیف ویژه</a></li><li><a href="/c">راهنمای تمدید بیمه‌نامه</a></li></ul></aside>
<main><article>{body}</article></main></div>
<footer><p>تمامی حقوق این وب‌سایت متعلق به شرکت بیمه نمونه است.</p><p>نشانی: تهران، خیابان ولیعصر، پلاک ۱۲ — تلفن ۰۲۱۸۸۰۰۰۰۰۰</p>
<ul><li><a href="/privacy">حریم خصوصی</a></li><li><a href="/terms">قوانین و مقررات سایت</a></li></ul></footer></body></html>"""
CHROME = ("پربازدیدترین مطالب", "تمامی حقوق این وب‌سایت", "ورود به حساب کاربری", HEADER)
_BIDI = re.compile("[\u200e\u200f\u202a-\u202e\u2066-\u2069\u061c]")
ZWNJ = "\u200c"


# -- rendering --------------------------------------------------------------------------------------
def _run(*command: str, cwd: Path | None = None) -> None:
    subprocess.run(command, check=True, cwd=cwd, capture_output=True, timeout=300)


def _reference_docx(folder: Path) -> Path:
    """pandoc's reference document with a running header and a PAGE-field footer."""
    import docx
    from docx.oxml import OxmlElement
    from docx.oxml.ns import qn

    plain = folder / "reference-plain.docx"
    _run("pandoc", "-o", str(plain), "--print-default-data-file", "reference.docx")
    document = docx.Document(str(plain))
    section = document.sections[0]
    section.header.paragraphs[0].text = HEADER
    footer = section.footer.paragraphs[0]
    footer.text = "صفحه "
    run = footer.add_run()
    for kind, text in (("begin", None), (None, "PAGE"), ("end", None)):
        if kind:
            element = OxmlElement("w:fldChar")
            element.set(qn("w:fldCharType"), kind)
        else:
            element = OxmlElement("w:instrText")
            element.text = text
        run._r.append(element)
    out = folder / "reference.docx"
    document.save(str(out))
    return out


def _rule_tables(path: Path) -> None:
    """Give every table of a DOCX single-line borders, as a Word table usually has."""
    import docx
    from docx.oxml import OxmlElement
    from docx.oxml.ns import qn

    document = docx.Document(str(path))
    for table in document.tables:
        tbl_pr = table._tbl.tblPr
        borders = OxmlElement("w:tblBorders")
        for edge in ("top", "left", "bottom", "right", "insideH", "insideV"):
            element = OxmlElement(f"w:{edge}")
            element.set(qn("w:val"), "single")
            element.set(qn("w:sz"), "4")
            element.set(qn("w:color"), "000000")
            borders.append(element)
        tbl_pr.append(borders)
        # A Persian Word table runs right to left: its first column is the right-most.
        tbl_pr.append(OxmlElement("w:bidiVisual"))
    document.save(str(path))


def render(source: Path, out: Path, *, scan_pages: int = 2, scan_dpi: int = 300, scan_mono: bool = False,
           formats=("docx", "pdf", "scan", "html")) -> dict[str, Path]:
    """Render one Markdown file in every format under `out`; returns format -> path.

    The scan is grey at 300 dpi by default (an office scanner's setting); the test fixture is
    1-bit at 200 dpi to stay small."""
    out.mkdir(parents=True, exist_ok=True)
    stem = source.stem
    made: dict[str, Path] = {}
    with tempfile.TemporaryDirectory() as work_dir:
        work = Path(work_dir)
        reference = _reference_docx(work)
        docx_path = out / f"{stem}.docx"
        _run("pandoc", str(source), "-f", "markdown", "-t", "docx", "-M", "dir=rtl", "--reference-doc", str(reference),
             "-o", str(docx_path))
        _rule_tables(docx_path)
        made["docx"] = docx_path
        if {"pdf", "scan"} & set(formats):
            _run("soffice", "--headless", f"-env:UserInstallation=file://{work}/lo", "--convert-to", "pdf",
                 "--outdir", str(work), str(docx_path))
            pdf = out / f"{stem}.pdf"
            shutil.copy(work / f"{stem}.pdf", pdf)
            made["pdf"] = pdf
        if "scan" in formats:
            colour = ["-mono", "-png"] if scan_mono else ["-gray", "-jpeg", "-jpegopt", "quality=75"]
            _run("pdftoppm", "-r", str(scan_dpi), *colour, "-f", "1", "-l", str(scan_pages), str(made["pdf"]),
                 str(work / "page"))
            pages = sorted(work.glob("page-*.png")) + sorted(work.glob("page-*.jpg"))
            scan = out / f"{stem}-scan.pdf"
            _run("img2pdf", *map(str, pages), "-o", str(scan))
            made["scan"] = scan
        if "html" in formats:
            body = subprocess.run(["pandoc", str(source), "-f", "markdown", "-t", "html5"], check=True,
                                  capture_output=True, text=True).stdout
            title = _front_title(source.read_text(encoding="utf-8")) or stem
            html = out / f"{stem}.html"
            html.write_text(SITE.format(title=title, body=body), encoding="utf-8")
            made["html"] = html
        if "docx" not in formats:
            docx_path.unlink()
            made.pop("docx")
        if "pdf" not in formats and "pdf" in made:
            made.pop("pdf").unlink()
    return made


def _front_title(text: str) -> str | None:
    match = re.search(r'^title:\s*"?(.+?)"?\s*$', text, re.MULTILINE)
    return match.group(1) if match else None


# -- measuring --------------------------------------------------------------------------------------
def comparable(text: str) -> str:
    text = _BIDI.sub("", text.replace("\u00ad", "").replace(ZWNJ, "").replace("\u200d", ""))
    return re.sub(r"\s+", " ", normalize(text.replace("|", " ")))


def source_sentences(markdown: str) -> list[str]:
    body = markdown.split("\n---\n", 1)[1] if markdown.startswith("---") else markdown
    out = []
    for line in body.splitlines():
        line = re.sub(r"^#+\s*|^\|\s*|\s*\|\s*$", "", line).strip()
        if line.count("|"):
            out.extend(cell.strip() for cell in line.split("|") if len(cell.split()) >= 2)
            continue
        for sentence in re.split(r"(?<=[.!?؟:؛])\s+", line):
            if len(sentence.split()) >= 4:
                out.append(sentence)
    return out


def survival(markdown: str, extracted: str) -> tuple[int, int, list[str]]:
    haystack = comparable(extracted)
    sentences = source_sentences(markdown)
    missing = [s for s in sentences if comparable(s) not in haystack]
    return len(sentences) - len(missing), len(sentences), missing


def half_spaces(markdown: str, extracted: str) -> tuple[int, int]:
    from insurance_ingest.textfix import clean_text

    words = {w for w in clean_text(markdown).split() if ZWNJ in w.strip(ZWNJ)}
    found = set(clean_text(extracted).split())
    words = {re.sub(r"[^\w\u200c]", "", w) for w in words}
    found = {re.sub(r"[^\w\u200c]", "", w) for w in found}
    return len(words & found), len(words)


def word_recall(markdown: str, extracted: str) -> float:
    """Share of the source's words (as a multiset) present in the output: OCR's softer figure."""
    from collections import Counter

    source = Counter(comparable(" ".join(source_sentences(markdown))).split())
    got = Counter(comparable(extracted).split())
    total = sum(source.values())
    return sum(min(n, got[w]) for w, n in source.items()) / total if total else 0.0


def ours(path: Path) -> tuple[str, list[str], float]:
    from insurance_ingest import load_file

    started = time.perf_counter()
    document = load_file(path)
    return document.text, document.warnings, time.perf_counter() - started


def alternatives(kind: str, path: Path) -> dict[str, str]:
    out: dict[str, str] = {}
    if kind == "pdf":
        try:
            import pypdf

            out["pypdf"] = "\n".join(page.extract_text() or "" for page in pypdf.PdfReader(str(path)).pages)
        except ImportError:
            pass
        from pdfminer.high_level import extract_text

        out["pdfminer.six"] = extract_text(str(path))
        import pdfplumber

        with pdfplumber.open(path) as pdf:
            out["pdfplumber text"] = "\n".join(page.extract_text() or "" for page in pdf.pages)
        import pypdfium2

        document = pypdfium2.PdfDocument(str(path))
        out["PDFium"] = "\n".join(document[i].get_textpage().get_text_range() for i in range(len(document)))
        if shutil.which("pdftotext"):
            out["pdftotext"] = subprocess.run(["pdftotext", str(path), "-"], capture_output=True, text=True).stdout
    elif kind == "docx":
        try:
            import mammoth

            with open(path, "rb") as handle:
                out["mammoth (raw text)"] = mammoth.extract_raw_text(handle).value
        except ImportError:
            pass
    elif kind == "html":
        import lxml.html

        out["whole page text"] = lxml.html.fromstring(path.read_text(encoding="utf-8")).text_content()
    return out


def measure(corpus: Path, *, ocr_pages: int) -> dict:
    files = sorted(corpus.glob("*.md"))
    rows: dict[str, dict[str, list[float]]] = {}
    details = []
    with tempfile.TemporaryDirectory() as out_dir:
        for source in files:
            markdown = source.read_text(encoding="utf-8")
            made = render(source, Path(out_dir) / source.stem, scan_pages=ocr_pages)
            for kind, path in made.items():
                text, warnings, seconds = ours(path)
                reference = markdown
                if kind == "scan":  # only the first pages were scanned: compare with what they hold
                    reference = _first_pages(made["pdf"], markdown, ocr_pages)
                ok, total, missing = survival(reference, text)
                zk, zt = half_spaces(reference, text)
                chrome = sum(phrase in text for phrase in CHROME)
                entry = rows.setdefault(kind, {})
                entry.setdefault("ours", []).append((ok, total, zk, zt, seconds, word_recall(reference, text), chrome))
                details.append({"file": source.name, "format": kind, "survived": ok, "sentences": total,
                                "half_spaces": [zk, zt], "seconds": round(seconds, 2), "warnings": warnings,
                                "missing": missing[:5]})
                if kind != "scan":
                    for name, alt in alternatives("pdf" if kind == "pdf" else kind, path).items():
                        a_ok, a_total, _ = survival(reference, alt)
                        a_zk, a_zt = half_spaces(reference, alt)
                        entry.setdefault(name, []).append((a_ok, a_total, a_zk, a_zt, 0.0, word_recall(reference, alt),
                                                           sum(p in alt for p in CHROME)))
            print(f"  {source.name}: done", file=sys.stderr, flush=True)
    return {"rows": rows, "details": details}


def _first_pages(pdf: Path, markdown: str, pages: int) -> str:
    """The source sentences on the first `pages` pages of the rendered PDF (read from its text layer)."""
    import pdfplumber

    from insurance_ingest.pdf_loader import _blocks, _page_lines

    with pdfplumber.open(pdf) as document:
        lines = [line for number, page in enumerate(document.pages[:pages], 1) for line in _page_lines(page, number)]
    first = comparable(" ".join(_blocks(lines)))
    return "\n".join(s for s in source_sentences(markdown) if comparable(s) in first)


def report(result: dict) -> str:
    lines = ["| format | extractor | sentences intact | half-spaces kept | words found | page chrome left | s/file |",
             "|---|---|---:|---:|---:|---:|---:|"]
    for kind, by_tool in result["rows"].items():
        for tool, values in by_tool.items():
            ok = sum(v[0] for v in values)
            total = sum(v[1] for v in values)
            zk = sum(v[2] for v in values)
            zt = sum(v[3] for v in values)
            seconds = sum(v[4] for v in values) / len(values)
            recall = sum(v[5] for v in values) / len(values)
            chrome = sum(v[6] for v in values)
            name = "**insurance_ingest**" if tool == "ours" else tool
            lines.append(f"| {kind} | {name} | {ok}/{total} = {ok / max(total, 1):.3f} | "
                         f"{zk / max(zt, 1):.3f} | {recall:.3f} | {chrome} | {seconds:.2f} |")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", type=Path, help="folder of Markdown statutes to render and measure")
    parser.add_argument("--ocr-pages", type=int, default=2, help="pages of each PDF scanned for the OCR row")
    parser.add_argument("--fixtures", type=Path, help="render tests/data/ingest/*.md in every format into this folder")
    args = parser.parse_args()
    missing = [tool for tool in ("pandoc", "soffice", "pdftoppm", "img2pdf", "tesseract") if not shutil.which(tool)]
    if missing:
        print(f"needs {', '.join(missing)} (Debian: pandoc libreoffice-writer-nogui poppler-utils img2pdf "
              "tesseract-ocr tesseract-ocr-fas)", file=sys.stderr)
        return 2
    if args.fixtures:
        for source in sorted(args.fixtures.glob("*.md")):
            made = render(source, args.fixtures, scan_pages=1, scan_dpi=200, scan_mono=True)
            print(" ".join(f"{p.name} ({p.stat().st_size // 1024} KB)" for p in made.values()))
        return 0
    if not args.corpus:
        parser.error("--corpus or --fixtures")
    started = time.perf_counter()
    result = measure(args.corpus, ocr_pages=args.ocr_pages)
    table = report(result)
    print(table)
    print(f"\n{len(list(args.corpus.glob('*.md')))} documents, {time.perf_counter() - started:.0f} s")
    out = REPO / "benchmarks" / "results"
    out.mkdir(exist_ok=True)
    (out / "ingest_formats.json").write_text(json.dumps({"table": table, **result}, ensure_ascii=False, indent=1),
                                             encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
