"""The grade shortcut: evidence so clear-cut that judging it would waste a model call.

The top hit is *decisive* when (1) its score leads every hit of another document or product by at
least `margin`, relative to its own score, and (2) its title, heading and text together cover every
concept of the query (policy/terms.py: the configured provider's word analysis). When another
product scores close to the top, the evidence may be the ambiguity case (which product does the
user mean?), so the shortcut never applies there: the grade role judges it.

Scores must be positive and comparable within one retrieval (RRF, cosine, late-interaction all
are); the margin's scale depends on the pipeline, hence configuration (GRADE_DECISIVE_MARGIN).
"""

from __future__ import annotations

from collections.abc import Sequence

from insurance_agent.models.chunks import RetrievedChunk
from insurance_agent.policy.terms import metadata_text, terms


def _document(chunk: RetrievedChunk) -> str:
    return chunk.product or chunk.file_id


def decisive_top_hit(query: str, chunks: Sequence[RetrievedChunk], margin: float) -> bool:
    """Whether the best chunk alone makes the evidence `sufficient` (see the module docstring)."""
    if margin <= 0 or not chunks:
        return False
    ranked = sorted(chunks, key=lambda chunk: -chunk.score)
    top = ranked[0]
    if top.score <= 0:
        return False
    rival = next((chunk for chunk in ranked[1:] if _document(chunk) != _document(top)), None)
    if rival is not None and (top.score - rival.score) / top.score < margin:
        return False
    analysis = terms()
    concepts = analysis.query_concepts(query)
    if not concepts:
        return False
    covered = analysis.text_terms(f"{metadata_text(top)}\n{top.heading or ''}\n{top.text}")
    return all(concept.covered_by(covered) for concept in concepts)
