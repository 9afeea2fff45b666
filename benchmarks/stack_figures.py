"""Figures of the turn graph on the local stack: payload sizes at every state transition and the
cold-import time of each handler in a fresh interpreter. Prints a table; not a test.

    python benchmarks/stack_figures.py [--script samples/conversations/demo.json]

Needs the sample corpus ingested under $AGENT_HOME (as `make demo` leaves it).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
IMPORT_PROBE = """
import importlib.util, sys, time
start = time.perf_counter()
spec = importlib.util.spec_from_file_location("probe_app", sys.argv[1])
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
print(time.perf_counter() - start)
"""


def import_times(repeats: int) -> dict[str, float]:
    env = os.environ | {"POWERTOOLS_TRACE_DISABLED": "true", "AWS_DEFAULT_REGION": "us-east-1"}
    out = {}
    for folder in sorted(p for p in (REPO / "functions").iterdir() if p.is_dir()):
        samples = [
            float(subprocess.run([sys.executable, "-c", IMPORT_PROBE, str(folder / "app.py")], env=env,
                                 capture_output=True, text=True, check=True).stdout)
            for _ in range(repeats)
        ]
        out[folder.name] = statistics.median(samples)
    return out


def payload_sizes(script: Path) -> dict[str, int]:
    from agent_local.cli import Script
    from agent_local.stack import LocalStack

    data = json.loads(script.read_text(encoding="utf-8"))
    scripts = [Script.model_validate(s) for s in (data if isinstance(data, list) else [data])]
    largest: dict[str, int] = {}
    home = Path(os.environ.get("AGENT_HOME", ".agent")).resolve()
    with LocalStack(home, persist=False) as stack:
        for item in scripts:
            for payload in item.payloads():
                response = stack.run_turn_raw(payload)
                for event in stack.history(response["executionArn"]):
                    for details in event.values():
                        if not isinstance(details, dict):
                            continue
                        name = details.get("name", event["type"])
                        for key in ("input", "output"):
                            if isinstance(details.get(key), str):
                                size = len(details[key].encode())
                                largest[name] = max(largest.get(name, 0), size)
    return largest


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--script", default=str(REPO / "samples" / "conversations" / "demo.json"))
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()

    started = time.perf_counter()
    sizes = payload_sizes(Path(args.script))
    print("| state | largest input/output (bytes) |\n|---|---|")
    for name, size in sorted(sizes.items(), key=lambda kv: -kv[1]):
        print(f"| {name} | {size} |")
    print(f"\nlargest payload at any transition: {max(sizes.values())} bytes (budget 8192; Step Functions limit 262144)")
    print(f"conversation run: {time.perf_counter() - started:.1f} s\n")

    times = import_times(args.repeats)
    print("| handler | cold import (s, median of %d fresh interpreters) |\n|---|---|" % args.repeats)
    for name, seconds in sorted(times.items(), key=lambda kv: -kv[1]):
        print(f"| {name} | {seconds:.3f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
