"""contextualize: rewrite the turn into a standalone retrieval query (the user's text is kept as is).

A later retrieval round (after an insufficient grade) must search something new: the provider is
asked for a different query (attempt, previous_query), and when its query adds no term to the one
already searched the turn is marked `rewrite_exhausted` and the graph escalates without searching
again. A first turn in the corpus language needs no model: its second round is `lexical.broaden`.
"""

from __future__ import annotations

from insurance_agent.config import get_settings
from insurance_agent.models.roles import ContextualizeRequest
from insurance_agent.models.scope import Scope
from insurance_agent.models.state import TurnState
from insurance_agent.nodes.common import parts, save
from insurance_agent.policy.clarification import pick_option
from insurance_agent.policy.terms import adds_terms
from insurance_agent.roles.base import get_provider


def run(state: TurnState) -> TurnState:
    turn = state.require_turn()
    stored = parts(state)
    history = stored.history
    last = history[-1] if history else None

    picked = pick_option(turn.message, last.options) if last and last.status == "clarify" else None
    if picked is not None:
        # The user chose one of our grounded options: same question, retrieval scoped to that document
        # (or to that one passage, when the options were passages).
        save(state, query=last.query or last.message, scope=Scope(
            file_id=picked.file_id or None, domain=picked.domain or None, chunk_id=picked.chunk_id or None))
        return state

    def ask(**round_fields):
        """One model call of the contextualize role, counted against the turn's budget."""
        result = get_provider().contextualize(ContextualizeRequest(
            message=turn.message, history=history, profile=stored.profile,
            language=state.language, mixed_language=state.mixed_language, **round_fields))
        state.counters.llm_calls += 1
        return result

    rounds = state.counters.retrieval_rounds
    direct = not history and state.language == get_settings().corpus_language and not state.mixed_language
    if rounds > 0:
        previous = stored.query
        query = get_provider().broadened_query(previous) if direct else None
        if query is None:
            query = ask(attempt=rounds, previous_query=previous).standalone_query
        if not adds_terms(query, previous):
            state.rewrite_exhausted = True
            return state
        # broader, not the same: no scope either
        save(state, query=query, scope=Scope())
        return state

    query = get_provider().first_turn_query(turn.message) if direct else None
    if query is not None:
        save(state, query=query, scope=Scope())
        return state

    result = ask()
    save(state, query=result.standalone_query, scope=result.scope)
    return state
