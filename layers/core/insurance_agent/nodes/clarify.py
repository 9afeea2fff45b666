"""clarify: a clarifying question whose options are documents retrieval really returned."""

from __future__ import annotations

from insurance_agent.models.roles import ClarifyRequest
from insurance_agent.models.state import TurnState
from insurance_agent.models.turn import Status, TurnReply
from insurance_agent.nodes.common import parts, with_trace
from insurance_agent.roles.base import get_provider


def run(state: TurnState) -> TurnState:
    turn = state.require_turn()
    stored = parts(state)
    options = stored.options
    result = get_provider().clarify(
        ClarifyRequest(
            query=stored.query,
            message=turn.message,
            chunks=stored.chunks,
            options=options,
            language=state.language,
        )
    )
    state.counters.llm_calls += 1
    state.reply = with_trace(state, TurnReply(status=Status.CLARIFY, message=result.question, options=options))
    return state
