"""Malformed input, identity checks that fail closed, and the idempotency window, through the real ASL."""

from __future__ import annotations

import json
import uuid

import pytest

pytestmark = pytest.mark.stack


def _valid(**overrides):
    data = {"thread_id": f"t-{uuid.uuid4().hex[:10]}", "turn_id": f"turn-{uuid.uuid4().hex}", "user_id": "u-1001",
            "tenant_id": "sepehr", "roles": ["user"], "domain": None, "message": "حق بیمه شخص ثالث چقدر است؟"}
    return data | overrides


def _nested(depth):
    value: object = "x"
    for _ in range(depth):
        value = [value]
    return value


# (case, overrides, expected field, expected problem)
REFUSED = [
    ("surrogate-thread-id", {"thread_id": "t-\ud800"}, "thread_id", "invalid_value"),
    ("surrogate-turn-id", {"turn_id": "\udfff"}, "turn_id", "invalid_value"),
    ("surrogate-user-id", {"user_id": "u-\ud83d"}, "user_id", "invalid_value"),
    ("surrogate-tenant-id", {"tenant_id": "sepehr\ud800"}, "tenant_id", "invalid_value"),
    ("surrogate-message", {"message": "سلام \ud800 بیمه"}, "message", "invalid_value"),
    ("surrogate-role", {"roles": ["user\ud800"]}, "roles", "invalid_value"),
    ("nul-in-message", {"message": "hello\x00world"}, "message", "invalid_value"),
    ("rlo-in-message", {"message": "abc\u202edef"}, "message", "invalid_value"),
    ("nested-domain", {"domain": _nested(60)}, "input", "too_deep"),
    ("nested-shallow-wrong-type", {"domain": {"a": 1}}, "domain", "wrong_type"),
    ("unknown-field", {"is_admin": True}, "is_admin", "unknown_field"),
    ("unknown-field-markup", {"<script>": 1}, "input", "unknown_field"),
    ("roles-not-list", {"roles": "officer"}, "roles", "wrong_type"),
    ("message-number", {"message": 12}, "message", "wrong_type"),
    ("thread-id-number", {"thread_id": 5}, "thread_id", "wrong_type"),
    ("roles-bool", {"roles": [True]}, "roles", "wrong_type"),
    ("missing-message", {"message": None}, "message", "wrong_type"),
    ("blank-message", {"message": " \n\t "}, "message", "invalid_value"),
    ("long-message", {"message": "بیمه " * 500}, "message", "too_long"),
    ("role-trailing-space", {"roles": ["officer "]}, "roles", "invalid_value"),
    ("role-nbsp", {"roles": ["\u00a0officer"]}, "roles", "invalid_value"),
    ("role-tab", {"roles": ["admin\t"]}, "roles", "invalid_value"),
    ("role-case", {"roles": ["Officer"]}, "roles", "invalid_value"),
    ("padded-thread-id", {"thread_id": "  abc\n"}, "thread_id", "invalid_value"),
    ("trailing-newline-id", {"user_id": "u-1001\n"}, "user_id", "invalid_value"),
    ("locale-huge", {"locale": "x" * 200_000}, "input", "too_large"),
    ("locale-bad", {"locale": "fa_IR; drop"}, "locale", "invalid_value"),
    ("locale-number", {"locale": 7}, "locale", "wrong_type"),
    ("input-near-limit", {"message": "ب" * 120_000}, "input", "too_large"),
]


@pytest.mark.parametrize("case,overrides,field,problem", REFUSED, ids=[c[0] for c in REFUSED])
def test_malformed_input_is_refused_with_its_field(stack, case, overrides, field, problem):
    from insurance_agent.store import threads, turns

    payload = _valid(**overrides)
    # ASCII-escaped JSON carries lone surrogates exactly as a backend's json.dumps would.
    response = stack.run_turn_raw(json.dumps(payload))
    assert response["status"] == "SUCCEEDED", response.get("error")
    reply = json.loads(response["output"])
    assert reply["status"] == "refused" and reply["error"] == "invalid_input"
    assert (reply["field"], reply["problem"]) == (field, problem)
    assert reply["trace"] == {"path": ["LoadMemory"], "llm_calls": 0, "retrieval_rounds": 0, "model_invocations": 0}
    thread_id, turn_id = payload.get("thread_id"), payload.get("turn_id")
    if isinstance(thread_id, str) and thread_id.isascii() and thread_id.strip() == thread_id:
        assert threads.get_thread(thread_id) is None
    if isinstance(turn_id, str) and turn_id.isascii():
        assert turns.get_meta(turn_id) is None


def test_input_just_under_the_execution_limit_is_refused_not_failed(stack):
    payload = _valid(message="a" * (255 * 1024))
    body = json.dumps(payload)
    assert 250 * 1024 < len(body.encode()) < 256 * 1024
    response = stack.run_turn_raw(body)
    assert response["status"] == "SUCCEEDED", response.get("error")
    reply = json.loads(response["output"])
    assert (reply["error"], reply["field"], reply["problem"]) == ("invalid_input", "input", "too_large")


@pytest.mark.parametrize("turn_id", ["<b>x</b>", "a\x00b", "abc\u202eevil", "x" * 129, "ok id"])
def test_refusal_never_echoes_an_invalid_turn_id(stack, turn_id):
    reply = stack.run_turn(_valid(turn_id=turn_id))
    assert reply["status"] == "refused" and reply["field"] == "turn_id"
    assert reply["turn_id"] == ""


def test_refusal_echoes_a_valid_turn_id(stack):
    payload = _valid(roles=["root"])
    reply = stack.run_turn(payload)
    assert reply["field"] == "roles" and reply["turn_id"] == payload["turn_id"]


def test_valid_locale_tags_are_accepted(conversation):
    chat = conversation()
    for locale in ("fa", "en-US", "fa-Arab-IR"):
        reply = chat.say("سلام", locale=locale)
        assert reply["status"] != "refused", (locale, reply)


def test_replay_with_other_roles_never_returns_the_officer_answer(conversation):
    officer = conversation(roles=("officer",))
    payload = officer.payload("سقف اختیار کارشناس برای پرداخت خسارت بدون بازدید چقدر است؟")
    first = officer.stack.run_turn(payload)
    assert first["status"] in ("answer", "escalate", "clarify")
    replay_as_user = officer.stack.run_turn(payload | {"roles": ["user"]})
    assert replay_as_user["status"] == "refused" and replay_as_user["error"] == "turn_not_owned"
    assert replay_as_user["message"] != first["message"] and not replay_as_user.get("citations")
    assert replay_as_user["trace"]["llm_calls"] == 0
    # The rightful caller still gets the recorded reply.
    assert officer.stack.run_turn(payload)["message"] == first["message"]


@pytest.mark.parametrize("change", [{"user_id": "u-1002"}, {"tenant_id": "kavir"}, {"roles": ["user", "officer"]}])
def test_replay_by_another_identity_is_refused(conversation, change):
    chat = conversation()
    payload = chat.payload("سلام")
    assert chat.stack.run_turn(payload)["status"] == "answer"
    other = payload | change | {"thread_id": f"t-{uuid.uuid4().hex[:10]}"}
    reply = chat.stack.run_turn(other)
    assert reply["status"] == "refused" and reply["error"] == "turn_not_owned"


def test_turn_id_on_another_thread_of_the_same_user_is_refused(conversation):
    chat = conversation()
    payload = chat.payload("سلام")
    chat.stack.run_turn(payload)
    moved = payload | {"thread_id": f"t-{uuid.uuid4().hex[:10]}"}
    reply = chat.stack.run_turn(moved)
    assert reply["error"] == "turn_not_owned"
    from insurance_agent.store import threads

    assert threads.get_thread(moved["thread_id"]) is None


def test_committed_turn_never_applies_twice_after_many_later_turns(conversation):
    from insurance_agent.store import threads
    from insurance_agent.store.threads import MAX_TURN_IDS, TurnEntry

    chat = conversation()
    payload = chat.payload("سلام")
    first = chat.stack.run_turn(payload)
    assert first["status"] == "answer"
    # Many later turns on the same thread push the first id out of the thread's bounded list.
    for index in range(MAX_TURN_IDS + 5):
        later = f"later-{index}-{uuid.uuid4().hex[:6]}"

        def add(record, later=later):
            record.turns.append(TurnEntry(turn_id=later, message="m", reply="r", status="answer", query="m"))
            record.turns = record.turns[-20:]

        threads.update_thread(thread_id=chat.thread_id, tenant_id="sepehr", user_id="u-1001", turn_id=later, mutate=add)
    before = threads.get_thread(chat.thread_id)
    assert payload["turn_id"] not in before.turn_ids
    replay = chat.stack.run_turn(payload)
    assert replay == first
    after = threads.get_thread(chat.thread_id)
    assert after.version == before.version
    assert [t.turn_id for t in after.turns].count(payload["turn_id"]) == 0
