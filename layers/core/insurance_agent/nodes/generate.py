"""generate: answer from the retrieved chunks only, or a chitchat / out-of-scope reply (no retrieval).

The money calculator runs here on the calculations the draft requested (their results replace the
draft's placeholders), then the deterministic guards (citations retrieved this turn, numbers present
in cited chunks or calculator results, calculations whose operands are in their chunks) run for
every provider; their violations make the draft ungrounded at verify. Each draft of the turn is
logged in its parts (`drafts`: answered or not, and the guards that rejected it) for operations and
the evaluation.
"""

from __future__ import annotations

from insurance_agent.models.parts import Draft
from insurance_agent.models.roles import GenerateRequest, Intent
from insurance_agent.models.state import TurnState
from insurance_agent.models.turn import Status, TurnReply
from insurance_agent.nodes import messages
from insurance_agent.nodes.common import parts, save, with_trace
from insurance_agent.policy.guards import check_draft, guards_of
from insurance_agent.policy.money import apply_calculations
from insurance_agent.roles.base import get_provider
from insurance_agent.text import numbers_in

_NO_RETRIEVAL = (Intent.CHITCHAT, Intent.OUT_OF_SCOPE)


def run(state: TurnState) -> TurnState:
    turn = state.require_turn()
    route = Intent(state.route or Intent.KNOWLEDGE.value)
    provider = get_provider()
    if route in _NO_RETRIEVAL:
        result = provider.generate(
            GenerateRequest(route=route, message=turn.message, query=turn.message, language=state.language)
        )
        state.counters.llm_calls += 1
        message = result.answer
        if numbers_in(message) or not message.strip():
            # Small talk has no evidence, so it may state no figure (a premium, a limit) at all.
            message = messages.small_talk(route.value, state.language)
        state.generate.answered, state.generate.confidence = True, 1.0
        state.reply = with_trace(state, TurnReply(status=Status.ANSWER, message=message))
        return state

    stored = parts(state)
    chunks = stored.chunks
    result = provider.generate(
        GenerateRequest(
            route=route,
            message=turn.message,
            query=stored.query,
            chunks=chunks,
            language=state.language,
            feedback=stored.feedback,
            pinned=stored.grade.pinned if stored.grade else [],
        )
    )
    state.counters.llm_calls += 1
    violations: list[str] = []
    if result.answered:
        result = apply_calculations(result, chunks, turn.message, state.language)
        violations = check_draft(result, chunks, calculator_results=result.calculations, language=state.language,
                                 question=(turn.message, stored.query))
    answered = result.answered and bool(result.answer.strip())
    drafts = stored.drafts
    drafts.add(answered, guards_of(violations))
    save(state, draft=Draft(result=result, violations=violations), drafts=drafts)
    state.generate.answered = answered
    state.generate.confidence = result.confidence
    return state
