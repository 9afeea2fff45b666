"""The turn contract's parser: strict types, exact ids and roles, limits before validation."""

from __future__ import annotations

import pytest

from insurance_agent.models.turn import (
    MAX_INPUT_BYTES,
    InputProblem,
    TurnInput,
    parse_turn_input,
    safe_turn_id,
)

VALID = {"thread_id": "t-1", "turn_id": "turn-1", "user_id": "u-1", "tenant_id": "sepehr", "roles": ["user"],
         "domain": None, "message": "سلام", "locale": None}


def test_valid_input_parses_without_changing_anything():
    turn = parse_turn_input(VALID | {"roles": ["officer", "user", "user"]})
    assert isinstance(turn, TurnInput)
    assert turn.roles == ["user", "officer"] and turn.message == "سلام"


def test_deep_nesting_is_refused_without_recursion():
    value: object = 1
    for _ in range(100_000):  # far deeper than Python's recursion limit
        value = [value]
    assert parse_turn_input(VALID | {"domain": value}) == InputProblem(field="input", problem="too_deep")


def test_size_is_checked_before_fields():
    problem = parse_turn_input(VALID | {"message": "a" * MAX_INPUT_BYTES, "roles": "bad"})
    assert problem == InputProblem(field="input", problem="too_large")


def test_first_problem_in_contract_order():
    problem = parse_turn_input(VALID | {"message": 5, "thread_id": " t"})
    assert problem == InputProblem(field="thread_id", problem="invalid_value")


@pytest.mark.parametrize("raw", [None, [], "x", 3])
def test_non_object(raw):
    assert parse_turn_input(raw) == InputProblem(field="input", problem="not_an_object")


def test_safe_turn_id():
    assert safe_turn_id({"turn_id": "abc-1"}) == "abc-1"
    assert safe_turn_id({"turn_id": "abc\n"}) == ""
    assert safe_turn_id({"turn_id": "<i>"}) == ""
    assert safe_turn_id("abc") == ""
