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


# Found by the fuzz volume run: messages with C1 controls were refused while the fuzz oracle
# expected them admitted. The contract is right (a C1 control such as the 8-bit CSI U+009B is a
# terminal escape in a log viewer); the oracle now decides it from Unicode categories.
@pytest.mark.parametrize("message", ["\x82\U0009e297Í", "¹\x90y", "ñ\x9böQùç1", "سلام\x85", "a\x9b[2Jb", "a\x7fb"])
def test_c1_and_del_controls_in_a_message_are_refused(message):
    assert parse_turn_input(VALID | {"message": message}) == InputProblem(field="message", problem="invalid_value")


@pytest.mark.parametrize("message", ["سلام\nخوبی؟", "a\tb", "line\r\nbreak", "\ufeffسلام", "a\u2028b"])
def test_tab_line_breaks_and_format_characters_are_admitted(message):
    assert isinstance(parse_turn_input(VALID | {"message": message}), TurnInput)


# Found by the fuzz volume run: "en_GB" (Java, Android, gettext) was refused; a locale is a hint.
@pytest.mark.parametrize("locale", ["fa", "en-US", "fa-Arab-IR", "en_GB", "fa_IR", "zh-Hans-CN", "sr-Latn-RS-u-nu"])
def test_language_tags_bcp47_or_posix_are_admitted(locale):
    assert isinstance(parse_turn_input(VALID | {"locale": locale}), TurnInput)


@pytest.mark.parametrize("locale", ["", "e", "english please", "fa_IR; drop", "fa-", "-fa", "en-" + "a" * 9,
                                    "en" + "-abcd" * 13])
def test_other_locales_are_refused(locale):
    assert parse_turn_input(VALID | {"locale": locale}) == InputProblem(field="locale", problem="invalid_value")
