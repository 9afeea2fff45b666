"""triage: classify the turn; deterministic policy (hand-off words, restricted intents,
frustration) is applied first and on top of the model, then an answer to our own clarifying
question; the tenant's corpus (as the caller may read it) tells the model what is in scope."""

from __future__ import annotations

import logging

from insurance_agent.models.roles import Intent, TriageRequest
from insurance_agent.models.state import TurnState
from insurance_agent.models.turn import TurnInput
from insurance_agent.nodes.common import parts
from insurance_agent.observability import emit
from insurance_agent.policy.escalation import load_policy
from insurance_agent.policy.routing import analyse_message, combine
from insurance_agent.roles.base import get_provider

logger = logging.getLogger(__name__)

# Loaded and validated at cold start: a bad policy file fails the deployment's first invocation
# loudly (an init error) instead of quietly letting restricted intents through.
load_policy()


def corpus_context(turn: TurnInput) -> tuple[list[str], bool | None]:
    """(the topics of the caller's readable corpus, whether the message's words occur in it).

    Unknown (no topics, None) when the retrieval package is not deployed with this function or
    the store cannot be read: routing then falls back to the model and the domain lexicon.
    """
    try:
        from insurance_search.topics import corpus_scope

        scope = corpus_scope(turn.tenant_id, turn.roles)
    except ImportError:  # packaged without qdrant-client: a deployment choice, not a per-turn event
        return [], None
    except Exception:  # noqa: BLE001 - scope only refines routing; a store problem surfaces at retrieve
        logger.warning("corpus scope unavailable; routing without it", exc_info=True)
        return [], None
    if scope is None:
        return [], None
    return list(scope.topics), scope.covers(turn.message)


def run(state: TurnState) -> TurnState:
    turn = state.require_turn()
    history = parts(state).history
    policy = load_policy()
    # Analysed once here, with the language load_memory detected, and handed to the provider.
    analysis = analyse_message(turn.message, history, policy, state.language, state.mixed_language)
    signals = analysis.signals

    if not signals.any and analysis.picks_option:
        # Picking one of the options we offered continues the knowledge question; no model needed.
        # Only when the policy has nothing to say: "cancel the third-party one" names an option too.
        state.route = Intent.KNOWLEDGE.value
        return state

    topics, in_corpus = corpus_context(turn)
    request = TriageRequest(
        message=turn.message, history=history, locale=turn.locale, corpus_topics=topics, in_corpus=in_corpus,
        analysis=analysis,
    )
    result = get_provider().triage(request)
    state.counters.llm_calls += 1
    state.language, state.mixed_language = result.language, result.mixed_language
    decision = combine(result, signals)
    state.route = decision.route
    state.triage.restricted = decision.restricted_category is not None
    state.triage.restricted_category = decision.restricted_category
    state.triage.frustration = decision.frustration
    emit("Routes", Route=state.route or "none")
    return state
