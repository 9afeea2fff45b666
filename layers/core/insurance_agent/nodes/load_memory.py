"""load_memory: admit the turn (validate, ownership, replay, hand-off latch) and snapshot its context.

It is the graph's first state and receives the execution input exactly as sent, so that nothing
copies an over-sized or malformed input around before it is checked: every problem becomes a
`refused`/`invalid_input` reply naming the field, with no model call and no write. The input
is dropped from the execution state once admitted (the validated `turn` replaces it).
"""

from __future__ import annotations

from typing import Any

from insurance_agent.config import get_settings
from insurance_agent.errors import InvalidInputError
from insurance_agent.models.state import TurnState
from insurance_agent.models.turn import (
    MAX_MESSAGE_CHARS,
    LOCALE_PATTERN,
    InputProblem,
    RefusalCode,
    Status,
    TurnReply,
    parse_turn_input,
)
from insurance_agent.nodes import messages
from insurance_agent.nodes.common import with_trace
from insurance_agent.observability import logger
from insurance_agent.store import profiles, threads, turns
from insurance_agent.store.turns import TurnOwner
from insurance_agent.text import turn_language


def _refuse(state: TurnState, code: RefusalCode, problem: InputProblem | None = None) -> TurnState:
    reply = TurnReply(status=Status.REFUSED, message=messages.refusal(code, state.language), error=code)
    if problem is not None:
        reply = reply.model_copy(update={"field": problem.field, "problem": problem.problem})
    state.reply = with_trace(state, reply)
    state.input = {}
    state.turn = None
    return state


def _refusal_language(raw: Any) -> str:
    """The language to refuse in, guessed only from a plausible message and locale."""
    if not isinstance(raw, dict):
        return "fa"
    message, locale = raw.get("message"), raw.get("locale")
    if not isinstance(message, str) or not message.strip() or len(message) > MAX_MESSAGE_CHARS:
        return "fa"
    locale = locale if isinstance(locale, str) and LOCALE_PATTERN.match(locale) else None
    # A lone surrogate cannot be analysed as text; the default language is as good an answer.
    message = message.encode("utf-8", "replace").decode("utf-8")
    return turn_language(message, locale).language


def run(state: TurnState) -> TurnState:
    state.language = _refusal_language(state.input)
    parsed = parse_turn_input(state.input)
    if isinstance(parsed, InputProblem):
        logger.warning("invalid turn input", extra={"field": parsed.field, "problem": parsed.problem})
        return _refuse(state, RefusalCode.INVALID_INPUT, parsed)
    turn = parsed
    owner = TurnOwner(tenant_id=turn.tenant_id, user_id=turn.user_id, roles=turn.roles)

    thread = threads.get_thread(turn.thread_id)
    if thread is not None and not thread.owned_by(turn.tenant_id, turn.user_id):
        logger.warning("thread owned by another user")
        return _refuse(state, RefusalCode.THREAD_NOT_OWNED)
    record = turns.get_meta(turn.turn_id)
    if record is not None and not record.owned_by(turn.thread_id, owner):
        # Same turn_id from another thread, user, tenant or role set: never replay, never re-run.
        logger.warning("turn_id belongs to another caller")
        return _refuse(state, RefusalCode.TURN_NOT_OWNED)
    committed = (record is not None and record.committed) or (thread is not None and turn.turn_id in thread.turn_ids)
    if committed:
        # A re-run of a committed turn returns the recorded reply and changes nothing.
        stored = turns.get_parts(turn.turn_id, turn.thread_id).get("reply")
        if stored:
            state.reply = TurnReply.model_validate(stored)
            state.input = {}
            return state
        return _refuse(state, RefusalCode.DUPLICATE_TURN)
    if thread is not None and thread.status == "handed_off":
        return _refuse(state, RefusalCode.THREAD_HANDED_OFF)

    state.turn = turn
    state.input = {}
    state.counters.clarifications = thread.clarify_count if thread else 0
    history = thread.history(get_settings().recent_turns) if thread else []
    language = turn_language(turn.message, turn.locale, history[-1].language if history else None)
    state.language, state.mixed_language = language.language, language.mixed
    profile = profiles.get_profile(turn.tenant_id, turn.user_id)
    try:
        turns.put_parts(turn.turn_id, turn.thread_id, owner=owner,
                        history=[h.model_dump() for h in history], profile=profile.public())
    except InvalidInputError:
        # Lost a race with another caller creating the same turn_id.
        logger.warning("turn_id taken by another caller meanwhile")
        return _refuse(state, RefusalCode.TURN_NOT_OWNED)
    return state
