"""Model calls per turn on the embedded default: the demo conversation and a representative set.

    .venv/bin/python benchmarks/model_calls.py [--baseline] [--json out.json]

The sample corpus (samples/corpus/sepehr and kavir) and the sample policy records are loaded into a
private AGENT_HOME; every conversation then runs turn by turn through the real ASL on the local
stack (moto, in-process handlers, local model provider), exactly as tests/conftest.py sets it up.
A turn's model calls are the execution's `trace.llm_calls` (the nodes count one per role call).

The set: samples/conversations/demo.json; the conversations of tests/integration (every route and
escalation trigger, clarify -> pick, follow-ups, a clarification that does not converge, an
uncovered question); and the knowledge and account questions of tests/data/triage_heldout.jsonl
as single turns. `--baseline` runs the set a second time with the grade shortcut off
(GRADE_DECISIVE_MARGIN=0) to show what it saves.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import sys
import tempfile
import time
import uuid
from collections import defaultdict
from pathlib import Path

from private_store import use_private_store

REPO = Path(__file__).resolve().parents[1]

# (name, tenant, user, roles, turns): the conversations of tests/integration.
CONVERSATIONS = [
    ("fa-knowledge", "sepehr", "u-1001", ["user"], ["دوره انتظار زایمان در بیمه تکمیلی درمان چقدر است؟"]),
    (
        "en-knowledge",
        "sepehr",
        "u-1001",
        ["user"],
        ["What is the deductible of the health insurance for foreign residents?"],
    ),
    ("fa-chitchat", "sepehr", "u-1001", ["user"], ["سلام، وقت بخیر"]),
    ("en-out-of-scope", "sepehr", "u-1001", ["user"], ["Who won the football match last night?"]),
    ("fa-handoff", "sepehr", "u-1001", ["user"], ["می‌خواهم با یک کارشناس صحبت کنم"]),
    ("en-handoff", "sepehr", "u-1001", ["user"], ["Can I talk to a human agent please?"]),
    ("fa-cancellation", "sepehr", "u-1001", ["user"], ["می‌خواهم بیمه‌نامه‌ام را لغو کنم"]),
    ("en-complaint", "sepehr", "u-1001", ["user"], ["I want to file a complaint about how my claim was handled"]),
    ("fa-legal", "sepehr", "u-1001", ["user"], ["از شرکت شما به دادگاه شکایت می‌کنم و وکیل گرفته‌ام"]),
    ("fa-frustration", "sepehr", "u-1001", ["user"], ["اصلا جواب سوالم رو ندادی، خسته شدم"]),
    ("en-frustration", "sepehr", "u-1001", ["user"], ["This is useless, you are not helping at all"]),
    ("clarify-pick", "sepehr", "u-1001", ["user"], ["حق بیمه چقدر است؟", "1"]),
    (
        "clarify-no-convergence",
        "sepehr",
        "u-1001",
        ["user"],
        ["حق بیمه چقدر است؟", "هزینه بیمه چقدر می‌شود؟", "قیمت حق بیمه چنده؟"],
    ),
    ("uncovered", "sepehr", "u-1001", ["user"], ["آیا بیمه حیوانات خانگی برای سگ و گربه دارید؟"]),
    ("follow-up", "sepehr", "u-1001", ["user"], ["پوشش بیمه تکمیلی درمان برای بیمه‌شده چیست؟", "برای همسرم چطور؟"]),
    ("account", "sepehr", "u-1001", ["user"], ["بیمه‌نامه شخص ثالث من کی تمام می‌شود؟"]),
    ("other-tenant", "kavir", "u-2001", ["user"], ["طرح ویژه کویر-۹۰۴ چیست؟"]),
    ("isolation", "sepehr", "u-1001", ["user"], ["طرح ویژه کویر-۹۰۴ چیست؟"]),
]


def configure(home: Path) -> None:
    use_private_store(home)


def conversations() -> list[tuple[str, str, str, list[str], list[str]]]:
    demo = json.loads((REPO / "samples" / "conversations" / "demo.json").read_text(encoding="utf-8"))
    found = [
        (f"demo:{c['thread_id']}", c["tenant_id"], c["user_id"], c.get("roles", ["user"]), c["turns"]) for c in demo
    ]
    found += [(f"tests:{name}", *rest) for name, *rest in CONVERSATIONS]
    for line in (REPO / "tests" / "data" / "triage_heldout.jsonl").read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        if row["intent"] in ("knowledge", "account"):
            found.append((f"heldout:{row['intent']}", "sepehr", "u-1001", ["user"], [row["text"]]))
    return found


def percentile(values: list[int], share: float) -> int:
    """Nearest-rank percentile."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(share * len(ordered)) - 1)]


def run_all(stack, label: str) -> list[dict]:
    turns = []
    for name, tenant, user, roles, messages in conversations():
        thread = f"bench-{uuid.uuid4().hex[:12]}"
        for message in messages:
            payload = {
                "thread_id": thread,
                "turn_id": f"turn-{uuid.uuid4().hex}",
                "user_id": user,
                "tenant_id": tenant,
                "roles": roles,
                "message": message,
            }
            reply = stack.run_turn(payload)
            turns.append(
                {
                    "run": label,
                    "conversation": name,
                    "message": message,
                    "status": reply["status"],
                    "reason": reply.get("reason"),
                    "llm_calls": reply["trace"]["llm_calls"],
                    "path": reply["trace"]["path"],
                }
            )
    return turns


def summary(turns: list[dict]) -> dict:
    calls = [t["llm_calls"] for t in turns]
    by_status: dict[str, list[int]] = defaultdict(list)
    for turn in turns:
        by_status[turn["status"]].append(turn["llm_calls"])
    return {
        "turns": len(turns),
        "mean": round(statistics.fmean(calls), 3),
        "p95": percentile(calls, 0.95),
        "max": max(calls),
        "by_status": {
            s: {"turns": len(v), "mean": round(statistics.fmean(v), 2)} for s, v in sorted(by_status.items())
        },
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--home", type=Path, help="AGENT_HOME to use (default: a temporary folder)")
    parser.add_argument("--baseline", action="store_true", help="also run with the grade shortcut off")
    parser.add_argument("--json", type=Path, help="write every turn and the summary here")
    args = parser.parse_args(argv)

    home = args.home or Path(tempfile.mkdtemp(prefix="agent-model-calls-"))
    configure(home)
    sys.path.insert(0, str(REPO / "local"))
    from insurance_agent.config import get_settings
    from insurance_search.ingest import ingest_directory
    from insurance_agent.store.accounts import DynamoAccountsSource, PolicyRecord

    from agent_local.stack import LocalStack

    started = time.perf_counter()
    for tenant in ("sepehr", "kavir"):
        ingest_directory(REPO / "samples" / "corpus" / tenant, tenant, reset=True)
    results: dict[str, dict] = {}
    turns: list[dict] = []
    with LocalStack(home, fast_retries=True, persist=False) as stack:
        records = json.loads((REPO / "samples" / "accounts.json").read_text(encoding="utf-8"))
        DynamoAccountsSource().load([PolicyRecord.model_validate(r) for r in records])
        runs = [("default", None)] + ([("no-grade-shortcut", "0")] if args.baseline else [])
        for label, margin in runs:
            if margin is None:
                os.environ.pop("GRADE_DECISIVE_MARGIN", None)
            else:
                os.environ["GRADE_DECISIVE_MARGIN"] = margin
            get_settings.cache_clear()  # handlers run in this process: they read the new value
            run_turns = run_all(stack, label)
            turns += run_turns
            results[label] = summary(run_turns)
    os.environ.pop("GRADE_DECISIVE_MARGIN", None)

    print(f"model calls per turn on the embedded default ({time.perf_counter() - started:.0f} s)")
    for label, result in results.items():
        print(
            f"  {label:18s} turns={result['turns']:3d}  mean={result['mean']:.2f}  p95={result['p95']}  "
            f"max={result['max']}"
        )
        for status, row in result["by_status"].items():
            print(f"      {status:9s} turns={row['turns']:3d}  mean={row['mean']:.2f}")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(
            json.dumps({"summary": results, "turns": turns}, ensure_ascii=False, indent=1), encoding="utf-8"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
