"""What the resilience suites look at and how they inject faults, at the boundaries only.

- `states_entered`: the ASL states an execution really went through (the execution history).
- `DynamoTap`: every request the node handlers send to DynamoDB (they run in this process), seen on
  the real boto3 client through botocore's event hooks; it counts writes and can answer a request
  with a wire-level error (`before-send`), so botocore's own retry logic and the store's error
  handling run exactly as against a throttled table.
- `bedrock`: the stack's model provider switched to the Bedrock provider over a scripted Stubber.
- `thread_state`: the thread record and the turn records, read back after the fact.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from typing import Any

import pytest
from botocore.awsrequest import AWSResponse

WRITE_OPERATIONS = frozenset({"PutItem", "UpdateItem", "DeleteItem", "BatchWriteItem", "TransactWriteItems"})


def states_entered(stack, response: dict[str, Any]) -> list[str]:
    """Names of the states the execution entered, in order (Choice and Pass states included)."""
    return [
        e["stateEnteredEventDetails"]["name"]
        for e in stack.history(response["executionArn"])
        if "stateEnteredEventDetails" in e
    ]


class _RawBody:
    """The raw stream botocore reads an HTTP body from."""

    def __init__(self, body: bytes) -> None:
        self._body = body

    def stream(self, **_: Any):
        yield self._body

    def read(self, *_: Any) -> bytes:
        body, self._body = self._body, b""
        return body


def _error_response(request, code: str, status: int) -> AWSResponse:
    body = json.dumps({"__type": f"com.amazonaws.dynamodb.v20120810#{code}", "message": f"injected {code}"})
    headers = {"x-amzn-RequestId": "injected", "Content-Type": "application/x-amz-json-1.0"}
    return AWSResponse(request.url, status, headers, _RawBody(body.encode()))


class DynamoTap:
    """Watches (and optionally faults) the DynamoDB requests of the node handlers."""

    def __init__(self) -> None:
        from insurance_agent.store import dynamo

        self.client = dynamo.resource().meta.client
        self.lock = threading.Lock()
        self.requests: list[tuple[str, str]] = []  # (operation, table)
        self.faults: list[dict[str, Any]] = []
        self.injected: list[tuple[str, str, str]] = []
        self.client.meta.events.register("after-call.dynamodb", self._record)
        self.client.meta.events.register("before-send.dynamodb", self._maybe_fail)
        self.client.meta.events.register("before-parameter-build.dynamodb", self._remember_table)

    def close(self) -> None:
        self.client.meta.events.unregister("after-call.dynamodb", self._record)
        self.client.meta.events.unregister("before-send.dynamodb", self._maybe_fail)
        self.client.meta.events.unregister("before-parameter-build.dynamodb", self._remember_table)

    def fail(self, operation: str, table_part: str, code: str, *, times: int, status: int = 400,
             when: Callable[[dict[str, Any]], bool] | None = None) -> None:
        """Answer the next `times` matching requests with error `code` (HTTP `status`)."""
        self.faults.append({"operation": operation, "table": table_part, "code": code, "left": times,
                            "status": status, "when": when})

    def writes(self, table_part: str | None = None) -> int:
        return sum(1 for op, table in self.requests if op in WRITE_OPERATIONS and (table_part is None or table_part in table))

    def _record(self, model, http_response, context, **_: Any) -> None:
        # Requests the table accepted (a refused condition or a throttled write changed nothing).
        if http_response.status_code < 300:
            with self.lock:
                self.requests.append((model.name, context.get("table_name", "")))

    @staticmethod
    def _remember_table(params, context, **_: Any) -> None:
        context["table_name"] = params.get("TableName", "")

    def _maybe_fail(self, request, **_: Any):
        target = request.headers.get("X-Amz-Target", b"")
        operation = (target.decode() if isinstance(target, bytes) else target).rsplit(".", 1)[-1]
        body = json.loads(request.body or b"{}")
        with self.lock:
            for fault in self.faults:
                if fault["left"] and fault["operation"] == operation and fault["table"] in body.get("TableName", ""):
                    if fault["when"] is not None and not fault["when"](body):
                        continue
                    fault["left"] -= 1
                    self.injected.append((operation, body.get("TableName", ""), fault["code"]))
                    return _error_response(request, fault["code"], fault["status"])
        return None


@pytest.fixture
def dynamo_tap(stack):
    tap = DynamoTap()
    yield tap
    tap.close()


def thread_state(thread_id: str):
    """The thread record as stored now (None when the thread does not exist)."""
    from insurance_agent.store import threads

    return threads.get_thread(thread_id)


def turn_parts(turn_id: str, thread_id: str) -> dict[str, Any]:
    from insurance_agent.store import turns

    return turns.get_parts(turn_id, thread_id)


def assert_thread_consistent(thread_id: str) -> Any:
    """No half-written turn: every committed turn id appears once, with exactly one history entry."""
    record = thread_state(thread_id)
    if record is None:
        return None
    assert len(record.turn_ids) == len(set(record.turn_ids)), record.turn_ids
    entries = [t.turn_id for t in record.turns]
    assert len(entries) == len(set(entries)), entries
    assert set(entries) <= set(record.turn_ids), (entries, record.turn_ids)
    if record.status == "handed_off":
        assert record.turns and record.turns[-1].status == "escalate", record.turns
    trailing = 0
    for entry in reversed(record.turns):
        if entry.status != "clarify":
            break
        trailing += 1
    assert record.clarify_count == trailing, (record.clarify_count, [t.status for t in record.turns])
    return record


@pytest.fixture
def bedrock(stack):
    """The stack's nodes use the Bedrock provider with a scripted, stubbed bedrock-runtime client."""
    from insurance_agent.config import get_settings
    from insurance_agent.roles import base
    from insurance_llm.bedrock import BedrockProvider
    from scripted_bedrock import MAIN, REGION, SMALL, ScriptedBedrock

    patch = pytest.MonkeyPatch()
    scripted = ScriptedBedrock()
    for name, value in {"MODEL_PROVIDER": "bedrock", "SMALL_MODEL_ID": SMALL, "MAIN_MODEL_ID": MAIN,
                        "BEDROCK_REGION": REGION}.items():
        patch.setenv(name, value)
    get_settings.cache_clear()
    provider = BedrockProvider(client=scripted.client, sleep=scripted.sleeps.append)
    base.get_provider.cache_clear()
    patch.setattr(base, "create_provider", lambda name: provider)
    assert base.get_provider() is provider
    try:
        yield scripted
    finally:
        patch.undo()
        base.get_provider.cache_clear()
        get_settings.cache_clear()


class Context:
    """The Lambda context a handler reads (name, request id, remaining time), for direct invocations."""

    function_name = "test"
    function_version = "$LATEST"
    invoked_function_arn = "arn:aws:lambda:us-east-1:123456789012:function:test"
    memory_limit_in_mb = 512
    aws_request_id = "req-1"
    log_group_name = "/aws/lambda/test"
    log_stream_name = "local"

    @staticmethod
    def get_remaining_time_in_millis():
        return 30000
