"""Requests really sent to a model service during the current Lambda invocation.

`llm_calls` counts model *role* runs (the budget the ASL checks). One role run can send several
requests: transient errors are retried inside the node, a malformed tool call gets one corrective
turn, and the ASL retries a node that ran out of attempts. The model client records every request
here; lambda_entry adds the invocation's total to the turn's `model_invocations`. Requests sent by
an attempt that then failed (and was retried by the ASL) cannot reach the turn's state; the
`ModelInvocations` metric counts those too.
"""

from __future__ import annotations

from contextvars import ContextVar, Token

_count: ContextVar[list[int] | None] = ContextVar("model_invocations", default=None)


def start() -> Token:
    """Begin counting for one Lambda invocation."""
    return _count.set([0])


def record(requests: int = 1) -> None:
    """Count `requests` requests sent to a model (no-op outside a counted invocation)."""
    counter = _count.get()
    if counter is not None:
        counter[0] += requests


def total() -> int:
    counter = _count.get()
    return counter[0] if counter is not None else 0


def end(token: Token) -> None:
    _count.reset(token)
