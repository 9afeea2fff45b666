"""grade: is the retrieved evidence sufficient, ambiguous (distinct products) or insufficient?

Two verdicts need no model call: no chunks at all (insufficient), and a decisive top hit (sufficient;
policy/decisive.py: far ahead of every other document and lexically covering the whole query).
The passages the question is pinned to by structure (policy/provisions.py: the user's pick of a
passage, or a provision named by number) go to the provider and, with the verdict, to generate. An
ambiguous verdict asks the user to choose between documents, or between the passages found relevant.
When the drafter (generate's provider) cannot read, no shortcut sends it a question pinned to nothing.
"""

from __future__ import annotations

from insurance_agent.config import get_settings
from insurance_agent.models.chunks import RetrievedChunk
from insurance_agent.models.parts import GradeDetail
from insurance_agent.models.roles import ChunkRelevance, GradeRequest, GradeVerdict
from insurance_agent.models.state import TurnState
from insurance_agent.nodes.common import parts, save
from insurance_agent.observability import emit, metrics
from insurance_agent.policy.decisive import decisive_top_hit
from insurance_agent.models.turn import ClarifyOption
from insurance_agent.policy.options import clarify_options, passage_options
from insurance_agent.policy.provisions import numbered_chunks, pinned_chunks
from insurance_agent.roles.base import drafter_reads, get_provider


def run(state: TurnState) -> TurnState:
    stored = parts(state)
    chunks = stored.chunks
    query = stored.query
    pinned = pinned_chunks(query, chunks, stored.scope)
    reads = drafter_reads()
    choose = "documents"
    if not chunks:
        verdict = GradeVerdict.INSUFFICIENT  # nothing to judge: no model call needed
        relevance = []
    elif not pinned and reads and decisive_top_hit(query, chunks, get_settings().policy.grade_decisive_margin):
        verdict = GradeVerdict.SUFFICIENT
        top = max(chunks, key=lambda chunk: chunk.score)
        relevance = [ChunkRelevance(chunk_id=top.chunk_id, relevant=True, score=1.0)]
        metrics.add_metric(name="GradeShortcut", unit="Count", value=1)
    else:
        result = get_provider().grade(GradeRequest(query=query, chunks=chunks, pinned=pinned, drafter_reads=reads,
                                                   numbered=[] if pinned else numbered_chunks(query, chunks)))
        state.counters.llm_calls += 1
        verdict, relevance, choose = result.verdict, result.relevance, result.choose
    options = _options(verdict, choose, chunks, relevance, state.language)
    if verdict == GradeVerdict.AMBIGUOUS and len(options) < (1 if choose == "passages" else 2):
        # A clarifying question needs two real documents to choose between; one passage may be
        # offered alone ("is this your case?"): a provider that cannot read must not quote it unasked.
        verdict = GradeVerdict.SUFFICIENT
    state.grade = verdict.value
    save(state, grade=GradeDetail(verdict=verdict, relevance=relevance, pinned=pinned), options=options)
    emit("Verdicts", Node="grade", Verdict=verdict.value)
    return state


def _options(verdict: GradeVerdict, choose: str, chunks: list[RetrievedChunk], relevance: list[ChunkRelevance],
             language: str) -> list[ClarifyOption]:
    if verdict != GradeVerdict.AMBIGUOUS:
        return []
    if choose == "passages":
        return passage_options(chunks, [judged.chunk_id for judged in relevance if judged.relevant], language)
    return clarify_options(chunks, language)
