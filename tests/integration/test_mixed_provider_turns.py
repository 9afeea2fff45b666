"""A turn through the real ASL with the roles on two providers (ROLE_PROVIDERS): the offline provider
everywhere but generate, which goes over the wire to an OpenAI-compatible server.

The server is agent_local/openai_endpoint.py on loopback, answering each request with the offline
provider's decision as a forced tool call and recording every request: the answer's request reaches
it, with the main model's name, and no other role's does.
"""

from __future__ import annotations

import pytest
from agent_harness.openai_endpoint import OpenAIEndpoint
from probes import turn_parts

pytestmark = pytest.mark.stack

KNOWLEDGE = "دوره انتظار زایمان در بیمه تکمیلی درمان چقدر است؟"
MAIN = "main-model"


def _reset_caches() -> None:
    from insurance_agent.config import get_settings
    from insurance_agent.roles import base

    get_settings.cache_clear()
    base.get_provider.cache_clear()


@pytest.fixture
def generate_over_the_wire(stack):
    patch = pytest.MonkeyPatch()
    with OpenAIEndpoint([("127.0.0.1", 0)]) as endpoint:
        for name, value in {"MODEL_PROVIDER": "offline", "ROLE_PROVIDERS": "generate:openai",
                            "OPENAI_BASE_URL": endpoint.url, "MAIN_MODEL_ID": MAIN, "SMALL_MODEL_ID": "small-model",
                            "OPENAI_STRUCTURED_OUTPUT": "function_calling"}.items():
            patch.setenv(name, value)
        _reset_caches()
        try:
            yield endpoint
        finally:
            patch.undo()
            _reset_caches()


def test_only_the_role_sent_to_the_server_goes_over_the_wire(conversation, generate_over_the_wire):
    from insurance_agent.roles.base import get_provider

    assert get_provider("generate").name == "openai" and get_provider("triage").name == "offline"
    chat = conversation()
    reply = chat.say(KNOWLEDGE)
    assert reply["status"] == "answer", reply
    assert reply["trace"]["path"][:3] == ["LoadMemory", "Triage", "Contextualize"] and "Verify" in reply["trace"]["path"]
    retrieved = {c["chunk_id"] for c in turn_parts(reply["turn_id"], chat.thread_id)["chunks"]}
    assert reply["citations"] and {c["chunk_id"] for c in reply["citations"]} <= retrieved
    assert generate_over_the_wire.wait_idle()
    calls = generate_over_the_wire.calls()
    # Every request is the drafter's, on the main model: triage, grade and verify stayed offline.
    assert calls and {(c["tool"], c["model"]) for c in calls} == {("GroundedAnswer", MAIN)}
    assert all(c["status"] == 200 for c in calls)
    assert reply["trace"]["model_invocations"] == len(calls)
