"""load_memory detects the turn's language once, and a refusal still speaks the message's language."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from insurance_agent.models.state import TurnState
from insurance_agent.nodes import load_memory
from insurance_agent.store import handoffs, profiles, threads, turns

TURN = {"thread_id": "t-1", "turn_id": "turn-1", "user_id": "u-1", "tenant_id": "sepehr",
        "message": "What does my travel insurance cover?"}


@pytest.fixture
def detections(monkeypatch):
    """A new thread in empty stores; every language detection load_memory makes, recorded."""
    monkeypatch.setattr(threads, "get_thread", lambda thread_id: None)
    monkeypatch.setattr(handoffs, "get", lambda thread_id: None)
    monkeypatch.setattr(turns, "get_meta", lambda turn_id: None)
    monkeypatch.setattr(turns, "put_parts", lambda *args, **kwargs: None)
    monkeypatch.setattr(profiles, "get_profile", lambda tenant_id, user_id: SimpleNamespace(public=dict))
    calls = []
    original = load_memory.turn_language

    def counted(*args, **kwargs):
        calls.append(args)
        return original(*args, **kwargs)

    monkeypatch.setattr(load_memory, "turn_language", counted)
    return calls


def test_an_admitted_turn_detects_its_language_once(detections):
    state = load_memory.run(TurnState(input=dict(TURN)))
    assert state.reply is None and state.turn is not None
    assert state.language == "en" and len(detections) == 1


def test_a_refused_turn_is_refused_in_the_language_of_its_message(detections):
    state = load_memory.run(TurnState(input=TURN | {"roles": ["root"]}))
    assert state.reply is not None and state.reply.error == "invalid_input"
    assert state.reply.language == "en" and len(detections) == 1
