"""Answerability on PersianQA: whole turns through the real ASL on the embedded default.

    .venv/bin/python benchmarks/answerability_persianqa.py [--data ../shared/bench/persianqa/pqa_test.json]
        [--answerable 50 --impossible 40] [--half fit|report] [--home DIR [--skip-ingest]] [--verbose]

Every PersianQA paragraph is ingested (real chunking and encoders, embedded Qdrant in a private
AGENT_HOME) as one document of tenant `pqa`, its article title as the title. Questions run as
first turns of fresh threads through StartSyncExecution on the local stack (moto executes
statemachine/turn.asl.json, the node handlers run in-process, local model provider).

Selection (fixed): the answerable and the impossible questions, each list sorted by question id,
shuffled with random.Random(SEED) and cut to the first --answerable (50) and --impossible (40).
The default selection is the headline figure; a larger one (`--answerable 100 --impossible 80`)
starts with the same questions and gives each half more items.

Fit / report split: every selected question goes to the FIT or the REPORT half by the first byte of
sha256(question id), as `agent eval` splits a question set. Rules and thresholds are fitted on FIT failures
only (`--verbose` prints those and nothing of the REPORT half); both halves are reported as figures.
`--half` runs only one half of the selection.

The deployment's topic scope is the tenant's corpus (AGENT_TOPIC_SCOPE=corpus): these are
Wikipedia questions, which the insurance scope would turn away as out of scope before retrieval.

Reported:
- answerable: answered (status answer) with the gold paragraph among the citations, and of those
  with a gold answer text inside a cited chunk's own text (normalised, word for word);
- impossible: NOT answered from the corpus: answered=false / low confidence, another escalation,
  a clarifying question, or a reply that cites nothing;
- answers (both sets) with a number that no cited chunk (as retrieved in that turn) and no
  calculator result of the draft contains; must be 0.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
import uuid
from collections import Counter
from pathlib import Path

from private_store import use_private_store

REPO = Path(__file__).resolve().parents[1]
DEFAULT_DATA = REPO / ".." / "shared" / "bench" / "persianqa" / "pqa_test.json"
TENANT = "pqa"
SEED = 20240601
TARGETS = {"answerable_with_gold": 0.70, "impossible_not_answered": 0.50, "unsupported_numbers": 0}


def configure(home: Path) -> None:
    use_private_store(home, AGENT_TOPIC_SCOPE="corpus")


def half_of(question_id: int | str) -> str:
    """FIT or REPORT, fixed by the hash of the id (PersianQA's ids are numbers)."""
    from agent_local.evaluation.scoring import half_of as split

    return split(str(question_id))


def load(path: Path):
    """Documents (one per paragraph) and questions as (file_id, qa) pairs."""
    from insurance_search.documents import Document

    data = json.loads(path.read_text(encoding="utf-8"))["data"]
    documents, questions = [], []
    for a, article in enumerate(data):
        for p, paragraph in enumerate(article["paragraphs"]):
            file_id = f"pqa-{a:03d}-{p}"
            documents.append(
                Document(file_id=file_id, title=article["title"], text=paragraph["context"], language="fa")
            )
            questions += [(file_id, qa) for qa in paragraph["qas"]]
    return documents, questions


def select(questions, answerable: int, impossible: int):
    def pick(items, count):
        items = sorted(items, key=lambda item: item[1]["id"])
        random.Random(SEED).shuffle(items)
        return items[:count]

    return (
        pick([q for q in questions if not q[1]["is_impossible"]], answerable),
        pick([q for q in questions if q[1]["is_impossible"]], impossible),
    )


def ask(stack, question: str) -> tuple[dict, dict]:
    """One first turn; returns the reply and the turn's stored working data (chunks, draft)."""
    from insurance_agent.store import turns

    thread, turn = f"pqa-{uuid.uuid4().hex[:12]}", f"turn-{uuid.uuid4().hex}"
    reply = stack.run_turn(
        {
            "thread_id": thread,
            "turn_id": turn,
            "user_id": "pqa-reader",
            "tenant_id": TENANT,
            "roles": ["user"],
            "message": question,
        }
    )
    return reply, turns.get_parts(turn, thread)


def unsupported_numbers(reply: dict, stored: dict) -> list[str]:
    """Numbers of an answer found in no cited chunk (as retrieved this turn) and no calculator result."""
    from insurance_agent.text import numbers_in

    if reply["status"] != "answer":
        return []
    retrieved = {c["chunk_id"]: c for c in stored.get("chunks", [])}
    allowed: set[str] = set()
    for citation in reply["citations"]:
        chunk = retrieved.get(citation["chunk_id"], {})
        allowed |= numbers_in(chunk.get("text", "")) | numbers_in(chunk.get("title", ""))
    for calculation in (stored.get("draft") or {}).get("result", {}).get("calculations", []):
        if calculation.get("result") and not calculation.get("error"):
            allowed |= numbers_in(calculation["result"])
            for operand in calculation.get("operands", []):
                allowed |= numbers_in(operand.get("value", ""))
    return sorted(numbers_in(reply["message"]) - allowed)


def outcome(reply: dict) -> str:
    if reply["status"] == "answer":
        return "answer" if reply["citations"] else "answer_without_citation"
    if reply["status"] == "escalate":
        return f"escalate:{reply.get('reason')}"
    return reply["status"]


def summarize(rows: list[dict]) -> dict:
    a_rows = [r for r in rows if r["kind"] == "answerable"]
    i_rows = [r for r in rows if r["kind"] == "impossible"]
    return {
        "answerable": len(a_rows),
        "answerable_with_gold": sum(r["gold_cited"] for r in a_rows) / max(len(a_rows), 1),
        "answerable_with_gold_text": sum(r["gold_text_cited"] for r in a_rows) / max(len(a_rows), 1),
        "answerable_outcomes": dict(Counter(r["outcome"] for r in a_rows)),
        "impossible": len(i_rows),
        "impossible_not_answered": sum(r["outcome"] != "answer" for r in i_rows) / max(len(i_rows), 1),
        "impossible_outcomes": dict(Counter(r["outcome"] for r in i_rows)),
        "unsupported_numbers": sum(bool(r["unsupported_numbers"]) for r in rows),
        "mean_llm_calls": sum(r["llm_calls"] for r in rows) / max(len(rows), 1),
    }


def print_summary(summary: dict, label: str) -> None:
    print(f"{label}: {summary['answerable']} answerable, {summary['impossible']} impossible")
    print(
        f"  answerable answered citing the gold paragraph: {summary['answerable_with_gold']:.0%} "
        f"(gold answer inside a cited chunk: {summary['answerable_with_gold_text']:.0%})   target >= 70%"
    )
    print(f"      outcomes: {summary['answerable_outcomes']}")
    print(f"  impossible not answered from the corpus:       {summary['impossible_not_answered']:.0%}   target >= 50%")
    print(f"      outcomes: {summary['impossible_outcomes']}")
    print(f"  answers with a number in no cited chunk:       {summary['unsupported_numbers']}   target 0")
    print(f"  model calls per turn (mean): {summary['mean_llm_calls']:.2f}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="PersianQA pqa_test.json")
    parser.add_argument("--home", type=Path, help="AGENT_HOME to use (default: a temporary folder)")
    parser.add_argument("--answerable", type=int, default=50)
    parser.add_argument("--impossible", type=int, default=40)
    parser.add_argument("--half", choices=("fit", "report"), help="run only this half of the selection")
    parser.add_argument(
        "--skip-ingest", action="store_true", help="reuse the corpus already ingested in --home (iterating on roles)"
    )
    parser.add_argument("--json", type=Path, help="write every question's outcome and the summaries here")
    parser.add_argument("--verbose", action="store_true", help="print the FIT half's misses (never the REPORT half's)")
    args = parser.parse_args(argv)
    if not args.data.is_file():
        parser.error(f"{args.data} not found (pass --data)")
    if args.skip_ingest and not args.home:
        parser.error("--skip-ingest needs --home")

    home = args.home or Path(tempfile.mkdtemp(prefix="agent-pqa-"))
    configure(home)
    sys.path.insert(0, str(REPO / "local"))
    from insurance_offline.lexical import contains
    from insurance_search.chunking import chunk_document
    from insurance_search.ingest import ingest_documents

    from agent_local.stack import LocalStack

    documents, questions = load(args.data)
    answerable, impossible = select(questions, args.answerable, args.impossible)
    if args.half:
        answerable = [q for q in answerable if half_of(q[1]["id"]) == args.half]
        impossible = [q for q in impossible if half_of(q[1]["id"]) == args.half]
    started = time.perf_counter()
    if args.skip_ingest:
        from insurance_search.ingest import IngestReport

        report = IngestReport(files=len(documents), chunks=0)
    else:
        report = ingest_documents(documents, TENANT)
    own_text = {c.chunk_id: c.text for d in documents for c in chunk_document(d, TENANT)}
    ingest_seconds = time.perf_counter() - started

    rows = []
    with LocalStack(home, parameters={"TopicScope": "corpus"}, fast_retries=True, persist=False) as stack:
        for kind, items in (("answerable", answerable), ("impossible", impossible)):
            for file_id, qa in items:
                reply, stored = ask(stack, qa["question"])
                cited = [c["chunk_id"] for c in reply["citations"]]
                gold = reply["status"] == "answer" and any(c.startswith(f"{file_id}#") for c in cited)
                golds = [a["text"] for a in qa["answers"]]
                gold_text = gold and any(contains(own_text.get(c, ""), g) for c in cited for g in golds)
                rows.append(
                    {
                        "kind": kind,
                        "id": qa["id"],
                        "half": half_of(qa["id"]),
                        "question": qa["question"],
                        "gold_file": file_id,
                        "gold_answers": golds,
                        "outcome": outcome(reply),
                        "cited": cited,
                        "gold_cited": gold,
                        "gold_text_cited": gold_text,
                        "unsupported_numbers": unsupported_numbers(reply, stored),
                        "llm_calls": reply["trace"]["llm_calls"],
                        "message": reply["message"],
                    }
                )
    seconds = time.perf_counter() - started

    summary = summarize(rows)
    summary.update(
        documents=report.files,
        chunks=report.chunks,
        ingest_seconds=round(ingest_seconds, 1),
        seconds=round(seconds, 1),
        seed=SEED,
    )
    print(
        f"PersianQA answerability, tenant {TENANT}: {report.files} documents, {report.chunks} chunks, "
        f"{len(rows)} turns in {seconds:.0f} s (ingest {ingest_seconds:.0f} s)"
    )
    print_summary(summary, "ALL")
    halves = {}
    for half in ("fit", "report"):
        part = [r for r in rows if r["half"] == half]
        if part and len(part) < len(rows):
            halves[half] = summarize(part)
            print_summary(halves[half], f"{half.upper()} half")
    if args.verbose:
        print("\nFIT-half misses:")
        for r in rows:
            if r["half"] != "fit":
                continue
            miss = (r["kind"] == "answerable" and not r["gold_text_cited"]) or (
                r["kind"] == "impossible" and r["outcome"] == "answer"
            )
            if miss or r["unsupported_numbers"]:
                print(
                    f"  [{r['kind']} {r['outcome']}] {r['question']} | gold: {r['gold_answers'][:1]} | "
                    f"{r['message'][:160]!r}"
                )
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(
            json.dumps({"summary": summary, "halves": halves, "questions": rows}, ensure_ascii=False, indent=1),
            encoding="utf-8",
        )
    met = (
        summary["answerable_with_gold"] >= TARGETS["answerable_with_gold"]
        and summary["impossible_not_answered"] >= TARGETS["impossible_not_answered"]
        and summary["unsupported_numbers"] == TARGETS["unsupported_numbers"]
    )
    return 0 if met else 1


if __name__ == "__main__":
    raise SystemExit(main())
