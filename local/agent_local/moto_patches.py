"""The small patches moto 5.2.5 needs to run this service's ASL for real (see README).

1. Lambda tasks call the real handlers in-process instead of echoing the payload; an exception
   becomes an `Unhandled` function error whose errorType is the exception's class name, so the
   ASL's Retry and Catch behave as on AWS.
2. StartSyncExecution is answered: the execution runs on moto's ASL interpreter and the call
   waits for it, as on an EXPRESS state machine.
3. Optionally, Retry intervals do not really sleep (tests).
4. Each definition is parsed once, not once per execution: moto's pure-Python ANTLR parser and
   preprocessor cost far more than running a refused turn.

Listeners registered with `on_execution_done` receive each finished execution's history (the
local stack turns it into CloudWatch-shaped log events).

With `forward_to(endpoint)`, patch 1 instead sends each invocation to a Lambda endpoint (`sam local
start-lambda`), so every Task runs in its own container, packaged as deployed.
"""

from __future__ import annotations

import contextlib
import json
import logging
import sys
import threading
import time
import traceback
import uuid
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

Handler = Callable[[Any, Any], Any]

_handlers: dict[str, Handler] = {}
_forward: dict[str, Any] = {}  # "client": boto3 Lambda client of the endpoint, "names": local -> its name
forward_timings: list[tuple[str, float]] = []  # (endpoint function name, seconds) of each forwarded call
_listeners: list[Callable[[str, list[dict[str, Any]]], None]] = []
_TERMINAL_EVENTS = ("ExecutionSucceeded", "ExecutionFailed", "ExecutionTimedOut", "ExecutionAborted")
_lock = threading.Lock()
_applied = False
MAX_SYNC_SECONDS = 300
# The time a handler is told it has (context.get_remaining_time_in_millis); a benchmark on a slow model
# server may raise it.
LAMBDA_SECONDS = 60


def register_handler(function_name: str, handler: Handler) -> None:
    _handlers[function_name] = handler


def handlers() -> dict[str, Handler]:
    return _handlers


def forward_to(endpoint: str | None, names: dict[str, str] | None = None) -> None:
    """Send Lambda invocations to `endpoint` (None: back to the in-process handlers).

    `names` maps this stack's function names to the endpoint's (SAM uses the template's logical ids).
    """
    _forward.clear()
    if endpoint:
        import boto3
        from botocore.config import Config

        # A cold container (Retrieve loads its models) can take long; the ASL's Retry decides, not botocore.
        config = Config(read_timeout=300, connect_timeout=10, retries={"max_attempts": 0})
        _forward["client"] = boto3.client("lambda", endpoint_url=endpoint, region_name="us-east-1", config=config)
        _forward["names"] = dict(names or {})


def _invoke_remote(name: str, body: bytes, response_headers: dict[str, str]) -> bytes:
    target = _forward["names"].get(name, name)
    started = time.monotonic()
    try:
        response = _forward["client"].invoke(FunctionName=target, Payload=body or b"{}")
        forward_timings.append((target, time.monotonic() - started))
    except Exception as error:  # noqa: BLE001 - the endpoint itself failed: the Lambda service's error
        response_headers["x-amz-function-error"] = "Unhandled"
        return json.dumps({"errorType": "Lambda.ServiceException", "errorMessage": f"{type(error).__name__}: {error}"[:500]}).encode()
    payload = response["Payload"].read()
    error = response.get("FunctionError") or _runtime_error(payload)
    if error:
        response_headers["x-amz-function-error"] = error
    return payload


# What the runtime client posts for an exception in the handler. The Lambda service marks such a
# response with X-Amz-Function-Error; SAM's emulator does so only for an error object of at most
# these keys minus requestId, which current awslambdaric adds, so the ASL saw a failed node as a
# success and passed the error object on as the next state.
_RUNTIME_ERROR_KEYS = frozenset({"errorMessage", "errorType", "stackTrace", "requestId", "cause"})


def _runtime_error(payload: bytes) -> str | None:
    try:
        value = json.loads(payload or b"null")
    except ValueError:
        return None
    if isinstance(value, dict) and {"errorMessage", "errorType"} <= value.keys() <= _RUNTIME_ERROR_KEYS:
        return "Unhandled"
    return None


def on_execution_done(listener: Callable[[str, list[dict[str, Any]]], None]) -> None:
    """Call `listener(execution_arn, history_events)` after every StartSyncExecution (once per listener)."""
    if listener not in _listeners:
        _listeners.append(listener)


def remove_execution_listener(listener: Callable[[str, list[dict[str, Any]]], None]) -> None:
    if listener in _listeners:
        _listeners.remove(listener)


def _notify(execution: Any) -> None:
    if not _listeners:
        return
    # The terminal event is recorded just after the status flips: wait for it briefly.
    deadline = time.monotonic() + 2
    events = execution.to_history_output()["events"]
    while (not events or events[-1]["type"] not in _TERMINAL_EVENTS) and time.monotonic() < deadline:
        time.sleep(0.005)
        events = execution.to_history_output()["events"]
    for listener in list(_listeners):
        try:
            listener(execution.execution_arn, events)
        except Exception:  # noqa: BLE001 - a broken log sink must never fail the turn
            logging.getLogger(__name__).exception("execution listener failed")


def _context(function_name: str) -> SimpleNamespace:
    deadline = time.monotonic() + LAMBDA_SECONDS
    return SimpleNamespace(
        function_name=function_name,
        function_version="$LATEST",
        invoked_function_arn=f"arn:aws:lambda:us-east-1:123456789012:function:{function_name}",
        memory_limit_in_mb=512,
        aws_request_id=str(uuid.uuid4()),
        log_group_name=f"/aws/lambda/{function_name}",
        log_stream_name="local",
        get_remaining_time_in_millis=lambda: int(max(deadline - time.monotonic(), 0) * 1000),
    )


def _invoke(self, function_name, qualifier, body, headers, response_headers):  # noqa: ANN001 - moto's signature
    # A function ARN, qualified (…:function:NAME:ALIAS, as the state machine calls it) or not.
    name = function_name.split(":")[6] if function_name.startswith("arn:") else function_name.split(":")[0]
    if _forward:
        return _invoke_remote(name, body, response_headers)
    handler = _handlers.get(name)
    if handler is None:
        response_headers["x-amz-function-error"] = "Unhandled"
        return json.dumps({"errorType": "ResourceNotFoundException", "errorMessage": name}).encode()
    event = json.loads(body) if body else {}
    try:
        result = handler(event, _context(name))
    except Exception as error:  # noqa: BLE001 - reported the way the Lambda service reports it
        response_headers["x-amz-function-error"] = "Unhandled"
        return json.dumps(
            {
                "errorType": type(error).__name__,
                "errorMessage": str(error)[:500],
                "stackTrace": traceback.format_exception(error)[-3:],
            }
        ).encode()
    # As the Lambda runtime does (json.dumps with its ASCII default): a lone surrogate kept from the
    # input travels as a \u escape instead of failing to encode as UTF-8.
    return json.dumps(result).encode()


# The local stack runs every execution's handlers in this one process. Unbounded, 50 turns at once on
# 2 cores stretch every Task past its 30 s TimeoutSeconds and each turn ends in a hand-off; like a
# backend's own admission control, further StartSyncExecution calls wait for a free slot instead.
_admission: threading.BoundedSemaphore | None = None


def limit_concurrent_executions(limit: int | None) -> None:
    """Run at most `limit` executions at once (None or 0: no limit); callers beyond it wait their turn."""
    global _admission
    _admission = threading.BoundedSemaphore(limit) if limit else None


def _start_sync_execution(self):  # noqa: ANN001 - moto response method
    with _admission or contextlib.nullcontext():
        return _run_sync_execution(self)


def _run_sync_execution(self):  # noqa: ANN001 - moto response method
    from moto.core.responses import ActionResult
    from moto.stepfunctions.parser.api import ExecutionStatus

    arn = self._get_param("stateMachineArn")
    name = self._get_param("name") or str(uuid.uuid4())
    execution_input = self._get_param("input", if_none="{}")
    execution = self.stepfunction_backend.start_execution(arn, name, execution_input)
    deadline = time.monotonic() + MAX_SYNC_SECONDS
    while execution.exec_status == ExecutionStatus.RUNNING and time.monotonic() < deadline:
        time.sleep(0.002)
    # moto sets the status before the output (or error): wait until the worker has set both, else a
    # succeeded execution can be read with no output (seen once in 10,000 fuzz cases).
    settled = time.monotonic() + 5
    while not getattr(execution, "_agent_reflected", False) and execution.exec_status != ExecutionStatus.RUNNING \
            and time.monotonic() < settled:
        time.sleep(0.001)
    status = execution.exec_status
    if status == ExecutionStatus.RUNNING:
        status_text = "TIMED_OUT"
    elif status == ExecutionStatus.SUCCEEDED:
        status_text = "SUCCEEDED"
    elif status == ExecutionStatus.TIMED_OUT:
        status_text = "TIMED_OUT"
    else:
        status_text = "FAILED"
    response: dict[str, Any] = {
        "executionArn": execution.execution_arn,
        "stateMachineArn": arn,
        "name": name,
        "startDate": execution.start_date,
        "stopDate": execution.stop_date or execution.start_date,
        "status": status_text,
        "input": execution_input,
    }
    if status_text == "SUCCEEDED":
        output = execution.output
        response["output"] = output if isinstance(output, str) else json.dumps(output, ensure_ascii=False)
    if execution.error is not None:
        response["error"] = str(execution.error)
    if execution.cause is not None:
        response["cause"] = str(execution.cause)
    _notify(execution)
    return ActionResult(response)


_programs: dict[str, Any] = {}


def program(definition: str) -> Any:
    """The parsed program of a state machine definition, parsed on first use (a quarter of a second)."""
    from moto.stepfunctions.parser.asl.parse.asl_parser import AmazonStateLanguageParser

    # The interpreter keeps every execution's state in its Environment (heap, stack, context), not
    # in the program's components, so one parsed program serves every execution of a definition.
    parsed = _programs.get(definition)
    if parsed is None:
        parsed = _programs[definition] = AmazonStateLanguageParser.parse(definition)[0]
    return parsed


def _evaluation_entrypoint(self):  # noqa: ANN001 - moto's ExecutionWorker method
    return program(self._evaluation_details.state_machine_details.definition)


RECURSION_LIMIT = 6_000  # see apply(); a harness that lowers the limit (hypothesis does) must raise it again


def _reflect_then_mark(reflect: Callable[[Any], None]) -> Callable[[Any], None]:
    """moto's end-of-execution bookkeeping, then a mark that it is complete (status, output, error)."""

    def wrapped(self) -> None:  # noqa: ANN001 - moto's method
        reflect(self)
        self.execution._agent_reflected = True

    return wrapped


def apply(*, fast_retries: bool = False) -> None:
    """Apply the patches once per process (idempotent)."""
    global _applied
    with _lock:
        if not _applied:
            from moto.awslambda_simple.models import LambdaSimpleBackend
            from moto.stepfunctions.responses import StepFunctionResponse

            from moto.stepfunctions.parser.backend.execution_worker import ExecutionWorker

            from moto.stepfunctions.parser.backend.execution import BaseExecutionWorkerCommunication

            LambdaSimpleBackend.invoke = _invoke
            # moto's ASL interpreter copies and walks the execution input recursively: an input nested
            # about 500 deep (far under the 256 KB limit) failed the execution with States.Runtime
            # RecursionError before LoadMemory could refuse it. Room for what the API accepts (its JSON
            # decoder stops near 1,500 levels); Python-to-Python calls use no C stack, so the default
            # thread stack suffices (a larger one made `agent chat` hang on Ctrl-C).
            sys.setrecursionlimit(max(sys.getrecursionlimit(), RECURSION_LIMIT))
            BaseExecutionWorkerCommunication._reflect_execution_status = _reflect_then_mark(
                BaseExecutionWorkerCommunication._reflect_execution_status)
            StepFunctionResponse.start_sync_execution = _start_sync_execution
            ExecutionWorker._get_evaluation_entrypoint = _evaluation_entrypoint
            _applied = True
        if fast_retries:
            from moto.stepfunctions.parser.asl.component.common.retry import retrier_decl

            retrier_decl.time = SimpleNamespace(sleep=lambda seconds: None, time=time.time)
