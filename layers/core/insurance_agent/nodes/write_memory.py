"""write_memory: commit the turn to the thread (every non-escalation reply) and, after an answer or a
clarifying question on a knowledge or account turn, remember durable non-sensitive facts the user
stated about themselves. Idempotent on turn_id."""

from __future__ import annotations

from insurance_agent.errors import ThreadHandedOffError, ThreadNotOwnedError
from insurance_agent.models.state import TurnState
from insurance_agent.models.turn import RefusalCode, Status, TurnReply
from insurance_agent.nodes import messages
from insurance_agent.nodes.common import parts, save, with_trace
from insurance_agent.observability import metrics
from insurance_agent.models.roles import DocumentLabel
from insurance_agent.policy.memory import extract_facts
from insurance_agent.store import profiles, threads, turns
from insurance_agent.store.threads import TurnEntry


def run(state: TurnState) -> TurnState:
    turn = state.require_turn()
    if state.reply is None:
        raise RuntimeError("write_memory reached without a reply")
    reply = with_trace(state, state.reply)
    stored = parts(state)
    clarified = reply.status == Status.CLARIFY
    query = stored.query
    chunks = {c.chunk_id: c for c in stored.chunks}
    cited = [chunks[c.chunk_id] for c in reply.citations if c.chunk_id in chunks]
    documents = list({
        c.file_id: DocumentLabel(file_id=c.file_id, title=c.title or "", product=c.product, domain=c.domain)
        for c in cited if c.file_id and not c.chunk_id.startswith("account:")
    }.values())[:3]

    def commit(record: threads.ThreadRecord) -> None:
        # The clarification budget counts consecutive clarifying questions; any other reply resets it.
        record.clarify_count = record.clarify_count + 1 if clarified else 0
        record.clarify_topic = (record.clarify_topic or query) if clarified else ""
        record.turns.append(TurnEntry(
            turn_id=turn.turn_id, message=turn.message, reply=reply.message, status=reply.status.value,
            query=query, language=reply.language, options=reply.options, scope=stored.scope,
            documents=documents,
            at=threads.dynamo.now()))
        record.turns = record.turns[-20:]

    # The reply is stored before the commit, so a re-run of a committed turn can always replay it.
    save(state, reply=reply)
    try:
        threads.update_thread(thread_id=turn.thread_id, tenant_id=turn.tenant_id, user_id=turn.user_id,
                              turn_id=turn.turn_id, mutate=commit)
    except (ThreadHandedOffError, ThreadNotOwnedError) as error:
        # Another turn escalated (or claimed) this thread meanwhile: its latch wins over our answer.
        code = RefusalCode.THREAD_HANDED_OFF if isinstance(error, ThreadHandedOffError) else RefusalCode.THREAD_NOT_OWNED
        state.reply = with_trace(state, TurnReply(status=Status.REFUSED, message=messages.refusal(code, state.language), error=code))
        return state

    turns.mark_committed(turn.turn_id, turn.thread_id)

    if reply.status in (Status.ANSWER, Status.CLARIFY) and state.route in ("knowledge", "account"):
        # The tenant's products: the metadata of the documents this turn retrieved (never a fixed list).
        retrieved = [c.model_dump() for c in chunks.values() if not c.chunk_id.startswith("account:")]
        facts = extract_facts(turn.message, retrieved)
        profiles.remember(turn.tenant_id, turn.user_id, turn.turn_id, facts, reply.language)
    metrics.add_metric(name="LlmCallsPerTurn", unit="Count", value=state.counters.llm_calls)
    metrics.add_metric(name="RetrievalRounds", unit="Count", value=state.counters.retrieval_rounds)
    state.reply = reply
    return state
