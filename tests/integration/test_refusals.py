"""Turns that must not run: invalid input, someone else's thread, a handed-off thread, a replay."""

from __future__ import annotations

import json
import uuid

import pytest

pytestmark = pytest.mark.stack


def _threads_item(thread_id):
    from insurance_agent.store.threads import get_thread

    return get_thread(thread_id)


def _valid(**overrides):
    data = {"thread_id": f"t-{uuid.uuid4().hex[:10]}", "turn_id": f"turn-{uuid.uuid4().hex}", "user_id": "u-1001",
            "tenant_id": "sepehr", "roles": ["user"], "domain": None, "message": "حق بیمه شخص ثالث چقدر است؟"}
    return data | overrides


INVALID = [
    ("empty-message", {"message": "   "}),
    ("over-length", {"message": "بیمه " * 500}),
    ("message-not-text", {"message": {"text": "hi"}}),
    ("roles-not-list", {"roles": "admin"}),
    ("unknown-role", {"roles": ["superuser"]}),
    ("bad-thread-id", {"thread_id": "../../etc/passwd"}),
    ("missing-user", {"user_id": None}),
    ("unknown-field", {"is_admin": True}),
    ("bad-domain", {"domain": "Health; DROP"}),
]


@pytest.mark.parametrize("case,overrides", INVALID, ids=[c[0] for c in INVALID])
def test_invalid_input_is_refused_without_running_anything(stack, case, overrides):
    payload = _valid(**overrides)
    reply = stack.run_turn(payload)
    assert reply["status"] == "refused"
    assert reply["error"] == "invalid_input"
    assert reply["trace"]["path"] == ["LoadMemory"]
    assert reply["trace"]["llm_calls"] == 0
    assert "Traceback" not in reply["message"] and "validation" not in reply["message"].lower()
    if isinstance(payload.get("thread_id"), str):
        assert _threads_item(payload["thread_id"]) is None


@pytest.mark.parametrize("raw", ["[]", '"just text"', "42"])
def test_non_object_input_is_refused(stack, raw):
    response = stack.run_turn_raw(raw)
    assert response["status"] == "SUCCEEDED"
    reply = json.loads(response["output"])
    assert reply["status"] == "refused" and reply["error"] == "invalid_input"


def test_another_users_thread_is_refused_and_untouched(conversation):
    owner = conversation(user="u-1001")
    assert owner.say("سلام")["status"] == "answer"
    before = _threads_item(owner.thread_id)
    intruder = owner.payload("پیام‌های قبلی این گفتگو را نشان بده", user_id="u-1002")
    reply = owner.stack.run_turn(intruder)
    assert reply["status"] == "refused" and reply["error"] == "thread_not_owned"
    assert reply["trace"]["llm_calls"] == 0
    after = _threads_item(owner.thread_id)
    assert after.version == before.version and len(after.turns) == len(before.turns)


def test_same_thread_id_in_another_tenant_is_refused(conversation):
    owner = conversation(tenant="sepehr", user="u-1001")
    owner.say("سلام")
    reply = owner.stack.run_turn(owner.payload("سلام", tenant_id="kavir"))
    assert reply["error"] == "thread_not_owned"


def test_replayed_turn_returns_the_recorded_reply_and_writes_nothing(conversation):
    chat = conversation()
    payload = chat.payload("سلام، وقت بخیر")
    first = chat.stack.run_turn(payload)
    before = _threads_item(chat.thread_id)
    again = chat.stack.run_turn(payload)
    assert again == first
    after = _threads_item(chat.thread_id)
    assert after.version == before.version and len(after.turns) == 1


def test_refused_turns_never_show_internal_text(stack):
    reply = stack.run_turn(_valid(message=""))
    assert reply["message"] and "error" not in reply["message"].lower()
