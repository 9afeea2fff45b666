"""Local verify: containment of every claim in a chunk it cites, plus the deterministic guards.

A claim is supported when it cites at least one chunk retrieved this turn and its text, with the
generator's framing removed ("According to <title>: "), occurs word for word in one of those
chunks after normalisation (spelling variants, digits and punctuation do not matter, words do),
and every number in it appears in one of them. Text of the answer that belongs to no claim is
unsupported too. When the request carries the question, the claims must also state what it asks
(question.py): the noun its question word governs («چه مدارکی», "which documents") is named by a
claim's quote or the sentence introducing it, and a quantity question gets a claim with a number;
true sentences beside the point are no answer. support = supported claims / claims; grounded when support reaches the request's
`min_support` (VERIFY_MIN_SUPPORT) and neither guard (citations retrieved, numbers in cited chunks
or calculator results) found a violation.
"""

from __future__ import annotations

import re

from insurance_offline.lexical import canonical, contains, ground_concepts, query_concepts, text_terms
from insurance_agent.models.roles import Claim, VerifyRequest, VerifyResult
from insurance_agent.policy.guards import citation_guard, number_guard
from insurance_agent.quotes import strip_frame
from insurance_offline.generate import evidence_units, quote_terms
from insurance_offline.question import focus_concepts, has_number, question_shape
from insurance_agent.text import split_sentences
from insurance_text import content_terms

_GENERIC_FRAME = re.compile(r"^(?:according to [^:\n]{1,200}:|بر اساس «[^»\n]{1,200}»:)\s*", re.IGNORECASE)


class LocalVerifier:
    def __init__(self, threshold: float | None = None) -> None:
        # None: the request's min_support decides (the configured VERIFY_MIN_SUPPORT).
        self.threshold = threshold

    def __call__(self, request: VerifyRequest) -> VerifyResult:
        by_id = {chunk.chunk_id: chunk for chunk in request.chunks}
        claims = list(request.claims)
        unsupported: list[str] = []
        supported = 0
        for claim in claims:
            if self._supported(claim, by_id):
                supported += 1
            else:
                unsupported.append(claim.text)

        cited_ids = list(dict.fromkeys(cid for claim in claims for cid in claim.chunk_ids))
        violations = [f"cited chunk {cid} was not retrieved this turn" for cid in citation_guard(cited_ids, by_id)]
        cited_chunks = [by_id[cid] for cid in cited_ids if cid in by_id]
        violations += [
            f"number {n} in the answer appears in no cited chunk"
            for n in number_guard(request.answer, cited_chunks, request.calculations)
        ]
        leftovers = self._uncovered_text(request.answer, claims)
        unsupported += [text for text in leftovers if text not in unsupported]
        if request.question and claims:
            violations += self._off_question(request.question, claims, by_id)

        support = supported / len(claims) if claims else 0.0
        threshold = request.min_support if self.threshold is None else self.threshold
        grounded = bool(claims) and support >= threshold and not violations and not leftovers
        return VerifyResult(
            grounded=grounded,
            unsupported_claims=unsupported + [v for v in violations if v not in unsupported],
            support=round(support, 4),
        )

    @staticmethod
    def _body(claim: Claim, titles: list[str]) -> str:
        body = strip_frame(claim.text, titles)
        if body == claim.text:
            body = _GENERIC_FRAME.sub("", claim.text)
        return body.strip()

    def _supported(self, claim: Claim, by_id: dict) -> bool:
        if not claim.chunk_ids or any(cid not in by_id for cid in claim.chunk_ids):
            return False
        cited = [by_id[cid] for cid in claim.chunk_ids]
        body = self._body(claim, [chunk.title.strip() or chunk.file_id for chunk in cited])
        if not canonical(body):
            return False
        if not any(contains(chunk.text, body) for chunk in cited):
            return False
        return not number_guard(body, cited)

    def _off_question(self, question: str, claims: list[Claim], by_id: dict) -> list[str]:
        """What of `question` no claim states: its focus noun, or the figure a quantity question asks."""
        cited = [by_id[cid] for claim in claims for cid in claim.chunk_ids if cid in by_id]
        if not cited:
            return []
        documents = [text_terms(chunk.text) for chunk in cited]
        concepts = ground_concepts(query_concepts(question), documents)
        carried: frozenset[str] = frozenset()
        bodies = []
        for claim in claims:
            chunks = [by_id[cid] for cid in claim.chunk_ids if cid in by_id]
            body = self._body(claim, [chunk.title.strip() or chunk.file_id for chunk in chunks])
            bodies.append(body)
            carried |= text_terms(body)
            for chunk in chunks:
                for unit in evidence_units(chunk):
                    if contains(unit.text, body) or contains(body, unit.text):
                        carried |= quote_terms(unit, lead=True)
        problems = [
            f"the answer does not name what the question asks about: {concept.label}"
            for concept in focus_concepts(question, concepts)
            if not concept.covered_by(carried)
        ]
        shape = question_shape(question, concepts, frozenset())
        if shape.needs_number and not any(has_number(body) for body in bodies):
            problems.append("the question asks for a quantity and the answer states no figure")
        return problems

    @staticmethod
    def _uncovered_text(answer: str, claims: list[Claim]) -> list[str]:
        """Sentences of the answer that are part of no claim and say something (have content words)."""
        remainder = canonical(answer)
        for claim in sorted(claims, key=lambda c: -len(c.text)):
            key = canonical(claim.text)
            if key:
                remainder = f" {remainder} ".replace(f" {key} ", " ").strip()
        if not content_terms(remainder):
            return []
        # Report the answer's own sentences that are not inside a claim, in their original wording.
        leftovers = []
        for sentence in split_sentences(answer):
            if content_terms(sentence) and not any(contains(claim.text, sentence) for claim in claims):
                leftovers.append(sentence)
        return leftovers or [remainder]
