"""contextualize: rewrite the turn into a standalone retrieval query (the user's text is kept as is)."""

from __future__ import annotations

from insurance_agent.config import get_settings
from insurance_agent.models.roles import ContextualizeRequest, HistoryTurn
from insurance_agent.models.state import TurnState
from insurance_agent.nodes.common import parts, save
from insurance_agent.policy.clarification import pick_option
from insurance_agent.roles.base import get_provider


def run(state: TurnState) -> TurnState:
    turn = state.require_turn()
    stored = parts(state)
    history = [HistoryTurn.model_validate(h) for h in stored.get("history", [])]
    last = history[-1] if history else None

    picked = pick_option(turn.message, last.options) if last and last.status == "clarify" else None
    if picked is not None:
        # The user chose one of our grounded options: same question, retrieval scoped to that document.
        scope = {k: v for k, v in {"file_id": picked.file_id, "domain": picked.domain}.items() if v}
        save(state, query=last.query or last.message, scope=scope)
        return state

    if not history and state.language == get_settings().corpus_language and not state.mixed_language:
        # Deterministic shortcut: a first turn wholly in the corpus language has nothing to resolve or translate.
        save(state, query=turn.message, scope={})
        return state

    result = get_provider().contextualize(
        ContextualizeRequest(
            message=turn.message,
            history=history,
            profile=stored.get("profile", {}),
            language=state.language,
            mixed_language=state.mixed_language,
        )
    )
    state.counters.llm_calls += 1
    # A second round after an insufficient one searches without the previous scope: broader, not the same.
    scope = result.scope if state.counters.retrieval_rounds == 0 else {}
    save(state, query=result.standalone_query, scope=scope)
    return state
