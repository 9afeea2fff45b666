"""Who may read what: the audience allowlist per role and the tenant id check.

Identity (tenant, roles) is set server-side by the backend, never taken from user text; these helpers
turn it into the payload values a Qdrant filter may match.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from insurance_agent.errors import InvalidInputError

# Same roles as the grievance system. "both" marks documents written for users and officers alike.
_ALLOWLIST: dict[str, tuple[str, ...]] = {
    "user": ("user", "both"),
    "officer": ("user", "officer", "both"),
    "admin": ("user", "officer", "admin", "both"),
}
AUDIENCES = ("user", "officer", "admin", "both")
TENANT_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:@-]{0,127}$")


def allowed_audiences(roles: Iterable[str]) -> list[str]:
    """Audience values the union of `roles` may read, sorted; empty means nothing is readable.

    Roles match exactly and unknown ones contribute nothing (fail closed): a typo never widens access.
    """
    allowed: set[str] = set()
    for role in roles or ():
        if isinstance(role, str):
            allowed.update(_ALLOWLIST.get(role, ()))
    return sorted(allowed)


def require_tenant(tenant_id: str) -> str:
    """The tenant id unchanged, or InvalidInputError: an empty id must never mean 'every tenant'."""
    if not isinstance(tenant_id, str) or not TENANT_PATTERN.match(tenant_id):
        raise InvalidInputError("tenant_id is missing or malformed")
    return tenant_id
