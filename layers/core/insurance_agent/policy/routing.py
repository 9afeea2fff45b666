"""The deterministic policy of a turn's route, applied on top of any provider's triage.

Policy comes before everything else, including the pick of a clarifying question's option: «شخص
ثالث رو فسخ کنید» after «which policy: 1. third-party 2. car body?» names an option, but it asks us
to cancel a policy, so it escalates `restricted_intent` exactly as it would on a fresh thread.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from insurance_agent.models.roles import HistoryTurn, Intent, MessageAnalysis, PolicySignals, TriageResult
from insurance_agent.policy.clarification import pick_option
from insurance_agent.policy.escalation import EscalationPolicy
from insurance_agent.policy.frustration import is_frustrated
from insurance_agent.models.turn import Language
from insurance_agent.text import normalize


def policy_signals(message: str, previous_user_messages: Sequence[str], policy: EscalationPolicy) -> PolicySignals:
    """Every policy check on the message, which is normalised once for all of them."""
    text = normalize(message)
    return PolicySignals(
        restricted_category=policy.restricted_category(text),
        handoff=policy.asks_for_human(text),
        frustrated=is_frustrated(text, [normalize(m) for m in previous_user_messages], policy),
    )


def analyse_message(
    message: str, history: Sequence[HistoryTurn], policy: EscalationPolicy, language: Language, mixed_language: bool
) -> MessageAnalysis:
    """The readings of a message that routing needs, each taken once: normalised text, the turn's
    `language` (already detected, by load_memory), the policy signals over the last three user
    messages and the pick of an option of our previous clarifying question."""
    text = normalize(message)
    last = history[-1] if history else None
    picks = last is not None and last.status == "clarify" and pick_option(message, last.options) is not None
    return MessageAnalysis(
        normalized=text,
        language=language,
        mixed_language=mixed_language,
        signals=policy_signals(text, [turn.message for turn in history[-3:]], policy),
        picks_option=picks,
    )


@dataclass(frozen=True)
class Route:
    route: str
    restricted_category: str | None
    frustration: bool


def combine(result: TriageResult, signals: PolicySignals) -> Route:
    """The model's triage with the policy as its floor: the lexicons can add an escalation, never remove one."""
    route = Intent.HANDOFF_REQUEST.value if signals.handoff else result.intent.value
    category = signals.restricted_category or (
        (result.restricted_category or "unspecified") if result.restricted else None
    )
    return Route(route=route, restricted_category=category, frustration=result.frustration or signals.frustrated)
