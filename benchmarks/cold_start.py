"""Cold start of every function, measured in the python3.12 base image with exactly its own packages.

    python benchmarks/cold_start.py [--runs 3] [--provider local|bedrock]

Needs `make lambda-up` and a `sam build` (make sam-build or make test-lambda). Per zip function:
package size (function + its layers, unzipped), the handler module's import time in a fresh
container next to a bare `import boto3` in the same image (the goal for zip functions: at most
1.5x), and, from the
last `make test-lambda` run (.lambda/invoke_times.json), the first invocation through `sam local
start-lambda` (container start + Init + invoke) and the median warm invocation. Triage is an
image: its import is measured in its image. Retrieve is reported separately: image size, import time, then opening the index and loading its models
(the first query). Prints Markdown tables; figures are medians of --runs fresh containers.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "local"))
sys.path.insert(0, str(ROOT / "benchmarks"))

from agent_local.template import load_template, resources_of_type  # noqa: E402
import yaml  # noqa: E402
from package_sizes import BASE_IMAGE, folder_bytes, image_mb, layers_of  # noqa: E402

BUILD = ROOT / ".aws-sam" / "build"
INVOKES = ROOT / ".lambda" / "invoke_times.json"
# What the template sets on every function (Powertools reads it at import) and what Lambda sets.
LAMBDA_ENV = {
    "POWERTOOLS_SERVICE_NAME": "insurance-agent", "POWERTOOLS_METRICS_NAMESPACE": "InsuranceAgent",
    "POWERTOOLS_LOG_LEVEL": "INFO", "AWS_REGION": "us-east-1", "AWS_DEFAULT_REGION": "us-east-1",
    "AWS_EXECUTION_ENV": "AWS_Lambda_python3.12", "AWS_LAMBDA_FUNCTION_MEMORY_SIZE": "512",
    "LAMBDA_TASK_ROOT": "/var/task", "HF_HUB_OFFLINE": "1",
}
TIMER = "import time, sys; t = time.perf_counter(); {statement}; print(time.perf_counter() - t)"


def _docker_python(mounts: list[str], paths: list[str], env: dict[str, str], code: str, image: str = BASE_IMAGE) -> float:
    command = ["docker", "run", "--rm", "--network", "none", "--entrypoint", "/var/lang/bin/python3.12", *mounts,
               "-e", f"PYTHONPATH={':'.join([*paths, '/var/runtime'])}", "-w", "/var/task"]
    for key, value in env.items():
        command += ["-e", f"{key}={value}"]
    result = subprocess.run([*command, image, "-c", code], capture_output=True, text=True, timeout=300)
    if result.returncode != 0:
        raise RuntimeError(result.stderr.strip()[-1500:])
    return float(result.stdout.strip().splitlines()[-1])


def zip_import_seconds(logical: str, layers: list[str], provider: str, runs: int) -> float:
    mounts, paths = ["-v", f"{BUILD / logical}:/var/task:ro"], ["/var/task"]
    for index, layer in enumerate(layers):
        mounts += ["-v", f"{BUILD / layer / 'python'}:/opt/layer{index}:ro"]
        paths.append(f"/opt/layer{index}")
    env = LAMBDA_ENV | {"AWS_LAMBDA_FUNCTION_NAME": logical, "MODEL_PROVIDER": provider}
    code = TIMER.format(statement="import app")
    return statistics.median(_docker_python(mounts, paths, env, code) for _ in range(runs))


def boto3_import_seconds(runs: int) -> float:
    code = TIMER.format(statement="import boto3")
    return statistics.median(_docker_python([], [], LAMBDA_ENV, code) for _ in range(runs))


def retrieve_figures(image: str, runs: int) -> dict[str, float]:
    code = (
        "import time, json; t = time.perf_counter(); import app; imported = time.perf_counter() - t\n"
        "from insurance_agent.retrieval.search import search\n"
        "t = time.perf_counter(); search('دوره انتظار زایمان', tenant_id='sepehr', roles=['user']); "
        "first = time.perf_counter() - t\n"
        "t = time.perf_counter(); search('فرانشیز بیمه بدنه', tenant_id='sepehr', roles=['user']); "
        "warm = time.perf_counter() - t\n"
        "print(json.dumps([imported, first, warm]))"
    )
    samples = []
    for _ in range(runs):
        command = ["docker", "run", "--rm", "--network", "none", "--entrypoint", "/var/lang/bin/python3.12",
                   "-e", "PYTHONPATH=/var/task:/var/runtime", "-w", "/var/task"]
        for key, value in (LAMBDA_ENV | {"AWS_LAMBDA_FUNCTION_NAME": "RetrieveFunction", "AGENT_LATE_MODEL": "none"}).items():
            command += ["-e", f"{key}={value}"]
        result = subprocess.run([*command, image, "-c", code], capture_output=True, text=True, timeout=600)
        if result.returncode != 0:
            raise RuntimeError(result.stderr.strip()[-1500:])
        samples.append(json.loads(result.stdout.strip().splitlines()[-1]))
    return {"import_s": statistics.median(s[0] for s in samples), "first_query_s": statistics.median(s[1] for s in samples),
            "warm_query_s": statistics.median(s[2] for s in samples)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--provider", default="local", choices=["local", "bedrock"])
    args = parser.parse_args()
    if not (BUILD / "template.yaml").exists():
        print("no sam build output: run `make sam-build` (or make test-lambda) first", file=sys.stderr)
        return 2
    template = load_template()
    invokes = json.loads(INVOKES.read_text()) if INVOKES.exists() else {}
    baseline = boto3_import_seconds(args.runs)
    print(f"ModelProvider={args.provider}; bare `import boto3` in the base image: {baseline * 1000:.0f} ms "
          f"(median of {args.runs} fresh containers)\n")
    print("| function | MB (function + layers) | import ms | x boto3 | first invoke ms (cold container) | warm invoke ms |")
    print("|---|---|---|---|---|---|")
    built = yaml.safe_load((BUILD / "template.yaml").read_text(encoding="utf-8").replace("!", ""))
    retrieve = None
    for logical, resource in resources_of_type(template, "AWS::Serverless::Function").items():
        timings = invokes.get(logical, {})
        cold = f"{timings['first_ms']:.0f}" if "first_ms" in timings else "-"
        warm = f"{timings['warm_ms']:.0f}" if "warm_ms" in timings else "-"
        if resource["Properties"].get("PackageType") == "Image":
            uri = built["Resources"][logical]["Properties"]["ImageUri"]
            size = image_mb(BUILD, logical) or 0.0
            if logical == "RetrieveFunction":
                retrieve = (logical, uri, size, cold, warm)
                continue
            env = LAMBDA_ENV | {"AWS_LAMBDA_FUNCTION_NAME": logical, "MODEL_PROVIDER": args.provider}
            code = TIMER.format(statement="import app")
            seconds = statistics.median(_docker_python([], ["/var/task"], env, code, uri) for _ in range(args.runs))
            print(f"| {logical} (image) | {size:.0f} | {seconds * 1000:.0f} | {seconds / baseline:.2f} | {cold} | {warm} |")
            continue
        layers = layers_of(resource, args.provider)
        size = (folder_bytes(BUILD / logical) + sum(folder_bytes(BUILD / layer) for layer in layers)) / 1e6
        seconds = zip_import_seconds(logical, layers, args.provider, args.runs)
        print(f"| {logical} | {size:.0f} | {seconds * 1000:.0f} | {seconds / baseline:.2f} | {cold} | {warm} |")
    if retrieve:
        logical, uri, size, cold, warm = retrieve
        figures = retrieve_figures(uri, args.runs)
        print(f"\n{logical} (image, {size:.0f} MB): import {figures['import_s'] * 1000:.0f} ms; first query "
              f"(opens the index, loads the dense and sparse models) {figures['first_query_s'] * 1000:.0f} ms; "
              f"warm query {figures['warm_query_s'] * 1000:.0f} ms; through sam local start-lambda: first invoke "
              f"{cold} ms, warm invoke {warm} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
