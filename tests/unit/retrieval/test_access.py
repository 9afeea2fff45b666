"""The role allowlist and the tenant id check."""

import pytest
from insurance_agent.errors import InvalidInputError
from insurance_search.access import allowed_audiences, require_tenant


@pytest.mark.parametrize(
    ("roles", "expected"),
    [
        (["user"], ["both", "user"]),
        (["officer"], ["both", "officer", "user"]),
        (["admin"], ["admin", "both", "officer", "user"]),
        (["user", "officer"], ["both", "officer", "user"]),
        (["user", "superuser"], ["both", "user"]),
    ],
)
def test_roles_map_to_their_audiences(roles, expected):
    assert allowed_audiences(roles) == expected


@pytest.mark.parametrize("roles", [[], ["superuser"], ["Admin"], [" admin"], [None], None])
def test_unknown_or_missing_roles_read_nothing(roles):
    assert allowed_audiences(roles) == []


def test_user_never_reads_officer_or_admin():
    assert not {"officer", "admin"} & set(allowed_audiences(["user"]))
    assert "admin" not in allowed_audiences(["officer"])


@pytest.mark.parametrize("tenant", ["", " ", "a b", "*", None, "x" * 200, "../etc"])
def test_malformed_tenant_is_refused(tenant):
    with pytest.raises(InvalidInputError):
        require_tenant(tenant)


def test_wellformed_tenant_passes():
    assert require_tenant("acme-insurance_01") == "acme-insurance_01"
