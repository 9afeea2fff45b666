"""Shared DynamoDB plumbing: one resource per process and typed handling of throttling."""

from __future__ import annotations

import json
import time
from functools import lru_cache
from typing import Any

import boto3
from botocore.config import Config
from botocore.exceptions import ClientError, EndpointConnectionError

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


def is_condition_failure(error: ClientError) -> bool:
    return error.response.get("Error", {}).get("Code") in (
        "ConditionalCheckFailedException",
        "TransactionCanceledException",
    )


def raise_typed(error: Exception) -> None:
    """Turn throttling and connectivity failures into TransientError (retried by the ASL)."""
    if isinstance(error, EndpointConnectionError):
        raise TransientError("state store unreachable") from error
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
