"""retrieve: the hybrid Qdrant query with tenant, audience and domain filters applied server-side."""

from __future__ import annotations

from insurance_agent.models.state import TurnState
from insurance_agent.nodes.common import parts, save
from insurance_agent.observability import metrics
from insurance_search.search import search


def run(state: TurnState) -> TurnState:
    turn = state.require_turn()
    stored = parts(state)
    query = stored.query
    scope = stored.scope
    # The backend's domain, when set, always wins over anything inferred from the conversation.
    domain = turn.domain or scope.first_domain
    hits = search(query, tenant_id=turn.tenant_id, roles=turn.roles, domain=domain, scope=scope)
    chunks = stored.account_chunks + hits
    save(state, chunks=chunks)
    metrics.add_metric(name="RetrievedChunks", unit="Count", value=len(chunks))
    return state
