"""load_memory: admit the turn (validate, ownership, replay, hand-off latch) and snapshot its context.

A pending hand-off (store/handoffs.py: Escalate told the user a person takes over but could not
latch the thread) is latched here first, so the thread's next turn is refused `thread_handed_off`.

It is the graph's first state and receives the execution input exactly as sent, so that nothing
copies an over-sized or malformed input around before it is checked: every problem becomes a
`refused`/`invalid_input` reply naming the field, with no model call and no write. The input
is dropped from the execution state once admitted (the validated `turn` replaces it).
"""

from __future__ import annotations

from typing import Any

from insurance_agent.config import get_settings
from insurance_agent.errors import InvalidInputError, ThreadNotOwnedError, TransientError
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
from insurance_agent.store import handoffs, profiles, threads, turns
from insurance_agent.store.dynamo import STORE_ERRORS
from insurance_agent.store.threads import TurnEntry
from insurance_agent.store.turns import TurnOwner
from insurance_agent.text import turn_language


def _refuse(state: TurnState, code: RefusalCode, problem: InputProblem | None = None) -> TurnState:
    if state.turn is None:  # not admitted: no language detected yet
        state.language = _refusal_language(state.input)
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


def _latch_pending(pending: handoffs.PendingHandoff) -> threads.ThreadRecord | None:
    """Apply a pending hand-off to its thread as Escalate would have; None when the store refused.

    Either way the thread counts as handed off: the marker stays until the latch lands.
    """

    def latch(record: threads.ThreadRecord) -> None:
        record.hand_off(pending.reason, TurnEntry(turn_id=pending.turn_id, message=pending.message,
                                                  reply=pending.reply, status="escalate", query=pending.query,
                                                  language=pending.language, at=pending.at))

    try:
        record = threads.update_thread(thread_id=pending.thread_id, tenant_id=pending.tenant_id,
                                       user_id=pending.user_id, turn_id=pending.turn_id, mutate=latch,
                                       allow_handed_off=True)
    except ThreadNotOwnedError:
        # The thread is someone else's: the marker cannot be about it (never written so); drop it.
        try:
            handoffs.clear(pending.thread_id, pending.turn_id)
        except (TransientError, *STORE_ERRORS):
            pass
        return threads.get_thread(pending.thread_id)
    except (TransientError, *STORE_ERRORS):
        logger.warning("pending hand-off not latched yet; the turn is refused as handed off")
        return None
    logger.warning("latched a pending hand-off", extra={"handoff_turn_id": pending.turn_id})
    try:
        turns.mark_committed(pending.turn_id, pending.thread_id)
        handoffs.clear(pending.thread_id, pending.turn_id)
    except (TransientError, InvalidInputError, *STORE_ERRORS):
        logger.warning("pending hand-off latched; its turn record or marker not updated")
    return record


def run(state: TurnState) -> TurnState:
    # The language is detected once per turn: here, with the thread's last language for a tie, once the
    # turn is admitted; a refusal or a replay guesses it from the raw input instead (`_refusal_language`).
    parsed = parse_turn_input(state.input)
    if isinstance(parsed, InputProblem):
        logger.warning("invalid turn input", extra={"field": parsed.field, "problem": parsed.problem})
        return _refuse(state, RefusalCode.INVALID_INPUT, parsed)
    turn = parsed
    owner = TurnOwner(tenant_id=turn.tenant_id, user_id=turn.user_id, roles=turn.roles)

    thread = threads.get_thread(turn.thread_id)
    pending = handoffs.get(turn.thread_id) if thread is None or thread.status != "handed_off" else None
    if pending is not None and pending.applies_to(thread):
        # A hand-off the user was told about whose thread write failed (EscalateFallback): latch now.
        latched = _latch_pending(pending)
        if latched is None:
            code = (RefusalCode.THREAD_HANDED_OFF if (pending.tenant_id, pending.user_id) == (turn.tenant_id, turn.user_id)
                    else RefusalCode.THREAD_NOT_OWNED)
            return _refuse(state, code)
        thread = latched
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
        stored = turns.load_parts(turn.turn_id, turn.thread_id, turn.message).reply
        if stored:
            state.reply = stored
            state.language = _refusal_language(state.input)
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
                        history=history, profile=profile.public())
    except InvalidInputError:
        # Lost a race with another caller creating the same turn_id.
        logger.warning("turn_id taken by another caller meanwhile")
        return _refuse(state, RefusalCode.TURN_NOT_OWNED)
    return state
