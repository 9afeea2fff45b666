"""Which model role the running node serves (ROLE_PROVIDERS): apart from the roles package so that
every function's entry point can set it without loading the roles or their provider registry."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from insurance_agent.config import Role

# The role whose node is running (lambda_entry.node_handler sets it): what code that does not name a
# role (the policy's word analysis, a cold-start check) serves. A context variable, not a global: the
# local stack runs every node in one process, at once.
_current_role: ContextVar[Role | None] = ContextVar("current_role", default=None)


@contextmanager
def serving(role: Role | None) -> Iterator[None]:
    """Within this block, provider look-ups without a role are `role`'s."""
    token = _current_role.set(role)
    try:
        yield
    finally:
        _current_role.reset(token)


def current_role() -> Role | None:
    return _current_role.get()
