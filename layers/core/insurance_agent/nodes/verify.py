"""verify: are the draft's claims supported by the chunks they cite (at least VERIFY_MIN_SUPPORT of them)?"""

from __future__ import annotations

from insurance_agent.config import get_settings
from insurance_agent.models.parts import VerifyDetail
from insurance_agent.models.roles import VerifyRequest
from insurance_agent.models.state import TurnState
from insurance_agent.models.turn import Citation, Status, TurnReply
from insurance_agent.nodes.common import parts, save, with_trace
from insurance_agent.observability import emit
from insurance_agent.roles.base import get_provider


def run(state: TurnState) -> TurnState:
    stored = parts(state)
    draft = stored.draft
    if draft is None:
        raise RuntimeError("verify reached without a draft")
    result, violations = draft.result, draft.violations
    chunks = stored.chunks
    by_id = {c.chunk_id: c for c in chunks}
    cited = [by_id[i] for i in dict.fromkeys(result.citations) if i in by_id]

    unsupported: list[str] = []
    if not violations:
        verdict = get_provider().verify(
            VerifyRequest(
                answer=result.answer,
                claims=result.claims,
                chunks=cited,
                calculations=result.calculations,
                min_support=get_settings().policy.verify_min_support,
                question=stored.query,
            )
        )
        state.counters.llm_calls += 1
        unsupported = verdict.unsupported_claims
        grounded = verdict.grounded and bool(cited)
        state.verify.support = verdict.support
    else:
        grounded = False  # a guard already failed: no model call can make this draft safe
        state.verify.support = None
    state.verify.grounded = grounded
    emit("Verdicts", Node="verify", Verdict="grounded" if grounded else "ungrounded")
    if grounded:
        citations = [Citation(chunk_id=c.chunk_id, file_id=c.file_id, title=c.title) for c in cited]
        state.reply = with_trace(state, TurnReply(status=Status.ANSWER, message=result.answer, citations=citations))
    else:
        drafts = stored.drafts
        if not violations:  # the guards passed it and the verify role did not
            drafts.reject_latest("verify")
        save(state, verify=VerifyDetail(grounded=False, unsupported=unsupported, violations=violations),
             feedback=unsupported + violations, drafts=drafts)
    return state
