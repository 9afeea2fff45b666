"""grade: is the retrieved evidence sufficient, ambiguous (distinct products) or insufficient?

Two verdicts need no model call: no chunks at all (insufficient), and a decisive top hit (sufficient;
policy/decisive.py: far ahead of every other document and lexically covering the whole query).
"""

from __future__ import annotations

from insurance_agent.config import get_settings
from insurance_agent.models.parts import GradeDetail
from insurance_agent.models.roles import ChunkRelevance, GradeRequest, GradeVerdict
from insurance_agent.models.state import TurnState
from insurance_agent.nodes.common import parts, save
from insurance_agent.observability import emit, metrics
from insurance_agent.policy.decisive import decisive_top_hit
from insurance_agent.policy.options import clarify_options
from insurance_agent.roles.base import get_provider


def run(state: TurnState) -> TurnState:
    stored = parts(state)
    chunks = stored.chunks
    query = stored.query
    if not chunks:
        verdict = GradeVerdict.INSUFFICIENT  # nothing to judge: no model call needed
        relevance = []
    elif decisive_top_hit(query, chunks, get_settings().policy.grade_decisive_margin):
        verdict = GradeVerdict.SUFFICIENT
        top = max(chunks, key=lambda chunk: chunk.score)
        relevance = [ChunkRelevance(chunk_id=top.chunk_id, relevant=True, score=1.0)]
        metrics.add_metric(name="GradeShortcut", unit="Count", value=1)
    else:
        result = get_provider().grade(GradeRequest(query=query, chunks=chunks))
        state.counters.llm_calls += 1
        verdict, relevance = result.verdict, result.relevance
    options = clarify_options(chunks, state.language) if verdict == GradeVerdict.AMBIGUOUS else []
    if verdict == GradeVerdict.AMBIGUOUS and len(options) < 2:
        # A clarifying question needs at least two real documents to choose between.
        verdict = GradeVerdict.SUFFICIENT
    state.grade = verdict.value
    save(state, grade=GradeDetail(verdict=verdict, relevance=relevance), options=options)
    emit("Verdicts", Node="grade", Verdict=verdict.value)
    return state
