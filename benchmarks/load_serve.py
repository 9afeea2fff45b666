"""Load through `agent serve`: concurrent turns on several threads from a backend's own boto3 client.

    .venv/bin/python benchmarks/load_serve.py [--turns 50] [--threads 10] [--workers 50] [--home DIR]

Starts `agent serve` as a subprocess (loopback only; a fresh home gets the sepehr sample corpus
ingested first, or pass --home with an ingested one), sends all turns at once from a thread pool
with StartSyncExecution (each conversation thread receives its turns concurrently, so writes race on
the same thread record), then reads every thread record back and checks that no turn was lost or
applied twice: each answer/clarification/escalation is on its thread exactly once, each refusal is
not on it at all. Prints the outcome counts, the checks and p50/p95/max latency.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import boto3
from botocore.config import Config

ROOT = Path(__file__).resolve().parents[1]
AGENT = Path(sys.executable).parent / "agent"
MESSAGES = [
    "دوره انتظار زایمان در بیمه تکمیلی درمان چقدر است؟",
    "سلام، وقت بخیر",
    "فرانشیز بیمه بدنه خودرو چقدر است؟",
    "What is the waiting period for maternity in supplementary health insurance?",
    "ممنون از راهنمایی شما",
]


def _client(service: str, endpoint: str):
    config = Config(inject_host_prefix=False, read_timeout=300, retries={"max_attempts": 0},
                    max_pool_connections=100)
    return boto3.client(service, endpoint_url=endpoint, region_name="us-east-1", aws_access_key_id="x",
                        aws_secret_access_key="x", config=config)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=50)
    parser.add_argument("--threads", type=int, default=10, help="conversation threads the turns are spread over")
    parser.add_argument("--workers", type=int, default=50, help="client threads sending at once")
    parser.add_argument("--home", help="an AGENT_HOME with the corpus ingested (default: a fresh one)")
    args = parser.parse_args()

    home = Path(args.home) if args.home else Path(tempfile.mkdtemp(prefix="agent-load-"))
    env = os.environ | {"AGENT_HOME": str(home), "AGENT_QDRANT_PATH": str(home / "qdrant"), "HF_HUB_OFFLINE": "1"}
    if not args.home:
        print("ingesting the sepehr sample corpus into a fresh home ...", file=sys.stderr, flush=True)
        subprocess.run([str(AGENT), "--home", str(home), "ingest", str(ROOT / "samples/corpus/sepehr"),
                        "--tenant", "sepehr"], check=True, env=env, stdout=subprocess.DEVNULL)
    server = subprocess.Popen([str(AGENT), "--home", str(home), "serve"], stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL, text=True, env=env)
    try:
        served = json.loads(server.stdout.readline())
        endpoint, arn = served["endpoint_url"], served["state_machine_arn"]
        assert endpoint.startswith("http://127.0.0.1:"), endpoint  # loopback only
        sfn = _client("stepfunctions", endpoint)
        threads = [f"load-{uuid.uuid4().hex[:10]}" for _ in range(args.threads)]
        turns = [
            {"thread_id": threads[i % args.threads], "turn_id": f"load-turn-{uuid.uuid4().hex}",
             "user_id": f"u-load-{i % args.threads}", "tenant_id": "sepehr", "roles": ["user"], "domain": None,
             "message": MESSAGES[(i // args.threads) % len(MESSAGES)]}
            for i in range(args.turns)
        ]

        def send(turn):
            started = time.monotonic()
            response = sfn.start_sync_execution(stateMachineArn=arn, input=json.dumps(turn, ensure_ascii=False))
            latency = time.monotonic() - started
            reply = json.loads(response["output"]) if response["status"] == "SUCCEEDED" else None
            return turn, response["status"], reply, latency

        started = time.monotonic()
        with ThreadPoolExecutor(max_workers=args.workers) as pool:
            results = list(pool.map(send, turns))
        wall = time.monotonic() - started

        table = next(t for t in _client("dynamodb", endpoint).list_tables()["TableNames"] if t.endswith("-threads"))
        dynamodb = _client("dynamodb", endpoint)
        records = {}
        for thread_id in threads:
            item = dynamodb.get_item(TableName=table, Key={"thread_id": {"S": thread_id}}, ConsistentRead=True)
            item = item.get("Item")
            if item:
                records[thread_id] = {
                    "turns": [t["turn_id"] for t in json.loads(item["turns"]["S"])],
                    "turn_ids": [v["S"] for v in item.get("turn_ids", {}).get("L", [])],
                    "status": item["status"]["S"],
                }
    finally:
        server.terminate()
        server.wait(timeout=60)

    outcomes = Counter()
    lost, doubled, refused_but_recorded, failed = [], [], [], []
    for turn, status, reply, _ in results:
        if status != "SUCCEEDED":
            failed.append(turn["turn_id"])
            outcomes[f"execution {status}"] += 1
            continue
        outcomes[f"{reply['status']}/{reply.get('error') or reply.get('reason')}"
                 if reply["status"] in ("refused", "escalate") else reply["status"]] += 1
        record = records.get(turn["thread_id"], {"turns": [], "turn_ids": []})
        on_thread = record["turns"].count(turn["turn_id"])
        applied = record["turn_ids"].count(turn["turn_id"])
        if reply["status"] == "refused":
            if on_thread or applied:
                refused_but_recorded.append(turn["turn_id"])
        elif on_thread == 0 or applied == 0:
            lost.append(turn["turn_id"])
        elif on_thread > 1 or applied > 1:
            doubled.append(turn["turn_id"])
    latencies = sorted(r[3] for r in results)
    p95 = latencies[max(0, int(round(0.95 * len(latencies))) - 1)]

    print(f"load_serve: {args.turns} turns on {args.threads} threads, {args.workers} client threads, "
          f"through agent serve at {endpoint}")
    print(f"  wall {wall:.1f} s, {args.turns / wall:.2f} turns/s")
    print(f"  latency p50 {statistics.median(latencies):.2f} s, p95 {p95:.2f} s, max {latencies[-1]:.2f} s")
    print("  outcomes: " + ", ".join(f"{k} {v}" for k, v in outcomes.most_common()))
    print(f"  lost turns: {len(lost)}, doubled turns: {len(doubled)}, refused but recorded: "
          f"{len(refused_but_recorded)}, failed executions: {len(failed)}")
    print(f"  thread records: {len(records)} of {args.threads}; handed off: "
          f"{sum(r['status'] == 'handed_off' for r in records.values())}")
    return 1 if lost or doubled or refused_but_recorded or failed else 0


if __name__ == "__main__":
    sys.exit(main())
