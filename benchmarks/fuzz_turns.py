"""Fuzz the turn contract: N generated inputs (hypothesis) through StartSyncExecution on the local stack.

    .venv/bin/python benchmarks/fuzz_turns.py [--examples 10000] [--seed 0] [--jobs 1] [--show 5]

Every case is the execution input exactly as sent (ids with unicode, surrogates, whitespace, markup,
over-long; role variants; locale; domain; messages of every size and script; extra, missing and
wrongly typed fields; nested and oversized documents). The state machine is the real ASL with no
model-call budget (MaxLlmCalls=0), so a valid turn ends at TriageBudget and the run keeps the speed
of admission. `--jobs N` splits the examples over N processes (each its own stack and seed
`seed + i`) and adds their counts up. Prints: refused by error code, answered, escalated (by reason), executions that did
not succeed, system_error, writes for refused input, and every case that broke a target.
Targets: 0 crashes, 0 system_error, 0 writes for refused input, every contract violation refused.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "layers" / "core"), str(ROOT / "local"), str(ROOT / "tools")]
os.environ.setdefault("HF_HUB_OFFLINE", "1")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=0, help="hypothesis seed (the run is reproducible)")
    parser.add_argument("--show", type=int, default=5, help="failing cases to print per problem")
    parser.add_argument("--jobs", type=int, default=1, help="worker processes (each runs its own local stack)")
    parser.add_argument("--minutes", type=float, default=0,
                        help="time budget: cases generated after it are counted as not run (0: none)")
    parser.add_argument("--json", action="store_true", help=argparse.SUPPRESS)  # a worker's output
    args = parser.parse_args()
    if args.jobs > 1:
        return _parallel(args)

    from hypothesis import HealthCheck, Phase, given, seed, settings

    from agent_local import moto_patches
    from agent_harness.fuzz import WriteCounter, bounded_wait, fuzz_state_machine, run_case, turn_inputs
    from agent_local.stack import LocalStack

    from private_store import use_private_store

    home = Path(tempfile.mkdtemp(prefix="agent-fuzz-"))
    use_private_store(home)
    outcomes = []
    started = time.monotonic()
    with LocalStack(home, fast_retries=True, persist=False) as stack:
        arn = fuzz_state_machine(stack)
        writes = WriteCounter()
        # The CloudWatch-shaped execution log (an fsync per execution) is not what is measured here.
        moto_patches.remove_execution_listener(stack._log_execution)
        deadline = started + args.minutes * 60 if args.minutes else None
        not_run = []

        @seed(args.seed)
        @settings(max_examples=args.examples, database=None, deadline=None, phases=[Phase.generate],
                  suppress_health_check=list(HealthCheck))
        @given(turn_inputs())
        def run(case):
            if deadline is not None and time.monotonic() > deadline:
                not_run.append(case)
                return
            outcomes.append(run_case(stack, arn, case, writes))
            if len(outcomes) % 1000 == 0:
                print(f"  {len(outcomes)} cases, {time.monotonic() - started:.0f} s", file=sys.stderr, flush=True)

        with bounded_wait():
            run()
        writes.close()
    elapsed = time.monotonic() - started

    summary = {
        "cases": len(outcomes),
        "seconds": elapsed,
        "outcomes": Counter(
            "rejected by the API (input over the execution limit)" if o.execution == "API_REJECTED"
            else f"execution {o.execution}" if o.execution != "SUCCEEDED"
            else f"{o.status}/{o.code}" if o.code else o.status
            for o in outcomes
        ),
        "expected": Counter(o.case.expect for o in outcomes),
        "kinds": Counter(o.case.kind for o in outcomes),
        "problems": Counter(p for o in outcomes for p in o.problems),
        "examples": {},
        "crashes": sum(o.execution in ("FAILED", "TIMED_OUT", "NO_REPLY") for o in outcomes),
        "system_error": sum(o.code == "system_error" for o in outcomes),
        "refused_writes": sum(o.writes for o in outcomes if o.status == "refused" or o.execution == "API_REJECTED"),
        "answered": sum(o.status == "answer" for o in outcomes),
        "escalated": sum(o.status == "escalate" for o in outcomes),
        "seeds": [args.seed],
        "not_run": len(not_run),
    }
    for problem in summary["problems"]:
        summary["examples"][problem] = [
            f"[{o.case.kind}] {o.case.body[:160]!r} -> {o.execution} {o.status}/{o.code}"
            for o in outcomes if problem in o.problems
        ][: args.show]
    if args.json:
        print(json.dumps(summary))
        return 0
    return _report(summary)


def _parallel(args: argparse.Namespace) -> int:
    per_job = -(-args.examples // args.jobs)
    workers = [
        subprocess.Popen([sys.executable, __file__, "--json", "--examples", str(per_job), "--seed", str(args.seed + i),
                          "--show", str(args.show), "--minutes", str(args.minutes)], stdout=subprocess.PIPE, text=True)
        for i in range(args.jobs)
    ]
    total: dict = {}
    for worker in workers:
        out, _ = worker.communicate()
        if worker.returncode or not out.strip():
            print(f"fuzz_turns: a worker failed (exit {worker.returncode}); see its output above", file=sys.stderr)
            return 2
        part = json.loads(out.strip().splitlines()[-1])
        for key, value in part.items():
            if isinstance(value, dict) and key != "examples":
                total[key] = total.get(key, Counter()) + Counter(value)
            elif key == "examples":
                for problem, shown in value.items():
                    total.setdefault("examples", {}).setdefault(problem, []).extend(shown)
            elif key == "seconds":
                total[key] = max(total.get(key, 0.0), value)
            else:
                total[key] = total.get(key, 0 if not isinstance(value, list) else []) + value
    total.setdefault("examples", {})
    return _report(total)


def _report(summary: dict) -> int:
    cases, elapsed = summary["cases"], summary["seconds"]
    print(f"fuzz_turns: {cases} generated inputs run in {elapsed:.0f} s ({cases / elapsed:.1f}/s), "
          f"seeds {summary['seeds']}")
    if summary.get("not_run"):
        print(f"  time budget reached: {summary['not_run']} further generated inputs not run")
    print("  contract says: " + ", ".join(f"{k} {v}" for k, v in sorted(summary["expected"].items())))
    print("  mutated: " + ", ".join(f"{k} {v}" for k, v in sorted(summary["kinds"].items())))
    print("  outcomes:")
    for name, count in Counter(summary["outcomes"]).most_common():
        print(f"    {name:55s} {count}")
    print(f"  crashes (FAILED/TIMED_OUT executions, or succeeded without a reply): {summary['crashes']}")
    print(f"  system_error: {summary['system_error']}")
    print(f"  writes for refused input: {summary['refused_writes']}")
    print(f"  answered: {summary['answered']}, escalated: {summary['escalated']}")
    problems = Counter(summary["problems"])
    if problems:
        print("  PROBLEMS:")
        for problem, count in problems.most_common():
            print(f"    {problem}: {count}")
            for line in summary["examples"].get(problem, []):
                print(f"      {line}")
    else:
        print("  no problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
