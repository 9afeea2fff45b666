"""Local grade: score and metadata-spread heuristics over the reranked chunks (ADR-0006 allows it).

- Per chunk, relevance is the lexical coverage of the query's concepts by the chunk (title and
  text), weighted IDF-like across the retrieved chunks; a chunk is relevant when its coverage
  reaches `min_coverage`, or when a retrieval-score floor is configured and its score reaches it.
- insufficient: no chunks, or the best chunk's coverage and its score are both too low.
- ambiguous: the query names no product or line of insurance, and the close top hits (score within
  `margin` of the best, relative to the best) that are relevant, and that cover the query nearly as
  well as the best of them (`coverage_ratio`), span two or more distinct products (files when a
  chunk has no product). A document that matches half of the question's words is not a reading of
  it that the user must choose between, when another document matches all of them.
- sufficient otherwise.

The retrieval score's scale depends on the pipeline (RRF fusion, cosine, late-interaction), so the
score floor is optional: with `min_score=None` only lexical coverage decides sufficiency.

Without a model nothing can tell which of several relevant passages answers the question: shared
words do not (a passage on the topic may state another condition). So unless the question is pinned
to one passage by structure (`GradeRequest.pinned`, policy/provisions.py), the verdict is ambiguous
between passages: those stating a provision the question names by number without naming its document
(`GradeRequest.numbered`), else the relevant ones ("which of these is your case?", or "is this your
case?" for one). A question pinned to passages of several documents is ambiguous between them. The
user's own policy records (account turns) are looked up by field, so those turns keep the verdicts
above. When generate runs on a provider that reads (`GradeRequest.drafter_reads`, a RoleProviders
map), or with `quoting=True` (the wire stand-ins' drafter, which quotes by shared words), the verdicts
above hold for every turn: the drafter judges the passages itself.
"""

from __future__ import annotations

from insurance_offline.lexical import (
    Concept,
    concept_weights,
    coverage,
    evidence_terms,
    line_terms,
    missing_key_concepts,
    text_terms,
)
from insurance_agent.models.chunks import RetrievedChunk
from insurance_agent.models.roles import ChunkRelevance, GradeRequest, GradeResult, GradeVerdict
from insurance_offline.question import question_concepts
from insurance_offline.generate import is_account_evidence

# Words every document is about, whether or not its title says so.
_GENERIC_LABEL_WORDS = "بیمه بیمه نامه insurance policy policies plan"


class LocalGrader:
    def __init__(
        self,
        min_coverage: float = 0.5,
        min_score: float | None = None,
        margin: float = 0.15,
        max_candidates: int = 6,
        coverage_ratio: float = 0.7,
        quoting: bool = False,
    ) -> None:
        self.quoting = quoting
        self.min_coverage = min_coverage
        self.min_score = min_score
        self.margin = margin
        self.coverage_ratio = coverage_ratio
        self.max_candidates = max_candidates
        self._generic_terms: frozenset[str] | None = None

    def __call__(self, request: GradeRequest) -> GradeResult:
        chunks = list(request.chunks)
        if not chunks:
            return GradeResult(verdict=GradeVerdict.INSUFFICIENT, relevance=[])
        pinned = list(dict.fromkeys(cid for cid in request.pinned if cid in {c.chunk_id for c in chunks}))
        offers = not self.quoting and not request.drafter_reads
        if pinned and offers:
            judged = [ChunkRelevance(chunk_id=cid, relevant=True, score=1.0) for cid in pinned]
            if len(pinned) == 1:
                return GradeResult(verdict=GradeVerdict.SUFFICIENT, relevance=judged)
            return GradeResult(verdict=GradeVerdict.AMBIGUOUS, relevance=judged, choose="passages")
        numbered = [cid for cid in dict.fromkeys(request.numbered) if cid in {c.chunk_id for c in chunks}]
        if numbered and offers:
            # «ماده ۳۶» without the law's name: the passages stating it are offered, to be confirmed
            judged = [ChunkRelevance(chunk_id=cid, relevant=True, score=1.0) for cid in numbered]
            return GradeResult(verdict=GradeVerdict.AMBIGUOUS, relevance=judged, choose="passages")
        result = self._by_words(request, chunks)
        if not offers or result.verdict == GradeVerdict.INSUFFICIENT or any(map(is_account_evidence, chunks)):
            return result
        if any(judged.relevant for judged in result.relevance):
            return GradeResult(verdict=GradeVerdict.AMBIGUOUS, relevance=result.relevance, choose="passages")
        # Nothing relevant by words either: generate has nothing pinned and hands the turn over.
        return GradeResult(verdict=GradeVerdict.SUFFICIENT, relevance=result.relevance)

    def _by_words(self, request: GradeRequest, chunks: list[RetrievedChunk]) -> GradeResult:
        """The verdict of the lexical coverage and the products' spread (the module doc)."""
        documents = evidence_terms(chunks)
        concepts = question_concepts(request.query, documents)
        weights = concept_weights(concepts, documents)
        coverages = [coverage(concepts, terms, weights) for terms in documents]
        relevance = [
            ChunkRelevance(chunk_id=chunk.chunk_id, relevant=self._relevant(chunk, cov), score=round(cov, 4))
            for chunk, cov in zip(chunks, coverages, strict=True)
        ]

        best_score = max(chunk.score for chunk in chunks)
        best_coverage = max(coverages)
        score_low = self.min_score is None or best_score < self.min_score
        if (best_coverage < self.min_coverage and score_low) or missing_key_concepts(concepts, documents):
            return GradeResult(verdict=GradeVerdict.INSUFFICIENT, relevance=relevance)

        close = self._close_relevant(chunks, relevance, best_score)
        if len({chunk.product or chunk.file_id for chunk in close}) >= 2 and not self._names_product(concepts, close):
            return GradeResult(verdict=GradeVerdict.AMBIGUOUS, relevance=relevance)
        return GradeResult(verdict=GradeVerdict.SUFFICIENT, relevance=relevance)

    def _relevant(self, chunk: RetrievedChunk, cov: float) -> bool:
        return cov >= self.min_coverage or (self.min_score is not None and chunk.score >= self.min_score)

    def _close_relevant(
        self, chunks: list[RetrievedChunk], relevance: list[ChunkRelevance], best_score: float
    ) -> list[RetrievedChunk]:
        floor = best_score - self.margin * abs(best_score)
        ranked = sorted(zip(chunks, relevance, strict=True), key=lambda pair: -pair[0].score)[: self.max_candidates]
        close = [(chunk, judged.score) for chunk, judged in ranked if judged.relevant and chunk.score >= floor]
        best_coverage = max((cov for _, cov in close), default=0.0)
        return [chunk for chunk, cov in close if cov >= self.coverage_ratio * best_coverage]

    def generic_terms(self) -> frozenset[str]:
        if self._generic_terms is None:
            self._generic_terms = text_terms(_GENERIC_LABEL_WORDS)
        return self._generic_terms

    def _names_product(self, concepts: list[Concept], close: list[RetrievedChunk]) -> bool:
        """Whether the query names a product or line: a known line word, or a word that tells the
        close hits' documents apart (in some of their titles/products/domains but not in all)."""
        if any(concept.stems & line_terms() for concept in concepts):
            return True
        chunks = close
        files: dict[str, frozenset[str]] = {}
        for chunk in chunks:
            label = " ".join(filter(None, [chunk.title, chunk.product, (chunk.domain or "").replace("_", " ")]))
            files[chunk.file_id] = files.get(chunk.file_id, frozenset()) | text_terms(label)
        labels = list(files.values())
        for concept in concepts:
            if concept.stems <= self.generic_terms():
                continue  # "بیمه", "insurance": every document is about it, whatever its title says
            hits = sum(1 for terms in labels if concept.covered_by(terms))
            if 0 < hits < len(labels):
                return True
        return False
