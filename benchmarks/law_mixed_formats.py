"""The insurance-law-fa set with its statutes as an insurer keeps them: PDF, DOCX, HTML, a scan, text, Markdown.

    .venv/bin/python benchmarks/law_mixed_formats.py --data ../shared/bench/insurance-law-fa --out law-mixed
    .venv/bin/agent eval law-mixed/corpus law-mixed/questions.json --out law-mixed/eval   # then the originals

Each statute is rendered in one format (benchmarks/ingest_formats.py: pandoc, LibreOffice,
pdftoppm + img2pdf for the scan); the metadata its front matter held goes into a Bedrock-style
sidecar `<file>.metadata.json` (formats without front matter), so the documents keep their
file_id, title, domain and product and the questions' expected file_ids still apply.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))

FORMATS = {  # statute -> format it is kept in
    "auto-consumer-law-1386": "pdf", "bodily-fund-statute-1397": "docx", "central-insurance-law-1350": "html",
    "health-insurance-law-1373": "pdf", "tp-claims-bylaw-art30": "scan", "tp-impound-bylaw-1396": "txt",
    "tp-premium-bylaw-1396": "md", "tp-violation-bylaw-1398": "docx",
}


def build(data: Path, out: Path) -> dict[str, str]:
    from ingest_formats import render

    corpus = out / "corpus"
    corpus.mkdir(parents=True, exist_ok=True)
    shutil.copy(data / "questions.json", out / "questions.json")
    made = {}
    for source in sorted((data / "corpus").glob("*.md")):
        kind = FORMATS.get(source.stem, "md")
        if kind in ("md", "txt"):
            target = corpus / f"{source.stem}.{kind}"
            shutil.copy(source, target)
            made[target.name] = kind
            continue
        text = source.read_text(encoding="utf-8")
        meta = yaml.safe_load(text.split("---", 2)[1]) if text.startswith("---") else {}
        with tempfile.TemporaryDirectory() as tmp:
            formats = {"pdf": ("docx", "pdf"), "scan": ("docx", "pdf", "scan")}.get(kind, (kind,))
            paths = render(source, Path(tmp), scan_pages=10_000, formats=formats)
            target = corpus / f"{source.stem}.pdf" if kind == "scan" else corpus / paths[kind].name
            shutil.copy(paths[kind], target)
        sidecar = {"metadataAttributes": {k: v for k, v in meta.items() if v is not None}}
        (corpus / f"{target.name}.metadata.json").write_text(json.dumps(sidecar, ensure_ascii=False, indent=1),
                                                              encoding="utf-8")
        made[target.name] = kind
    return made


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, required=True, help="the insurance-law-fa folder (corpus/, questions.json)")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    for name, kind in build(args.data, args.out).items():
        print(f"{kind:5} {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
