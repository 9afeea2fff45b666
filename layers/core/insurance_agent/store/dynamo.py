"""Shared DynamoDB plumbing: one resource per process and typed handling of throttling."""

from __future__ import annotations

import json
import time
from functools import lru_cache
from typing import Any

import boto3
from botocore.config import Config
from botocore.exceptions import (
    BotoCoreError,
    ClientError,
    ConnectionClosedError,
    ConnectTimeoutError,
    EndpointConnectionError,
    ReadTimeoutError,
)

from insurance_agent.errors import TransientError

_THROTTLING = {
    "ProvisionedThroughputExceededException",
    "ThrottlingException",
    "RequestLimitExceeded",
    "InternalServerError",
    "ServiceUnavailable",
}


@lru_cache(maxsize=1)
def resource():
    """DynamoDB resource; endpoint and region come from the standard AWS environment variables."""
    return boto3.resource(
        "dynamodb",
        config=Config(retries={"mode": "standard", "max_attempts": 3}, connect_timeout=2, read_timeout=5),
    )


def table(name: str):
    return resource().Table(name)


# What a DynamoDB call can raise: a service error, or a transport failure (timeouts, dropped connections).
STORE_ERRORS = (ClientError, BotoCoreError)


def is_condition_failure(error: Exception) -> bool:
    return (getattr(error, "response", None) or {}).get("Error", {}).get("Code") in (
        "ConditionalCheckFailedException",
        "TransactionCanceledException",
    )


def raise_typed(error: Exception) -> None:
    """Turn throttling and connectivity failures into TransientError (retried by the ASL)."""
    if isinstance(error, EndpointConnectionError | ConnectTimeoutError):
        raise TransientError("state store unreachable") from error
    if isinstance(error, ReadTimeoutError | ConnectionClosedError):
        # A slow or dropped response after botocore's own retries: worth a fresh attempt, not a crash.
        raise TransientError("state store timed out") from error
    if isinstance(error, ClientError) and error.response.get("Error", {}).get("Code") in _THROTTLING:
        raise TransientError("state store throttled") from error
    raise error


def get_item(table_name: str, key: dict[str, Any]) -> dict[str, Any] | None:
    """A strongly consistent read of one item; throttling and outages surface as TransientError."""
    try:
        return table(table_name).get_item(Key=key, ConsistentRead=True).get("Item")
    except Exception as error:  # noqa: BLE001 - re-raised typed
        raise_typed(error)


def now() -> int:
    return int(time.time())


def dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
