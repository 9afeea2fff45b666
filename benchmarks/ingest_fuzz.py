"""Bad documents: hostile files refused by name, and generated malformed files fuzzing the loaders.

    .venv/bin/python benchmarks/ingest_fuzz.py [--examples 300] [--seed 7]

`hostile_files(folder)` writes one file per attack with the refusal it must get (the regression
tests use the same files): an encrypted PDF, a truncated PDF, a DOCX named .pdf, an image named
.docx, a DOCX zip bomb, a DOCX whose XML declares entities, a PDF of 2,000 pages, a PDF page of
one huge image, a 50 MB web page, an empty PDF. The fuzz then mutates the real fixtures
(tests/data/ingest: PDF, scanned PDF, DOCX, HTML) by flipping bytes, truncating, splicing and
rewriting zip entries, and loads each mutant through `insurance_ingest.load_file` under the
default limits. It reports how each ended (loaded, or refused with which reason), the slowest
file, the children's peak memory, and any error that is not a typed refusal (must be none).
"""

from __future__ import annotations

import argparse
import io
import json
import random
import sys
import tempfile
import time
import zipfile
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO / "tests" / "data" / "ingest"
BILLION_LAUGHS = (
    '<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol">'
    + "".join(f'<!ENTITY lol{i} "{("&lol" + (str(i - 1) if i > 1 else "") + ";") * 10}">' for i in range(1, 10))
    + ']><w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body><w:p><w:r>'
    "<w:t>&lol9;</w:t></w:r></w:p></w:body></w:document>"
)


def _replace_entry(docx: bytes, name: str, data: bytes | None = None, *, stream_zeros: int = 0) -> bytes:
    """A copy of a DOCX with one entry replaced (or streamed as `stream_zeros` zero bytes)."""
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(docx)) as source, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as target:
        for item in source.infolist():
            if item.filename != name:
                target.writestr(item, source.read(item.filename))
        if stream_zeros:
            info = zipfile.ZipInfo(name)
            info.compress_type = zipfile.ZIP_DEFLATED
            with target.open(info, "w", force_zip64=True) as handle:
                block = b"\0" * (1 << 20)
                for _ in range(stream_zeros // len(block)):
                    handle.write(block)
        else:
            target.writestr(name, data or b"")
    return out.getvalue()


def hostile_files(folder: Path) -> dict[str, str]:
    """Write the hostile files into `folder`; returns file name -> the reason it must be refused with."""
    import pypdf
    from PIL import Image

    pdf = (FIXTURES / "claims-excerpt.pdf").read_bytes()
    docx = (FIXTURES / "claims-excerpt.docx").read_bytes()
    expected: dict[str, str] = {}

    writer = pypdf.PdfWriter(clone_from=io.BytesIO(pdf))
    writer.encrypt(user_password="secret", owner_password="owner", algorithm="AES-128")
    with open(folder / "encrypted.pdf", "wb") as handle:
        writer.write(handle)
    expected["encrypted.pdf"] = "encrypted"

    (folder / "truncated.pdf").write_bytes(pdf[: len(pdf) // 3])
    expected["truncated.pdf"] = "corrupt"
    (folder / "word-named.pdf").write_bytes(docx)
    expected["word-named.pdf"] = "format_mismatch"
    png = io.BytesIO()
    Image.new("L", (64, 64), 255).save(png, "PNG")
    (folder / "picture-named.docx").write_bytes(png.getvalue())
    expected["picture-named.docx"] = "format_mismatch"
    (folder / "zip-bomb.docx").write_bytes(_replace_entry(docx, "word/document.xml", stream_zeros=96 << 20))
    expected["zip-bomb.docx"] = "zip_bomb"
    (folder / "entities.docx").write_bytes(_replace_entry(docx, "word/document.xml", BILLION_LAUGHS.encode()))
    expected["entities.docx"] = "xml_entities"

    many = pypdf.PdfWriter()
    for _ in range(2000):
        many.add_blank_page(width=595, height=842)
    with open(folder / "many-pages.pdf", "wb") as handle:
        many.write(handle)
    expected["many-pages.pdf"] = "too_many_pages"

    # One 12,000 x 12,000 pixel scan (144 megapixels; 4 KB compressed) as a page.
    Image.new("1", (12000, 12000), 1).save(folder / "huge-page-image.pdf", "PDF", resolution=300)
    expected["huge-page-image.pdf"] = "page_too_large"

    with open(folder / "huge-page.html", "wb") as handle:  # 50 MB, sparse: refused by size, never read
        handle.write(b"<!DOCTYPE html><html><body><p>")
        handle.truncate(50 * 1024 * 1024)
    expected["huge-page.html"] = "too_large"
    (folder / "empty.pdf").write_bytes(b"")
    expected["empty.pdf"] = "empty"
    return expected


# -- fuzz -----------------------------------------------------------------------------------------
def _mutants(rng: random.Random, count: int):
    sources = [p for p in sorted(FIXTURES.iterdir()) if p.suffix in (".pdf", ".docx", ".html")]
    for i in range(count):
        source = rng.choice(sources)
        data = bytearray(source.read_bytes())
        how = rng.choice(["flip", "truncate", "splice", "zip-entry"] if source.suffix == ".docx" else
                         ["flip", "truncate", "splice"])
        if how == "flip":
            for _ in range(max(1, len(data) // rng.choice([50, 200, 1000]))):
                data[rng.randrange(len(data))] = rng.randrange(256)
        elif how == "truncate":
            data = data[: rng.randrange(1, len(data))]
        elif how == "splice":
            start, length = rng.randrange(len(data)), rng.randrange(1, 4096)
            data[start:start] = data[max(0, start - length): start] * rng.randint(1, 20)
        else:
            with zipfile.ZipFile(io.BytesIO(bytes(data))) as archive:
                name = rng.choice(archive.namelist())
                entry = bytearray(archive.read(name))
            for _ in range(max(1, len(entry) // 100)):
                if entry:
                    entry[rng.randrange(len(entry))] = rng.randrange(256)
            data = bytearray(_replace_entry(bytes(data), name, bytes(entry)))
        yield f"m{i:04d}-{how}{source.suffix}", bytes(data), source.name


def fuzz(count: int, seed: int) -> dict:
    from insurance_search.documents import DocumentError
    from insurance_ingest import load_file

    rng = random.Random(seed)
    outcomes: Counter[str] = Counter()
    untyped: list[str] = []
    slowest = (0.0, "")
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as folder:
        for name, data, source in _mutants(rng, count):
            path = Path(folder) / name
            path.write_bytes(data)
            t0 = time.perf_counter()
            try:
                load_file(path)
                outcomes["loaded"] += 1
            except DocumentError as error:
                outcomes[error.reason] += 1
            except Exception as error:  # noqa: BLE001 - what the fuzz is looking for
                outcomes["UNTYPED"] += 1
                untyped.append(f"{name} (from {source}): {type(error).__name__}")
            elapsed = time.perf_counter() - t0
            slowest = max(slowest, (elapsed, name))
            path.unlink()
    from insurance_ingest import isolation

    children = isolation.peak_rss_kib / 1024
    return {"examples": count, "seed": seed, "seconds": round(time.perf_counter() - started, 1),
            "outcomes": dict(outcomes.most_common()), "untyped": untyped,
            "slowest": {"seconds": round(slowest[0], 2), "file": slowest[1]}, "children_peak_rss_mib": round(children)}


def hostile_run() -> list[dict]:
    from insurance_search.documents import DocumentError
    from insurance_ingest import load_file

    rows = []
    with tempfile.TemporaryDirectory() as folder:
        expected = hostile_files(Path(folder))
        for name, reason in expected.items():
            t0 = time.perf_counter()
            try:
                load_file(Path(folder) / name)
                got, detail = "loaded", ""
            except DocumentError as error:
                got, detail = error.reason, error.detail
            rows.append({"file": name, "expected": reason, "got": got, "detail": detail,
                         "seconds": round(time.perf_counter() - t0, 2)})
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--examples", type=int, default=300)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    rows = hostile_run()
    print("| file | refused as | detail | s |\n|---|---|---|---:|")
    for row in rows:
        mark = "" if row["got"] == row["expected"] else f" (expected {row['expected']})"
        print(f"| {row['file']} | {row['got']}{mark} | {row['detail']} | {row['seconds']} |")
    result = fuzz(args.examples, args.seed)
    print(f"\nfuzz: {json.dumps(result, ensure_ascii=False)}")
    out = REPO / "benchmarks" / "results"
    out.mkdir(exist_ok=True)
    (out / "ingest_fuzz.json").write_text(json.dumps({"hostile": rows, "fuzz": result}, ensure_ascii=False, indent=1),
                                          encoding="utf-8")
    return 0 if all(r["got"] == r["expected"] for r in rows) and not result["untyped"] else 1


if __name__ == "__main__":
    sys.exit(main())
