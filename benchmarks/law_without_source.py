"""Precision when the answer is not in the corpus: each question asked of the statutes without the one
that holds its answer.

    .venv/bin/python benchmarks/law_without_source.py --data <insurance-law-fa folder> [--questions FILE]

For every document of the set's corpus, the other documents are ingested into a fresh AGENT_HOME and
the questions whose only expected document is the removed one are asked (each in a new thread,
through `agent eval`, so the real graph answers). None of them can be answered correctly
any more: a reply with status `answer` and citations is a confident answer from a document that
does not hold the fact. The figure to watch is how many of the questions get one; the default
questions are the development set of `benchmarks/data/` (single questions, chains left out).
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from agent_local.evaluation.scoring import half_of

HERE = Path(__file__).resolve().parent
DEFAULT_QUESTIONS = HERE / "data" / "law_dev_questions.json"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, required=True, help="folder with corpus/ (insurance-law-fa)")
    parser.add_argument("--questions", type=Path, default=DEFAULT_QUESTIONS)
    parser.add_argument("--work", type=Path, help="scratch folder (default: a temporary one)")
    parser.add_argument(
        "--half",
        choices=("fit", "report"),
        help="ask only this half (an entry's own `half`, else the benchmark's split by id); the REPORT "
        "half prints counts only",
    )
    args = parser.parse_args(argv)
    documents = sorted((args.data / "corpus").glob("*.md"))
    if not documents:
        parser.error(f"{args.data}/corpus has no documents")
    questions = json.loads(args.questions.read_text(encoding="utf-8"))
    work = args.work or Path(tempfile.mkdtemp(prefix="agent-law-nosource-"))
    asked = answered = 0
    for document in documents:
        file_id = document.stem
        own = [
            {"id": q["id"], "kind": "unanswerable", "question": q["question"], "half": "fit"}
            for q in questions
            if q.get("file_ids") == [file_id]
            and (args.half is None or (q.get("half") or half_of(q["id"])) == args.half)
        ]
        if not own:
            continue
        folder = work / file_id
        shutil.rmtree(folder, ignore_errors=True)
        (folder / "corpus").mkdir(parents=True)
        for other in documents:
            if other != document:
                shutil.copy(other, folder / "corpus" / other.name)
        (folder / "asked.json").write_text(json.dumps(own, ensure_ascii=False), encoding="utf-8")
        subprocess.run(
            [sys.executable, "-m", "agent_local.cli", "eval", str(folder / "corpus"), str(folder / "asked.json"),
             "--out", str(folder / "out")],
            check=False,
            stdout=subprocess.DEVNULL,
        )
        if not (folder / "out" / "report.json").is_file():
            print(f"{file_id}: agent eval wrote no report, see {folder}", file=sys.stderr)
            return 1
        replies = json.loads((folder / "out" / "report.json").read_text(encoding="utf-8"))["records"]
        errors = [r for r in replies if r["reply"]["reason"] == "system_error"]
        if errors:
            print(f"{file_id}: {len(errors)} replies ended in system_error, see {folder}", file=sys.stderr)
            return 1
        wrong = [r for r in replies if r["verdict"] == "answered"]
        asked += len(replies)
        answered += len(wrong)
        print(f"without {file_id}: {len(wrong)} of {len(replies)} answered from another document")
        for reply in wrong if args.half != "report" else ():
            print(f"    {reply['id']}: cited {sorted({c['file_id'] for c in reply['reply']['citations']})}")
    print(f"answered without their source: {answered} of {asked} ({answered / max(asked, 1):.1%})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
