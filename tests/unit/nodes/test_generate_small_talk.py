"""Small talk carries no evidence: a generated small-talk reply that states a figure is never shown."""

from __future__ import annotations

import pytest

from insurance_agent.models.roles import GenerateResult
from insurance_agent.models.state import TurnState
from insurance_agent.nodes import generate


class ChattyModel:
    """Stands in for the model at its boundary: small talk that slips in a premium."""

    def __init__(self, answer: str) -> None:
        self.answer = answer

    def generate(self, request):
        return GenerateResult(answer=self.answer, answered=True, confidence=1.0)


def _state(route: str, language: str) -> TurnState:
    turn = {"thread_id": "t-1", "turn_id": "turn-1", "user_id": "u-1", "tenant_id": "sepehr", "message": "hi"}
    return TurnState.model_validate({"input": turn, "turn": turn, "route": route, "language": language})


@pytest.mark.parametrize("route", ["chitchat", "out_of_scope"])
def test_a_figure_in_small_talk_falls_back_to_the_fixed_reply(monkeypatch, route):
    monkeypatch.setattr(generate, "get_provider", lambda: ChattyModel("Hi! Our premium starts at 12,500,000 IRR."))
    state = generate.run(_state(route, "en"))
    assert "12,500,000" not in state.reply.message
    assert state.reply.status == "answer" and state.reply.citations == []


def test_plain_small_talk_is_kept(monkeypatch):
    monkeypatch.setattr(generate, "get_provider", lambda: ChattyModel("سلام! چطور می‌توانم کمک کنم؟"))
    state = generate.run(_state("chitchat", "fa"))
    assert state.reply.message == "سلام! چطور می‌توانم کمک کنم؟"
    assert state.counters.llm_calls == 1
