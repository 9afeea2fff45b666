"""Helpers shared by the nodes: reply shaping and access to the turn's working data."""

from __future__ import annotations

from typing import Any

from insurance_agent.models.parts import TurnParts
from insurance_agent.models.state import TurnState
from insurance_agent.models.turn import Trace, TurnReply, safe_turn_id
from insurance_agent.store import turns


def parts(state: TurnState) -> TurnParts:
    """What the turn's earlier nodes stored (the query defaults to the message)."""
    turn = state.require_turn()
    return turns.load_parts(turn.turn_id, turn.thread_id, turn.message)


def save(state: TurnState, **values: Any) -> None:
    """Store the given parts of the turn, each a value of its TurnParts type (models, not dicts)."""
    turn = state.require_turn()
    turns.put_parts(turn.turn_id, turn.thread_id, **values)


def with_trace(state: TurnState, reply: TurnReply) -> TurnReply:
    """The reply with the turn id and the path the execution took through the graph."""
    # An unvalidated turn_id is echoed only when it is a valid id (never markup or control text).
    turn_id = state.turn.turn_id if state.turn else safe_turn_id(state.input)
    return reply.model_copy(
        update={
            "turn_id": turn_id,
            "language": state.language if state.language in ("fa", "en") else "fa",
            "trace": Trace(
                path=list(state.trace.path),
                llm_calls=state.counters.llm_calls,
                retrieval_rounds=state.counters.retrieval_rounds,
                model_invocations=state.model_invocations,
            ),
        }
    )
