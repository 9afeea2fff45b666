"""Answer quality on real insurance statutes, asked the way customers ask (development set).

    .venv/bin/python benchmarks/insurance_law_fa.py [--data DIR] [--json out.json] [--verbose]

The set is a folder with `corpus/*.md` (documents with YAML front matter) and `questions.json`
(formal, colloquial and English questions, unanswerable questions, and chains of follow-ups); its
README defines the scoring, which this script implements:

- reply and phrase are normalised alike (Arabic ي/ك -> Persian, ZWNJ -> space, Persian/Arabic
  digits -> Latin, whitespace runs -> one space);
- an answerable item or chain turn is *correct* iff the reply's status is `answer`, its citations
  include one of the item's `file_ids`, and the reply contains one of its `must_contain` phrases;
  an `answer` with citations that is not correct is *wrong*; anything else is *not answered*;
- an unanswerable question is *wrong* iff it is answered with citations, else *not answered*.

The corpus is ingested with the real loader and chunker into a fresh AGENT_HOME under one tenant,
then every question runs through the real graph on the local stack (moto executes
statemachine/turn.asl.json, handlers in-process, the configured model provider; embedded default
unless the environment says otherwise): one new thread per question, a chain's turns in order in
one thread.

Fit / report split: every item (a chain counts as one item, so it stays whole) goes to the FIT or
the REPORT half by the first byte of sha256(id). Only FIT failures may be looked at when deciding
what to change (`--verbose` prints those and nothing of the REPORT half); both halves are reported.

`--questions FILE` runs another labelled set over the same corpus: `benchmarks/data/law_dev_questions.json`
holds questions written for development on these documents (not derived from the set's own questions);
its entries say `"half": "fit"`, so all of them may be examined.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import sys
import tempfile
import time
import uuid
from collections import defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DEFAULT_DATA = REPO / ".." / "shared" / "bench" / "insurance-law-fa"
TENANT = "lawfa"
CATEGORIES = ("formal", "colloquial", "english", "chain-first", "follow-up", "unanswerable")
ANSWERABLE = CATEGORIES[:-1]
_ARABIC = str.maketrans("يكىۀة", "یکیهه")
_DIGITS = str.maketrans("۰۱۲۳۴۵۶۷۸۹٠١٢٣٤٥٦٧٨٩", "01234567890123456789")
_INVISIBLE = re.compile("[\u200c\u200f\u200e\u00ad\u200d]")


def half_of(item_id: str) -> str:
    """FIT or REPORT, fixed by the id's hash (no look at the question text)."""
    return "fit" if hashlib.sha256(item_id.encode("utf-8")).digest()[0] % 2 == 0 else "report"


def score_text(text: str) -> str:
    """The README's normalisation (soft hyphens and direction marks dropped, ZWNJ as a space)."""
    text = text.translate(_ARABIC).translate(_DIGITS).replace("\u200c", " ")
    text = _INVISIBLE.sub("", text)
    return re.sub(r"\s+", " ", text).strip()


def configure(home: Path) -> None:
    os.environ["AGENT_HOME"] = str(home)
    os.environ["AGENT_QDRANT_PATH"] = str(home / "qdrant")
    os.environ.pop("AGENT_QDRANT_URL", None)
    os.environ["HF_HUB_OFFLINE"] = "1"
    from insurance_agent.config import get_settings

    get_settings.cache_clear()


def store_available(home: Path) -> bool:
    """Whether this process can open the embedded store: a second process on the same folder (two
    runs, or `agent serve`, on one AGENT_HOME) is refused by Qdrant's lock, and every turn then
    ends in `system_error` at retrieve."""
    path = home / "qdrant"
    if not path.exists():
        return True
    from qdrant_client import QdrantClient

    try:
        QdrantClient(path=str(path)).close()
    except RuntimeError:
        return False
    return True


def items_of(questions: list[dict]) -> list[dict]:
    """Each item with its turns: [(category, turn dict)], chains in order."""
    items = []
    for entry in questions:
        if "turns" in entry:
            turns = [
                ("chain-first" if i == 0 else "follow-up", turn) for i, turn in enumerate(entry["turns"])
            ]
        else:
            turns = [(entry["kind"], entry)]
        items.append({"id": entry["id"], "half": entry.get("half") or half_of(entry["id"]), "turns": turns})
    return items


def judge(category: str, turn: dict, reply: dict) -> str:
    answered = reply["status"] == "answer" and bool(reply.get("citations"))
    if category == "unanswerable":
        return "wrong" if answered else "not_answered"
    if not answered:
        return "not_answered"
    cited = {c.get("file_id") for c in reply["citations"]}
    message = score_text(reply.get("message", ""))
    phrase = any(score_text(p) in message for p in turn.get("must_contain", []))
    return "correct" if phrase and cited & set(turn.get("file_ids", [])) else "wrong"


def run(stack, items: list[dict]) -> list[dict]:
    rows = []
    for item in items:
        thread = f"law-{uuid.uuid4().hex[:12]}"
        for position, (category, turn) in enumerate(item["turns"]):
            reply = stack.run_turn(
                {
                    "thread_id": thread,
                    "turn_id": f"turn-{uuid.uuid4().hex}",
                    "user_id": "law-reader",
                    "tenant_id": TENANT,
                    "roles": ["user"],
                    "message": turn["question"],
                }
            )
            rows.append(
                {
                    "id": item["id"] if len(item["turns"]) == 1 else f"{item['id']}.{position + 1}",
                    "half": item["half"],
                    "category": category,
                    "question": turn["question"],
                    "verdict": judge(category, turn, reply),
                    "status": reply["status"],
                    "reason": reply.get("reason"),
                    "cited_files": sorted({c.get("file_id") for c in reply.get("citations", [])}),
                    "expected_files": turn.get("file_ids", []),
                    "must_contain": turn.get("must_contain", []),
                    "llm_calls": reply["trace"]["llm_calls"],
                    "path": reply["trace"].get("path", []),
                    "message": reply.get("message", ""),
                }
            )
    return rows


def table(rows: list[dict], title: str) -> dict:
    """Print one table; return its summary figures."""
    counts: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for row in rows:
        counts[row["category"]][row["verdict"]] += 1
    print(f"\n{title} ({len(rows)} replies)")
    print(f"  {'category':<13}{'n':>4}{'correct':>9}{'wrong':>7}{'not answered':>14}")
    for category in CATEGORIES:
        c = counts.get(category, {})
        n = sum(c.values())
        if n:
            print(f"  {category:<13}{n:>4}{c.get('correct', 0):>9}{c.get('wrong', 0):>7}{c.get('not_answered', 0):>14}")
    answerable = [r for r in rows if r["category"] in ANSWERABLE]
    unanswerable = [r for r in rows if r["category"] == "unanswerable"]

    def share(part: list[dict], verdict: str) -> float:
        return sum(r["verdict"] == verdict for r in part) / len(part) if part else 0.0

    summary = {
        "replies": len(rows),
        "answerable": len(answerable),
        "answerable_correct": share(answerable, "correct"),
        "colloquial_correct": share([r for r in rows if r["category"] == "colloquial"], "correct"),
        "english_correct": share([r for r in rows if r["category"] == "english"], "correct"),
        "follow_up_correct": share([r for r in rows if r["category"] == "follow-up"], "correct"),
        "wrong_of_all": share(rows, "wrong"),
        "unanswerable_answered": sum(r["verdict"] == "wrong" for r in unanswerable),
        "unanswerable": len(unanswerable),
        "mean_llm_calls": sum(r["llm_calls"] for r in rows) / len(rows) if rows else 0.0,
        "by_category": {k: dict(v) for k, v in counts.items()},
    }
    print(
        f"  answerable correct {summary['answerable_correct']:.0%} (target >= 65%); colloquial "
        f"{summary['colloquial_correct']:.0%}, English {summary['english_correct']:.0%} (>= 50%); "
        f"follow-up {summary['follow_up_correct']:.0%} (>= 50%)"
    )
    errors = sum(r["reason"] == "system_error" for r in rows)
    if errors:
        print(f"  WARNING: {errors} replies ended in system_error (a failure, not a judgement): see the log")
    print(
        f"  wrong answers {summary['wrong_of_all']:.1%} of all replies (<= 5%); unanswerable answered with "
        f"citations {summary['unanswerable_answered']} of {summary['unanswerable']} (<= 1 of 15); "
        f"model calls per turn {summary['mean_llm_calls']:.2f}"
    )
    return summary


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="folder with corpus/ and questions.json")
    parser.add_argument("--home", type=Path, help="AGENT_HOME to use (default: a fresh temporary folder)")
    parser.add_argument("--json", type=Path, help="write every reply's verdict and the summaries here")
    parser.add_argument("--verbose", action="store_true", help="print the FIT half's failures (never the REPORT half's)")
    parser.add_argument("--questions", type=Path, help="questions file (default: questions.json in --data)")
    parser.add_argument("--half", choices=("fit", "report"), help="run only this half (default: both)")
    parser.add_argument(
        "--skip-ingest", action="store_true", help="reuse the corpus already ingested in --home (iterating on roles)"
    )
    args = parser.parse_args(argv)
    if not (args.data / "questions.json").is_file() or not (args.data / "corpus").is_dir():
        parser.error(f"{args.data} has no questions.json and corpus/ (pass --data)")

    home = args.home or Path(tempfile.mkdtemp(prefix="agent-law-"))
    configure(home)
    if not store_available(home):
        print(
            f"the embedded store in {home} is open in another process (embedded Qdrant is single-process): "
            "every turn would end in system_error; wait for it or use another --home",
            file=sys.stderr,
        )
        return 2
    sys.path.insert(0, str(REPO / "local"))
    from insurance_agent.retrieval.ingest import ingest_directory

    from agent_local.stack import LocalStack

    questions = args.questions or args.data / "questions.json"
    items = items_of(json.loads(questions.read_text(encoding="utf-8")))
    if args.half:
        items = [item for item in items if item["half"] == args.half]
    if args.skip_ingest and not args.home:
        parser.error("--skip-ingest needs --home")
    started = time.perf_counter()
    if args.skip_ingest:
        from insurance_agent.retrieval.ingest import IngestReport

        report = IngestReport()
    else:
        report = ingest_directory(args.data / "corpus", TENANT, reset=True)
    ingest_seconds = time.perf_counter() - started
    with LocalStack(home, fast_retries=True, persist=False) as stack:
        rows = run(stack, items)
    seconds = time.perf_counter() - started
    print(
        f"insurance-law-fa: {report.files} documents, {report.chunks} chunks, {len(report.skipped)} skipped; "
        f"{len(rows)} replies in {seconds:.0f} s (ingest {ingest_seconds:.0f} s)"
    )
    summaries = {"all": table(rows, "ALL")}
    for half in ("fit", "report"):
        if any(r["half"] == half for r in rows):
            summaries[half] = table([r for r in rows if r["half"] == half], f"{half.upper()} half")
    if args.verbose:
        print("\nFIT-half failures:")
        for r in rows:
            if r["half"] == "fit" and r["verdict"] != ("not_answered" if r["category"] == "unanswerable" else "correct"):
                print(
                    f"  [{r['id']} {r['category']} {r['verdict']} {r['status']}:{r['reason']}] {r['question']}\n"
                    f"      cited {r['cited_files']} expected {r['expected_files']} | {r['message'][:300]!r}"
                )
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(
            json.dumps({"summary": summaries, "replies": rows}, ensure_ascii=False, indent=1), encoding="utf-8"
        )
    s = summaries["all"]
    met = (
        s["answerable_correct"] >= 0.65
        and s["colloquial_correct"] >= 0.5
        and s["english_correct"] >= 0.5
        and s["follow_up_correct"] >= 0.5
        and s["wrong_of_all"] <= 0.05
        and s["unanswerable_answered"] <= 1
    )
    return 0 if met else 1


if __name__ == "__main__":
    raise SystemExit(main())
