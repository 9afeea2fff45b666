"""account: the authenticated user's own policies as evidence (identity from the execution input only).

A user with no policy on record has nothing of their own to look up: "what happens to my money if
my insurer goes bankrupt?" is then a question for the documents. The turn becomes a
knowledge turn, and the graph rewrites the question (translation, written forms) before its search.
"""

from __future__ import annotations

from insurance_agent.models.roles import Intent
from insurance_agent.models.scope import Scope
from insurance_agent.models.state import TurnState
from insurance_agent.nodes.common import save
from insurance_agent.store.accounts import get_accounts_source, policy_evidence


def run(state: TurnState) -> TurnState:
    turn = state.require_turn()
    records = get_accounts_source().policies(turn.tenant_id, turn.user_id)
    if not records:
        state.route = Intent.KNOWLEDGE.value
        return state
    evidence = policy_evidence(records, state.language)
    save(state, account_chunks=evidence, query=turn.message, scope=Scope())
    return state
