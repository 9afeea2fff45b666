"""Cold start of every function, measured in the python3.12 base image with exactly its own packages.

    python benchmarks/cold_start.py [--runs 3] [--invokes 3] [--providers offline,bedrock] [--skip-init]

Needs `make lambda-up` and a `sam build` (make sam-build or make test-lambda). Every figure is the
median of --runs fresh containers, next to a bare `import boto3` measured in the same run, so read
the ratios (the machine may be shared; the load average is printed).

1. Import, per zip function and ModelProvider: the handler module's import (`import app`) in a
   fresh container holding only the function and its layers (merged into /opt as Lambda does),
   with the template's environment (tracer enabled, as on AWS), in wall-clock and CPU time; for
   model nodes also what their first model call sets up after Init (the provider; with Bedrock,
   the langchain-aws chat model and its client: created, not called).
2. Init and invocations (ModelProvider=offline, the provider the local stack can run): every
   function, in graph order on its events/ file, is started in its own container with its real
   bootstrap (`/var/runtime/bootstrap`, awslambdaric) against a Lambda Runtime API served by this
   script on loopback, with the local stack's DynamoDB (moto) as its AWS endpoint:
   - Init: from the bootstrap's start inside the container (a timestamp taken by the entrypoint
     shell just before it execs the bootstrap; container and host share one clock) to the
     runtime's first `GET /runtime/invocation/next`: interpreter start, runtime client, handler
     import, as Lambda's Init Duration counts it (no extensions here). Container creation is not
     included (it is reported apart: Lambda's sandbox creation is not part of Init either).
   - first invoke: from handing the event to the runtime to its `POST .../response`.
   - warm invoke: the same event again in the same container (--invokes - 1 times, median).
   The baseline is a function whose module only does `import boto3`, run the same way.
   Retrieve (its index and models are loaded on the first query) and Triage are images.
"""

from __future__ import annotations

import argparse
import http.server
import json
import os
import queue
import shutil
import statistics
import subprocess
import sys
import threading
import time
import urllib.request
import uuid
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "local"), str(ROOT / "tools")]
sys.path.insert(0, str(ROOT / "benchmarks"))

import yaml  # noqa: E402
from agent_local.template import load_template, resolve, resources_of_type  # noqa: E402
from package_sizes import BASE_IMAGE, folder_bytes, image_mb, layers_of  # noqa: E402

BUILD = ROOT / ".aws-sam" / "build"
WORK = ROOT / ".lambda" / "cold-start"
EVENTS = ROOT / "events"
# What Lambda sets in every function's environment (the template's own variables are added).
LAMBDA_ENV = {
    "AWS_REGION": "us-east-1", "AWS_DEFAULT_REGION": "us-east-1", "AWS_EXECUTION_ENV": "AWS_Lambda_python3.12",
    "AWS_LAMBDA_FUNCTION_VERSION": "$LATEST", "LAMBDA_TASK_ROOT": "/var/task", "LAMBDA_RUNTIME_DIR": "/var/runtime",
    "AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing", "TZ": ":UTC",
}
# The Python path the bootstrap sets (function, layers, runtime), for the import measurements.
PYTHONPATH = "/var/task:/opt/python:/var/runtime"
TIMER = ("import time; t = time.perf_counter(); c = time.process_time(); {statement}; "
         "print(time.perf_counter() - t, time.process_time() - c)")
# What a model node's first model call sets up after Init: the provider and, with Bedrock, the
# langchain-aws chat model and its bedrock-runtime client (created, not called: no network).
PROVIDER_SETUP = {
    "offline": "from insurance_agent.roles.base import get_provider; get_provider()",
    "bedrock": ("from insurance_agent.roles.base import get_provider; get_provider(); "
                "from insurance_agent.config import get_settings; "
                "from insurance_llm.bedrock.client import ConverseCaller; "
                "ConverseCaller().chat_model(get_settings().models.small_model_id)"),
}
PROVIDER_TIMER = ("import app, time; t = time.perf_counter(); c = time.process_time(); {setup}; "
                  "print(time.perf_counter() - t, time.process_time() - c)")
BOTO3_APP = "import boto3\n\n\ndef lambda_handler(event, context):\n    return {}\n"
MODEL_NODES = {"ContextualizeFunction", "GradeFunction", "ClarifyFunction", "GenerateFunction", "VerifyFunction"}


# -- packages --------------------------------------------------------------------------------------
def built_template() -> dict[str, Any]:
    return yaml.safe_load((BUILD / "template.yaml").read_text(encoding="utf-8").replace("!", ""))


def opt_folder(layers: list[str]) -> Path | None:
    """The function's layers merged into one /opt (hard links), later layers over earlier ones, as
    Lambda extracts them."""
    if not layers:
        return None
    target = WORK / "opt" / "+".join(layers)
    if not target.exists():
        staging = target.with_name(target.name + ".tmp")
        shutil.rmtree(staging, ignore_errors=True)
        staging.mkdir(parents=True)
        for layer in layers:
            subprocess.run(["cp", "-alf", f"{BUILD / layer}/.", str(staging)], check=True)
        staging.rename(target)
    return target


def mounts_of(task: Path | None, opt: Path | None) -> list[str]:
    mounts = ["-v", f"{task}:/var/task:ro"] if task else []
    return mounts + (["-v", f"{opt}:/opt:ro"] if opt else [])


def _docker_python(mounts: list[str], env: dict[str, str], code: str, image: str = BASE_IMAGE) -> tuple[float, float]:
    command = ["docker", "run", "--rm", "--network", "none", "--entrypoint", "/var/lang/bin/python3.12", *mounts,
               "-e", f"PYTHONPATH={PYTHONPATH}", "-w", "/var/task"]
    for key, value in env.items():
        command += ["-e", f"{key}={value}"]
    result = subprocess.run([*command, image, "-c", code], capture_output=True, text=True, timeout=600)
    if result.returncode != 0:
        raise RuntimeError(result.stderr.strip()[-1500:])
    wall, cpu = result.stdout.strip().splitlines()[-1].split()
    return float(wall), float(cpu)


def _medians(samples: list[tuple[float, float]]) -> tuple[float, float]:
    return statistics.median(s[0] for s in samples), statistics.median(s[1] for s in samples)


# -- the template's environment ----------------------------------------------------------------------
def function_env(template: dict[str, Any], logical: str, parameters: dict[str, str], tables: dict[str, str],
                 endpoint: str | None) -> dict[str, str]:
    """The environment `sam local`/Lambda gives the function: Globals plus its own variables, with
    parameters and table names resolved, and the Lambda variables."""
    resource = template["Resources"][logical]["Properties"]
    variables = dict(template["Globals"]["Function"]["Environment"]["Variables"])
    variables |= resource.get("Environment", {}).get("Variables", {})
    env = dict(LAMBDA_ENV)
    for name, value in variables.items():
        if isinstance(value, dict) and value.get("Fn::If", [None])[0] == "HasLocalEndpoint":
            if endpoint:
                env[name] = endpoint
            continue
        if isinstance(value, dict) and value.get("Ref") in tables:
            env[name] = tables[value["Ref"]]
            continue
        # a parameter's value or a condition's branch, as the template resolves them (AWS::NoValue: unset)
        resolved = resolve(template, parameters, value)
        if resolved is not None:
            env[name] = resolved
    memory = resource.get("MemorySize", template["Globals"]["Function"].get("MemorySize", 128))
    env |= {"AWS_LAMBDA_FUNCTION_NAME": logical, "AWS_LAMBDA_FUNCTION_MEMORY_SIZE": str(memory),
            "_HANDLER": resource.get("Handler", "app.lambda_handler")}
    return env


def static_env(template: dict[str, Any], logical: str, provider: str) -> dict[str, str]:
    """For the import measurements: no stack; the provider as given."""
    from agent_harness.lambda_tier import PARAMETERS
    from agent_local.template import parameter_defaults

    parameters = parameter_defaults(template) | PARAMETERS | {"ModelProvider": provider}
    return function_env(template, logical, parameters, {}, None)


# -- 1. import ---------------------------------------------------------------------------------------
def import_rows(template: dict[str, Any], provider: str, runs: int) -> tuple[tuple[float, float], list[dict[str, Any]]]:
    baseline = _medians([_docker_python([], LAMBDA_ENV, TIMER.format(statement="import boto3")) for _ in range(runs)])
    rows = []
    for logical, resource in resources_of_type(template, "AWS::Serverless::Function").items():
        if resource["Properties"].get("PackageType") == "Image":
            continue
        layers = layers_of(template, resource, provider)
        mounts = mounts_of(BUILD / logical, opt_folder(layers))
        env = static_env(template, logical, provider)
        size = (folder_bytes(BUILD / logical) + sum(folder_bytes(BUILD / layer) for layer in layers)) / 1e6
        samples, boto3 = [], []
        for _ in range(runs):  # interleaved with a bare boto3 in the same container set-up
            boto3.append(_docker_python(mounts, env, TIMER.format(statement="import boto3")))
            samples.append(_docker_python(mounts, env, TIMER.format(statement="import app")))
        wall, cpu = _medians(samples)
        row = {"function": logical, "provider": provider, "mb": size, "import_ms": wall * 1000, "import_cpu_ms": cpu * 1000,
               "ratio": statistics.median(s[0] / b[0] for s, b in zip(samples, boto3, strict=True)),
               "ratio_cpu": statistics.median(s[1] / b[1] for s, b in zip(samples, boto3, strict=True))}
        if logical in MODEL_NODES:
            code = PROVIDER_TIMER.format(setup=PROVIDER_SETUP[provider])
            row["provider_ms"] = _medians([_docker_python(mounts, env, code) for _ in range(runs)])[0] * 1000
        rows.append(row)
    return baseline, rows


# -- 2. Init and invocations through a Runtime API -------------------------------------------------------
class RuntimeApi:
    """A minimal Lambda Runtime API (2018-06-01) on loopback for one container: records when the
    runtime first asks for an event (the end of Init) and times each invocation."""

    def __init__(self) -> None:
        self.events: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self.results: queue.Queue[tuple[str, float, Any]] = queue.Queue()
        self.first_next: float | None = None
        self._sent: dict[str, float] = {}
        api = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # the runtime client keeps its connection open

            def log_message(self, *args: object) -> None:
                pass

            def do_GET(self) -> None:  # noqa: N802 - http.server's naming
                if not self.path.endswith("/runtime/invocation/next"):
                    self.send_error(404)
                    return
                if api.first_next is None:
                    api.first_next = time.time()
                event = api.events.get()
                if event is None:  # no more invocations: the container is stopped meanwhile
                    return
                request_id = str(uuid.uuid4())
                body = json.dumps(event).encode()
                self.send_response(200)
                self.send_header("Lambda-Runtime-Aws-Request-Id", request_id)
                self.send_header("Lambda-Runtime-Deadline-Ms", str(int(time.time() * 1000) + 300_000))
                self.send_header("Lambda-Runtime-Invoked-Function-Arn", "arn:aws:lambda:us-east-1:123456789012:function:f")
                self.send_header("Lambda-Runtime-Trace-Id",
                                 f"Root=1-{int(time.time()):08x}-{uuid.uuid4().hex[:24]};Parent={uuid.uuid4().hex[:16]};Sampled=1")
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                api._sent[request_id] = time.time()
                self.wfile.write(body)
                self.wfile.flush()

            def do_POST(self) -> None:  # noqa: N802
                received = time.time()
                payload = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                parts = self.path.strip("/").split("/")
                self.send_response(202)
                self.send_header("Content-Length", "0")
                self.end_headers()
                if parts[-1] in ("response", "error") and "invocation" in parts:
                    request_id = parts[-2]
                    body = json.loads(payload or b"null")
                    api.results.put((parts[-1], received - api._sent.get(request_id, received), body))
                elif parts[-1] == "error":  # /runtime/init/error
                    api.results.put(("init_error", 0.0, json.loads(payload or b"null")))

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.events.put(None)
        self.server.shutdown()
        self.server.server_close()


def run_container(*, image: str, mounts: list[str], env: dict[str, str], event: dict[str, Any], invokes: int,
                  timeout: float = 300) -> dict[str, Any]:
    """One cold container: Init, then `invokes` invocations of `event`; times in ms."""
    api = RuntimeApi()
    name = f"cold-start-{uuid.uuid4().hex[:12]}"
    command = ["docker", "run", "--rm", "--name", name, "--network", "host", *mounts,
               "-e", f"AWS_LAMBDA_RUNTIME_API=127.0.0.1:{api.port}"]
    for key, value in env.items():
        command += ["-e", f"{key}={value}"]
    # The entrypoint notes the time (ns since the epoch) just before the bootstrap starts.
    command += ["--entrypoint", "/bin/sh", image, "-c",
                'echo "COLD_START_T0 $(date +%s%N)" >&2; exec /var/runtime/bootstrap "$@"', "sh", env["_HANDLER"]]
    started = time.time()
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    figures: dict[str, Any] = {}
    try:
        for index in range(invokes):
            api.events.put(event)
            kind, seconds, body = api.results.get(timeout=timeout)
            if kind != "response":
                raise RuntimeError(f"{env['AWS_LAMBDA_FUNCTION_NAME']}: {kind}: {json.dumps(body)[:800]}")
            figures.setdefault("invokes_ms", []).append(seconds * 1000)
            figures.setdefault("response", body)
    finally:
        subprocess.run(["docker", "rm", "-f", name], capture_output=True)
        api.close()
        _, stderr = process.communicate(timeout=60)
    t0 = next((int(line.split()[1]) / 1e9 for line in stderr.splitlines() if line.startswith("COLD_START_T0 ")), None)
    if t0 is None or api.first_next is None:
        raise RuntimeError(f"no init timing for {env['AWS_LAMBDA_FUNCTION_NAME']}:\n{stderr[-1500:]}")
    figures["init_ms"] = (api.first_next - t0) * 1000
    figures["container_ms"] = (t0 - started) * 1000
    return figures


def _image_uri(built: dict[str, Any], logical: str) -> str:
    return built["Resources"][logical]["Properties"]["ImageUri"]


def init_rows(template: dict[str, Any], runs: int, invokes: int) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    from agent_harness.lambda_tier import BRANCHES, CHAIN, PARAMETERS, STATE, prepare_home
    from agent_local.stack import CONTROL_HEADER, LocalStack
    from agent_local.template import function_folder

    home = STATE / "home"
    if not (home / "qdrant").exists():
        prepare_home(home)
    built = built_template()
    functions = resources_of_type(template, "AWS::Serverless::Function")
    by_folder = {function_folder(name, resource).name: name for name, resource in functions.items()}
    baseline_task = WORK / "boto3-task"
    baseline_task.mkdir(parents=True, exist_ok=True)
    (baseline_task / "app.py").write_text(BOTO3_APP, encoding="utf-8")
    samples: dict[str, list[dict[str, Any]]] = {}
    for run in range(runs):
        stack_home = WORK / "home"
        shutil.rmtree(stack_home, ignore_errors=True)
        shutil.copytree(home, stack_home)  # the sample data, untouched by these invocations
        with LocalStack(stack_home, fast_retries=False) as stack:
            parameters = stack.parameters | PARAMETERS
            base_env = function_env(template, "LoadMemoryFunction", parameters, stack.table_names, stack.endpoint)
            boto3 = run_container(image=BASE_IMAGE, mounts=mounts_of(baseline_task, None),
                                  env=base_env | {"AWS_LAMBDA_FUNCTION_NAME": "Boto3Baseline"}, event={}, invokes=invokes)
            samples.setdefault("boto3", []).append(boto3)
            for folder in [*CHAIN, *BRANCHES]:
                logical = by_folder[folder]
                if folder in BRANCHES:  # the whole turn first, so the working data this node reads exists
                    stack.run_turn(json.loads((EVENTS / "turns" / f"{BRANCHES[folder]}.json").read_text(encoding="utf-8")))
                event = json.loads((EVENTS / f"{folder}.json").read_text(encoding="utf-8"))
                env = function_env(template, logical, parameters, stack.table_names, stack.endpoint)
                properties = functions[logical]["Properties"]
                if properties.get("PackageType") == "Image":
                    image, mounts = _image_uri(built, logical), []
                else:
                    image, mounts = BASE_IMAGE, mounts_of(BUILD / logical, opt_folder(layers_of(template, functions[logical], "offline")))
                figures = run_container(image=image, mounts=mounts, env=env, event=event, invokes=invokes)
                response = figures.pop("response")
                if not (isinstance(response, dict) and response.get("trace", {}).get("path")):
                    raise RuntimeError(f"{logical} returned no execution state: {json.dumps(response)[:500]}")
                samples.setdefault(logical, []).append(figures)
                print(f"  run {run + 1}: {logical} init {figures['init_ms']:.0f} ms, invokes "
                      f"{', '.join(f'{v:.0f}' for v in figures['invokes_ms'])} ms", file=sys.stderr, flush=True)
            # moto's backends live in this process: the next run starts again from the saved data.
            reset = urllib.request.Request(f"{stack.endpoint}/moto-api/reset", data=b"", method="POST",
                                           headers={CONTROL_HEADER: stack.control_key})
            urllib.request.urlopen(reset, timeout=30).read()  # noqa: S310 - loopback only
    summary = {}
    for name, items in samples.items():
        summary[name] = {
            "init_ms": statistics.median(i["init_ms"] for i in items),
            "first_ms": statistics.median(i["invokes_ms"][0] for i in items),
            "warm_ms": statistics.median(v for i in items for v in i["invokes_ms"][1:]) if invokes > 1 else None,
            "container_ms": statistics.median(i["container_ms"] for i in items),
            "init_ratio": statistics.median(i["init_ms"] / b["init_ms"] for i, b in zip(items, samples["boto3"], strict=True)),
            "runs": len(items),
        }
    return summary.pop("boto3"), [{"function": name} | figures for name, figures in summary.items()]


# -- Retrieve in its image -----------------------------------------------------------------------------
def retrieve_figures(image: str, runs: int) -> dict[str, float]:
    code = (
        "import time, json; t = time.perf_counter(); import app; imported = time.perf_counter() - t\n"
        "from insurance_search.search import search\n"
        "t = time.perf_counter(); search('دوره انتظار زایمان', tenant_id='sepehr', roles=['user']); "
        "first = time.perf_counter() - t\n"
        "t = time.perf_counter(); search('فرانشیز بیمه بدنه', tenant_id='sepehr', roles=['user']); "
        "warm = time.perf_counter() - t\n"
        "print(json.dumps([imported, first, warm]))"
    )
    samples = []
    for _ in range(runs):
        command = ["docker", "run", "--rm", "--network", "none", "--entrypoint", "/var/lang/bin/python3.12",
                   "-e", f"PYTHONPATH={PYTHONPATH}", "-w", "/var/task"]
        for key, value in (LAMBDA_ENV | {"AWS_LAMBDA_FUNCTION_NAME": "RetrieveFunction", "AGENT_LATE_MODEL": "none"}).items():
            command += ["-e", f"{key}={value}"]
        result = subprocess.run([*command, image, "-c", code], capture_output=True, text=True, timeout=600)
        if result.returncode != 0:
            raise RuntimeError(result.stderr.strip()[-1500:])
        samples.append(json.loads(result.stdout.strip().splitlines()[-1]))
    return {"import_ms": statistics.median(s[0] for s in samples) * 1000,
            "first_query_ms": statistics.median(s[1] for s in samples) * 1000,
            "warm_query_ms": statistics.median(s[2] for s in samples) * 1000}


# -- report --------------------------------------------------------------------------------------------
def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value:.0f}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=3, help="fresh containers per figure (median)")
    parser.add_argument("--invokes", type=int, default=3, help="invocations per container (first + warm)")
    parser.add_argument("--providers", default="offline,bedrock")
    parser.add_argument("--skip-import", action="store_true")
    parser.add_argument("--skip-init", action="store_true")
    parser.add_argument("--json", help="also write the figures to this file")
    args = parser.parse_args()
    if not (BUILD / "template.yaml").exists():
        print("no sam build output: run `make sam-build` (or make test-lambda) first", file=sys.stderr)
        return 2
    template = load_template()
    shutil.rmtree(WORK / "opt", ignore_errors=True)  # merged layers of an earlier build
    report: dict[str, Any] = {"load_average_start": os.getloadavg()}
    print(f"load average at start: {' '.join(f'{v:.2f}' for v in os.getloadavg())}; medians of {args.runs} fresh containers\n")
    if not args.skip_import:
        print("| function | ModelProvider | MB (function + layers) | import ms | x boto3 | import CPU ms | x boto3 (CPU) | + first model call set-up ms |")
        print("|---|---|---|---|---|---|---|---|")
        for provider in args.providers.split(","):
            baseline, rows = import_rows(template, provider, args.runs)
            report.setdefault("import", {})[provider] = {"boto3_ms": baseline[0] * 1000, "boto3_cpu_ms": baseline[1] * 1000,
                                                         "rows": rows}
            print(f"| bare `import boto3` | {provider} | - | {baseline[0] * 1000:.0f} | 1.00 | {baseline[1] * 1000:.0f} | 1.00 | - |")
            for row in rows:
                print(f"| {row['function']} | {provider} | {row['mb']:.0f} | {row['import_ms']:.0f} | {row['ratio']:.2f} | "
                      f"{row['import_cpu_ms']:.0f} | {row['ratio_cpu']:.2f} | {_ms(row.get('provider_ms'))} |", flush=True)
        print()
    if not args.skip_init:
        baseline, rows = init_rows(template, args.runs, args.invokes)
        report["init"] = {"boto3": baseline, "rows": rows}
        built = built_template()
        print("ModelProvider=offline, the local stack's DynamoDB; Init = bootstrap start to the runtime's first /next\n")
        print("| function | package MB | Init ms | x boto3 Init | first invoke ms | Init + first invoke ms | warm invoke ms | container start ms |")
        print("|---|---|---|---|---|---|---|---|")
        print(f"| bare `import boto3` function | - | {baseline['init_ms']:.0f} | 1.00 | {baseline['first_ms']:.0f} | "
              f"{baseline['init_ms'] + baseline['first_ms']:.0f} | {_ms(baseline['warm_ms'])} | {baseline['container_ms']:.0f} |")
        functions = resources_of_type(template, "AWS::Serverless::Function")
        for row in rows:
            logical = row["function"]
            if functions[logical]["Properties"].get("PackageType") == "Image":
                size, label = image_mb(BUILD, logical) or 0.0, f"{logical} (image)"
            else:
                layers = layers_of(template, functions[logical], "offline")
                size = (folder_bytes(BUILD / logical) + sum(folder_bytes(BUILD / layer) for layer in layers)) / 1e6
                label = logical
            print(f"| {label} | {size:.0f} | {row['init_ms']:.0f} | {row['init_ratio']:.2f} | {row['first_ms']:.0f} | "
                  f"{row['init_ms'] + row['first_ms']:.0f} | {_ms(row['warm_ms'])} | {row['container_ms']:.0f} |")
        figures = retrieve_figures(_image_uri(built, "RetrieveFunction"), args.runs)
        report["retrieve_in_process"] = figures
        print(f"\nRetrieveFunction in its image, timed inside one process: import {figures['import_ms']:.0f} ms; first "
              f"query (opens the index, loads the dense and sparse models) {figures['first_query_ms']:.0f} ms; "
              f"warm query {figures['warm_query_ms']:.0f} ms")
    report["load_average_end"] = os.getloadavg()
    print(f"\nload average at end: {' '.join(f'{v:.2f}' for v in os.getloadavg())}")
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
