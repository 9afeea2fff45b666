"""Time of personal-data masking on adversarial text, per size: linear growth is the target.

    .venv/bin/python benchmarks/pii_masking.py [--sizes 10000 100000 1000000]

Shapes: long runs of one word character (Latin, Persian, digits), dotted runs, a domain without a
dot, repeated "@", ordinary words. For each: `mask_pii` (what the stores keep) and the local
execution log's `mask_text` (what is logged), milliseconds and microseconds per character.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "layers" / "core"), str(ROOT / "local")]

SHAPES = {
    "word run": lambda n: "a" * n,
    "persian run": lambda n: "ب" * n,
    "digit run": lambda n: "۱" * n,
    "dotted run": lambda n: "a." * (n // 2),
    "domain without a dot": lambda n: "a@" + "b" * (n - 2),
    "at signs": lambda n: "a@" * (n // 2),
    "words": lambda n: ("بیمه بدنه deductible " * (n // 21 + 1))[:n],
}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000, 1_000_000])
    args = parser.parse_args()
    from agent_local.execution_log import mask_text
    from insurance_agent.policy.pii import mask_pii

    print(f"{'shape':22s} {'chars':>9s} {'mask_pii ms':>12s} {'us/char':>8s} {'mask_text ms':>13s} {'us/char':>8s}")
    for name, make in SHAPES.items():
        for size in args.sizes:
            text = make(size)
            row = []
            for mask in (mask_pii, mask_text):
                started = time.perf_counter()
                mask(text)
                elapsed = time.perf_counter() - started
                row += [elapsed * 1000, elapsed * 1e6 / len(text)]
            print(f"{name:22s} {len(text):9d} {row[0]:12.1f} {row[1]:8.2f} {row[2]:13.1f} {row[3]:8.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
