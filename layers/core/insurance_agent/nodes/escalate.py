"""escalate: the hand-off signal (reason, message, handoff_context); latches the thread as handed off.

It performs no transfer: the backend turns status=escalate into its existing human hand-off.
"""

from __future__ import annotations

from insurance_agent.errors import InvalidInputError, ThreadNotOwnedError, TransientError
from insurance_agent.models.history import HistoryTurn
from insurance_agent.models.state import TurnState
from insurance_agent.models.turn import (
    EscalationReason,
    HandoffContext,
    InputProblem,
    RefusalCode,
    Status,
    TopChunk,
    TurnInput,
    TurnReply,
    parse_turn_input,
)
from insurance_agent.nodes import messages
from insurance_agent.nodes.common import parts, with_trace
from insurance_agent.observability import logger, metrics
from insurance_agent.policy.pii import mask_pii
from insurance_agent.store import handoffs, threads, turns
from insurance_agent.store.dynamo import STORE_ERRORS
from insurance_agent.store.threads import TurnEntry

SUMMARY_CHARS = 900
# Lambda errorTypes (class names) of deployment mistakes.
CONFIGURATION_ERRORS = ("ConfigurationError", "IndexMissingError")
TOP_CHUNKS = 5


def summarize(history: list[HistoryTurn], message: str, language: str) -> str:
    """A plain, deterministic summary of the recent turns for the human who takes over."""
    user, bot = ("User", "Assistant") if language == "en" else ("کاربر", "دستیار")
    lines = []
    for turn in history[-4:]:
        lines.append(f"{user}: {turn.message[:160]}")
        if turn.reply:
            lines.append(f"{bot}: {turn.reply[:160]}")
    lines.append(f"{user}: {message[:300]}")
    text = "\n".join(lines)
    return text[-SUMMARY_CHARS:]


def _reason(state: TurnState) -> EscalationReason:
    try:
        return EscalationReason(state.escalation_reason or "system_error")
    except ValueError:
        return EscalationReason.SYSTEM_ERROR


def _record_intent(turn: TurnInput, reason: EscalationReason, reply: TurnReply, context: HandoffContext) -> None:
    """The pending-hand-off marker, before the thread write: if that write fails for good, the user is
    still told a person takes over (EscalateFallback) and the thread's next turn latches it."""
    try:
        handoffs.put(handoffs.PendingHandoff(
            thread_id=turn.thread_id, tenant_id=turn.tenant_id, user_id=turn.user_id, turn_id=turn.turn_id,
            reason=reason.value, message=turn.message, reply=reply.message, query=context.rewritten_query,
            language=reply.language, at=threads.dynamo.now()))
    except (TransientError, *STORE_ERRORS):
        # Best effort: the thread write below is the latch; this only backs it up.
        logger.warning("pending hand-off marker not written")


def run(state: TurnState) -> TurnState:
    reason = _reason(state)
    if state.error:
        error_type = state.error.get("type") or state.error.get("Error")
        if error_type == "ModelRefusedError":
            logger.warning("the model service's guardrail refused; escalating", extra={"error_type": error_type})
        else:
            logger.error("node failed; escalating", extra={"error_type": error_type})
        if error_type in CONFIGURATION_ERRORS:
            # A deployment mistake (e.g. no chunk collection), not a miss: its own metric and alarm.
            metrics.add_metric(name="ConfigurationError", unit="Count", value=1)
    owner = None
    if state.turn is None:
        # load_memory itself failed: the input is the raw execution input plus the caught error.
        raw = state.input
        if isinstance(raw, dict):
            raw = {key: value for key, value in raw.items() if key != "error"}
        parsed = parse_turn_input(raw)
        state.input = {}
        if isinstance(parsed, InputProblem):
            state.reply = with_trace(state, TurnReply(
                status=Status.REFUSED, message=messages.refusal(RefusalCode.INVALID_INPUT, state.language),
                error=RefusalCode.INVALID_INPUT, field=parsed.field, problem=parsed.problem))
            return state
        state.turn = parsed
        owner = turns.TurnOwner(tenant_id=parsed.tenant_id, user_id=parsed.user_id, roles=parsed.roles)
    turn = state.turn
    stored = parts(state)
    committed = threads.get_thread(turn.thread_id)
    if stored.reply and committed and committed.owned_by(turn.tenant_id, turn.user_id) \
            and turn.turn_id in committed.turn_ids:
        # The turn was already committed (its node failed after the write, or this node is retried):
        # the user gets what the thread records, as a replay would, not a second, different outcome.
        state.reply = stored.reply
        return state
    history = stored.history
    chunks = sorted(stored.chunks, key=lambda c: c.score, reverse=True)[:TOP_CHUNKS]
    context = HandoffContext(
        rewritten_query=mask_pii(stored.query),
        top_chunks=[TopChunk(chunk_id=c.chunk_id, score=round(c.score, 4), title=c.title) for c in chunks],
        conversation_summary=mask_pii(summarize(history, turn.message, state.language)),
        last_message=turn.message,
        user_profile=stored.profile,
    )
    reply = with_trace(state, TurnReply(
        status=Status.ESCALATE, message=messages.escalation(reason, state.language), reason=reason,
        handoff_context=context))

    def latch(record: threads.ThreadRecord) -> None:
        record.hand_off(reason.value, TurnEntry(turn_id=turn.turn_id, message=turn.message, reply=reply.message,
                                                status=reply.status.value, query=context.rewritten_query,
                                                language=reply.language, at=threads.dynamo.now()))

    try:
        turns.put_parts(turn.turn_id, turn.thread_id, owner=owner, reply=reply)
    except InvalidInputError:
        state.reply = with_trace(state, TurnReply(
            status=Status.REFUSED, message=messages.refusal(RefusalCode.TURN_NOT_OWNED, state.language),
            error=RefusalCode.TURN_NOT_OWNED))
        return state
    if committed is None or committed.owned_by(turn.tenant_id, turn.user_id):
        _record_intent(turn, reason, reply, context)
    try:
        threads.update_thread(thread_id=turn.thread_id, tenant_id=turn.tenant_id, user_id=turn.user_id,
                              turn_id=turn.turn_id, mutate=latch, allow_handed_off=True)
    except ThreadNotOwnedError:
        state.reply = with_trace(state, TurnReply(
            status=Status.REFUSED, message=messages.refusal(RefusalCode.THREAD_NOT_OWNED, state.language),
            error=RefusalCode.THREAD_NOT_OWNED))
        return state
    turns.mark_committed(turn.turn_id, turn.thread_id)
    try:
        handoffs.clear(turn.thread_id, turn.turn_id)
    except (TransientError, *STORE_ERRORS):
        logger.warning("pending hand-off marker not cleared (its latch landed; it stays inert)")
    metrics.add_metric(name="LlmCallsPerTurn", unit="Count", value=state.counters.llm_calls)
    state.reply = reply
    return state
