"""Size of every function as deployed, from the `sam build` output, against Lambda's limits.

    python benchmarks/package_sizes.py [--build-dir .aws-sam/build] [--import-check] [--json]

A zip function's size is its own folder plus the layers it gets (both ModelProvider settings: the
layer lists depend on it), unzipped, as Lambda counts against its 250 MB limit. Retrieve and Triage
are images (10 GB limit): their size is the image's. Also checked: the thin nodes carry no numpy or
onnxruntime. With --import-check (needs Docker and the base image, `make lambda-up`), each zip
function's handler and its model provider are imported in the base image with exactly its own
packages on sys.path, for every provider. Exits 1 when a check fails.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "local"))

from agent_local.template import layers_of, load_template, resources_of_type  # noqa: E402

ZIP_LIMIT_MB = 250
IMAGE_LIMIT_MB = 10 * 1024
PROVIDERS = ("bedrock", "openai", "offline")
THIN = {"LoadMemoryFunction", "AccountFunction", "EscalateFunction", "WriteMemoryFunction"}
HEAVY = ("numpy", "onnxruntime")
BASE_IMAGE = "public.ecr.aws/lambda/python:3.12-x86_64"


def folder_bytes(path: Path) -> int:
    total = 0
    for dirpath, _, files in os.walk(path):
        for name in files:
            file = Path(dirpath, name)
            if not file.is_symlink():
                total += file.stat().st_size
    return total


def image_mb(build_dir: Path, logical: str) -> float | None:
    built = yaml.safe_load((build_dir / "template.yaml").read_text(encoding="utf-8").replace("!", ""))
    uri = built["Resources"][logical]["Properties"].get("ImageUri")
    if not uri:
        return None
    result = subprocess.run(["docker", "image", "inspect", "-f", "{{.Size}}", uri], capture_output=True, text=True)
    return int(result.stdout) / 1e6 if result.returncode == 0 else None


def import_check(build_dir: Path, logical: str, layers: list[str], provider: str) -> str | None:
    """Import the handler and create its provider in the base image with only its own packages."""
    mounts, paths = [], ["/var/task"]
    for index, layer in enumerate(layers):
        mounts += ["-v", f"{build_dir / layer / 'python'}:/opt/layer{index}:ro"]
        paths.append(f"/opt/layer{index}")
    code = "import app"
    if logical not in THIN:  # the model nodes also create their provider and analyse words
        code += ("; from insurance_agent.roles.base import get_provider; get_provider(); "
                 "from insurance_agent.policy.terms import terms; terms().content_terms('بیمه بدنه')")
    command = ["docker", "run", "--rm", "--network", "none", "--entrypoint", "/var/lang/bin/python3.12",
               "-v", f"{build_dir / logical}:/var/task:ro", *mounts,
               "-e", f"PYTHONPATH={':'.join(paths)}:/var/runtime", "-e", f"MODEL_PROVIDER={provider}",
               "-e", "AWS_REGION=us-east-1", "-e", "AWS_DEFAULT_REGION=us-east-1", "-e", "HF_HUB_OFFLINE=1",
               "-w", "/var/task", BASE_IMAGE, "-c", code]
    result = subprocess.run(command, capture_output=True, text=True, timeout=300)
    return None if result.returncode == 0 else result.stderr.strip().splitlines()[-1]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--build-dir", default=str(ROOT / ".aws-sam" / "build"))
    parser.add_argument("--import-check", action="store_true")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    build_dir = Path(args.build_dir)
    if not (build_dir / "template.yaml").exists():
        print(f"no sam build output in {build_dir}: run `make sam-build` first", file=sys.stderr)
        return 2
    template = load_template()
    layer_mb = {name: folder_bytes(build_dir / name) / 1e6 for name in resources_of_type(template, "AWS::Serverless::LayerVersion")}
    rows, failures = [], []
    for logical, resource in resources_of_type(template, "AWS::Serverless::Function").items():
        if resource["Properties"].get("PackageType") == "Image":
            size = image_mb(build_dir, logical)
            rows.append({"function": logical, "package": "image", "limit_mb": IMAGE_LIMIT_MB}
                        | {f"{provider}_mb": size for provider in PROVIDERS})
            if size is None:
                failures.append(f"{logical}: built image not found (docker)")
            elif size > IMAGE_LIMIT_MB:
                failures.append(f"{logical}: image {size:.0f} MB > {IMAGE_LIMIT_MB} MB")
            continue
        own = folder_bytes(build_dir / logical) / 1e6
        row = {"function": logical, "package": "zip", "limit_mb": ZIP_LIMIT_MB}
        for provider in PROVIDERS:
            layers = layers_of(template, resource, provider)
            if len(set(layers)) != len(layers):
                failures.append(f"{logical}: a layer is listed twice ({layers})")
            total = own + sum(layer_mb[layer] for layer in layers)
            row[f"{provider}_mb"] = round(total, 1)
            row[f"{provider}_layers"] = layers
            if total > ZIP_LIMIT_MB:
                failures.append(f"{logical} ({provider}): {total:.0f} MB > {ZIP_LIMIT_MB} MB")
            if logical in THIN:
                for layer in layers:
                    heavy = [name for name in HEAVY if (build_dir / layer / "python" / name).exists()]
                    if heavy:
                        failures.append(f"{logical}: layer {layer} carries {', '.join(heavy)}")
            if args.import_check:
                error = import_check(build_dir, logical, layers, provider)
                if error:
                    failures.append(f"{logical} ({provider}): import failed: {error}")
        rows.append(row)
    if args.json:
        print(json.dumps({"functions": rows, "layers_mb": layer_mb, "failures": failures}, indent=2))
    else:
        print("| function | package | " + " | ".join(f"MB with ModelProvider={p}" for p in PROVIDERS) + " | limit MB |")
        print("|---|---|" + "---|" * len(PROVIDERS) + "---|")
        for row in rows:
            sizes = [f"{row[f'{p}_mb']:.0f}" if row[f"{p}_mb"] is not None else "?" for p in PROVIDERS]
            print(f"| {row['function']} | {row['package']} | {' | '.join(sizes)} | {row['limit_mb']} |")
        print("\nlayers (MB unzipped): " + ", ".join(f"{k} {v:.0f}" for k, v in layer_mb.items()))
        for failure in failures:
            print(f"FAIL {failure}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
