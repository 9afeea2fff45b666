"""load_memory: admit the turn (validate, ownership, hand-off latch) and snapshot its context."""

from __future__ import annotations

from pydantic import ValidationError

from insurance_agent.config import get_settings
from insurance_agent.errors import InvalidInputError
from insurance_agent.models.state import TurnState
from insurance_agent.models.turn import RefusalCode, Status, TurnInput, TurnReply
from insurance_agent.nodes import messages
from insurance_agent.nodes.common import save, with_trace
from insurance_agent.observability import logger
from insurance_agent.store import profiles, threads, turns
from insurance_agent.text import turn_language


def _refuse(state: TurnState, code: RefusalCode) -> TurnState:
    state.reply = with_trace(
        state,
        TurnReply(status=Status.REFUSED, message=messages.refusal(code, state.language), error=code),
    )
    return state


def run(state: TurnState) -> TurnState:
    raw = state.input if isinstance(state.input, dict) else {}
    raw_message, raw_locale = raw.get("message"), raw.get("locale")
    if isinstance(raw_message, str) and raw_message.strip():
        state.language = turn_language(raw_message, raw_locale if isinstance(raw_locale, str) else None).language
    try:
        turn = TurnInput.model_validate(state.input)
    except ValidationError as error:
        logger.warning("invalid turn input", extra={"fields": [".".join(map(str, e["loc"])) for e in error.errors()]})
        return _refuse(state, RefusalCode.INVALID_INPUT)

    thread = threads.get_thread(turn.thread_id)
    if thread is not None:
        if not thread.owned_by(turn.tenant_id, turn.user_id):
            logger.warning("thread owned by another user")
            return _refuse(state, RefusalCode.THREAD_NOT_OWNED)
        if turn.turn_id in thread.turn_ids:
            # A re-run of a committed turn returns the recorded reply and changes nothing.
            stored = turns.get_parts(turn.turn_id, turn.thread_id).get("reply")
            if stored:
                state.reply = TurnReply.model_validate(stored)
                return state
            return _refuse(state, RefusalCode.DUPLICATE_TURN)
        if thread.status == "handed_off":
            return _refuse(state, RefusalCode.THREAD_HANDED_OFF)

    state.turn = turn
    state.counters.clarifications = thread.clarify_count if thread else 0
    history = thread.history(get_settings().recent_turns) if thread else []
    language = turn_language(turn.message, turn.locale, history[-1].language if history else None)
    state.language, state.mixed_language = language.language, language.mixed
    profile = profiles.get_profile(turn.tenant_id, turn.user_id)
    try:
        save(state, history=[h.model_dump() for h in history], profile=profile.public())
    except InvalidInputError:
        logger.warning("turn_id already used on another thread")
        state.turn = None
        return _refuse(state, RefusalCode.INVALID_INPUT)
    return state
