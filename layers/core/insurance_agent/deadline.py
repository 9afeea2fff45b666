"""The time left in the current Lambda invocation, for code that must not start what it cannot finish.

A model call retried inside a node must stop before the function's own timeout: a Lambda killed by
its timeout is not a TransientError, so the ASL would not retry it. lambda_entry records the
deadline from the invocation context; outside Lambda (unit tests, tools) there is none.
"""

from __future__ import annotations

import time
from contextvars import ContextVar, Token
from typing import Any

_deadline: ContextVar[float | None] = ContextVar("invocation_deadline", default=None)


def start(context: Any) -> Token:
    """Record the deadline of the invocation `context` (a LambdaContext, or anything without one)."""
    remaining = getattr(context, "get_remaining_time_in_millis", None)
    return _deadline.set(time.monotonic() + remaining() / 1000.0 if callable(remaining) else None)


def end(token: Token) -> None:
    """Forget the deadline `start` recorded (the invocation is over)."""
    _deadline.reset(token)


def remaining_seconds() -> float | None:
    """Seconds left before the invocation's deadline, or None when there is no deadline."""
    deadline = _deadline.get()
    return None if deadline is None else deadline - time.monotonic()
