"""Fuzz the turn contract: N generated inputs (hypothesis) through StartSyncExecution on the local stack.

    .venv/bin/python benchmarks/fuzz_turns.py [--examples 10000] [--seed 0] [--show 5]

Every case is the execution input exactly as sent (ids with unicode, surrogates, whitespace, markup,
over-long; role variants; locale; domain; messages of every size and script; extra, missing and
wrongly typed fields; nested and oversized documents). The state machine is the real ASL with no
model-call budget (MaxLlmCalls=0), so a valid turn ends at TriageBudget and the run keeps the speed
of admission. Prints: refused by error code, answered, escalated (by reason), executions that did
not succeed, system_error, writes for refused input, and every case that broke a target.
Targets: 0 crashes, 0 system_error, 0 writes for refused input, every contract violation refused.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "layers" / "core"), str(ROOT / "local")]
os.environ.setdefault("HF_HUB_OFFLINE", "1")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=0, help="hypothesis seed (the run is reproducible)")
    parser.add_argument("--show", type=int, default=5, help="failing cases to print per problem")
    args = parser.parse_args()

    from hypothesis import HealthCheck, Phase, given, seed, settings

    from agent_local.fuzz import WriteCounter, bounded_wait, fuzz_state_machine, run_case, turn_inputs
    from agent_local.stack import LocalStack

    home = Path(tempfile.mkdtemp(prefix="agent-fuzz-"))
    os.environ["AGENT_HOME"] = str(home)
    os.environ["AGENT_QDRANT_PATH"] = str(home / "qdrant")
    outcomes = []
    started = time.monotonic()
    with LocalStack(home, fast_retries=True, persist=False) as stack:
        arn = fuzz_state_machine(stack)
        writes = WriteCounter()

        @seed(args.seed)
        @settings(max_examples=args.examples, database=None, deadline=None, phases=[Phase.generate],
                  suppress_health_check=list(HealthCheck))
        @given(turn_inputs())
        def run(case):
            outcomes.append(run_case(stack, arn, case, writes))
            if len(outcomes) % 1000 == 0:
                print(f"  {len(outcomes)} cases, {time.monotonic() - started:.0f} s", file=sys.stderr, flush=True)

        with bounded_wait():
            run()
        writes.close()
    elapsed = time.monotonic() - started

    replies = Counter()
    for o in outcomes:
        if o.execution == "API_REJECTED":
            replies["rejected by the API (input over the execution limit)"] += 1
        elif o.execution != "SUCCEEDED":
            replies[f"execution {o.execution}"] += 1
        else:
            replies[f"{o.status}/{o.code}" if o.code else o.status] += 1
    problems = Counter(p for o in outcomes for p in o.problems)
    expected = Counter(o.case.expect for o in outcomes)
    kinds = Counter(o.case.kind for o in outcomes)
    refused_writes = sum(o.writes for o in outcomes if o.status == "refused" or o.execution == "API_REJECTED")

    print(f"fuzz_turns: {len(outcomes)} generated inputs in {elapsed:.0f} s "
          f"({len(outcomes) / elapsed:.1f}/s), seed {args.seed}")
    print("  contract says: " + ", ".join(f"{k} {v}" for k, v in sorted(expected.items())))
    print("  mutated: " + ", ".join(f"{k} {v}" for k, v in sorted(kinds.items())))
    print("  outcomes:")
    for name, count in replies.most_common():
        print(f"    {name:55s} {count}")
    crashes = sum(o.execution in ("FAILED", "TIMED_OUT") for o in outcomes)
    system_errors = sum(o.code == "system_error" for o in outcomes)
    print(f"  crashes (FAILED/TIMED_OUT executions): {crashes}")
    print(f"  system_error: {system_errors}")
    print(f"  writes for refused input: {refused_writes}")
    print(f"  answered: {sum(o.status == 'answer' for o in outcomes)}, "
          f"escalated: {sum(o.status == 'escalate' for o in outcomes)}")
    if problems:
        print("  PROBLEMS:")
        for problem, count in problems.most_common():
            print(f"    {problem}: {count}")
            shown = [o for o in outcomes if problem in o.problems][: args.show]
            for o in shown:
                print(f"      [{o.case.kind}] {o.case.body[:160]!r} -> {o.execution} {o.status}/{o.code}")
    else:
        print("  no problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
