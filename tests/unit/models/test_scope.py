"""A scope is validated once into its model, and stored in the form records have always held."""

from __future__ import annotations

import pytest
from insurance_agent.errors import InvalidInputError
from insurance_agent.models.history import HistoryTurn
from insurance_agent.models.roles import ContextualizeResult
from insurance_agent.models.scope import Scope


def test_a_callers_scope_is_validated_into_its_model():
    assert Scope.of({"file_id": ["a", "b"], "domain": None}).narrowing() == [("file_id", ["a", "b"])]
    assert Scope.of(None) == Scope() and Scope.of(Scope(domain="auto")).domain == ["auto"]
    assert Scope.of({"domain": "auto"}).first_domain == "auto" and Scope().first_domain is None


@pytest.mark.parametrize("bad", [{"tenant_id": "other"}, {"file_id": ""}, {"domain": [3]}, {"file_id": 7}, ["file_id"]])
def test_a_scope_that_would_lose_or_widen_a_narrowing_is_refused(bad):
    with pytest.raises(InvalidInputError):
        Scope.of(bad)


def test_one_value_is_stored_bare_and_empty_keys_not_at_all():
    assert Scope(file_id="body", domain="auto").model_dump() == {"file_id": "body", "domain": "auto"}
    assert Scope(file_id=["a", "b"]).model_dump(mode="json") == {"file_id": ["a", "b"]}
    assert Scope().model_dump() == {}


def test_a_thread_turn_and_a_provider_result_read_the_old_dict_form():
    turn = HistoryTurn.model_validate({"message": "m", "scope": {"file_id": "body", "domain": "auto"}})
    assert turn.scope == Scope(file_id=["body"], domain=["auto"])
    assert turn.model_dump()["scope"] == {"file_id": "body", "domain": "auto"}
    assert ContextualizeResult(standalone_query="q", scope={"file_id": "f"}).scope.file_id == ["f"]
