"""triage: classify the turn; deterministic policy (hand-off words, restricted intents,
frustration, an answer to our own clarifying question) is applied on top of the model."""

from __future__ import annotations

from insurance_agent.models.roles import HistoryTurn, Intent, TriageRequest
from insurance_agent.models.state import TurnState
from insurance_agent.nodes.common import parts
from insurance_agent.observability import emit
from insurance_agent.policy.clarification import pick_option
from insurance_agent.policy.escalation import load_policy
from insurance_agent.policy.frustration import is_frustrated
from insurance_agent.roles.base import get_provider

# Loaded and validated at cold start: a bad policy file fails the deployment's first invocation
# loudly (an init error) instead of quietly letting restricted intents through.
load_policy()


def run(state: TurnState) -> TurnState:
    turn = state.require_turn()
    history = [HistoryTurn.model_validate(h) for h in parts(state).get("history", [])]
    policy = load_policy()

    last = history[-1] if history else None
    if last and last.status == "clarify" and pick_option(turn.message, last.options):
        # Picking one of the options we offered continues the knowledge question; no model needed.
        state.route = Intent.KNOWLEDGE.value
        return state

    result = get_provider().triage(TriageRequest(message=turn.message, history=history, locale=turn.locale))
    state.counters.llm_calls += 1
    state.language, state.mixed_language = result.language, result.mixed_language
    state.route = result.intent.value
    if policy.asks_for_human(turn.message):
        state.route = Intent.HANDOFF_REQUEST.value
    # The policy's lexicon is the floor; a model that calls the intent restricted escalates it too.
    category = policy.restricted_category(turn.message) or (
        (result.restricted_category or "unspecified") if result.restricted else None
    )
    state.triage.restricted = category is not None
    state.triage.restricted_category = category
    previous = [h.message for h in history[-3:]]
    state.triage.frustration = result.frustration or is_frustrated(turn.message, previous)
    emit("Routes", Route=state.route or "none")
    return state
