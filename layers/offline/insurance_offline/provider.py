"""OfflineProvider: the deterministic, offline model provider (embedded default and tests).

It is not a language model and does not pretend to be one: triage is a nearest-exemplar classifier
over a multilingual embedding plus the policy lexicon, contextualize is rule-based follow-up
resolution, grade is a score/metadata-spread heuristic, clarify words a fixed question around the
grounded options, generate quotes the passage the question is pinned to by structure (the user's
pick of a passage, a provision named by number) or abstains, and verify is a containment check. It
cannot read, so it never answers with a passage only because it shares the question's words: those
passages are offered to choose from, or go with the hand-off. Same input, same output, no network.

`OfflineProvider(quoting=True)` is the wire stand-ins' model (tools/agent_harness): it quotes the
sentences that share most of the question's words, sometimes wrongly, as a model that reads would.
No setting selects it.
"""

from __future__ import annotations

from insurance_agent.models.roles import (
    ClarifyRequest,
    ClarifyResult,
    ContextualizeRequest,
    ContextualizeResult,
    GenerateRequest,
    GenerateResult,
    GradeRequest,
    GradeResult,
    TriageRequest,
    TriageResult,
    VerifyRequest,
    VerifyResult,
)
from insurance_agent.roles.base import ModelProvider
from insurance_offline.clarify import LocalClarifier
from insurance_offline.lexical import broaden
from insurance_offline.terms import LEXICAL_TERMS
from insurance_offline.contextualize import LocalContextualizer, with_expansion
from insurance_offline.generate import LocalGenerator
from insurance_offline.grade import LocalGrader
from insurance_offline.triage import LocalTriager
from insurance_offline.verify import LocalVerifier


class OfflineProvider(ModelProvider):
    name = "offline"
    terms = LEXICAL_TERMS

    def __init__(
        self,
        triager: LocalTriager | None = None,
        contextualizer: LocalContextualizer | None = None,
        grader: LocalGrader | None = None,
        clarifier: LocalClarifier | None = None,
        generator: LocalGenerator | None = None,
        verifier: LocalVerifier | None = None,
        quoting: bool = False,
    ) -> None:
        self._triage = triager or LocalTriager()
        self._contextualize = contextualizer or LocalContextualizer()
        self._grade = grader or LocalGrader(quoting=quoting)
        self._clarify = clarifier or LocalClarifier()
        self._generate = generator or LocalGenerator(quoting=quoting)
        self._verify = verifier or LocalVerifier()

    def triage(self, request: TriageRequest) -> TriageResult:
        return self._triage(request)

    def contextualize(self, request: ContextualizeRequest) -> ContextualizeResult:
        return self._contextualize(request)

    def grade(self, request: GradeRequest) -> GradeResult:
        return self._grade(request)

    def clarify(self, request: ClarifyRequest) -> ClarifyResult:
        return self._clarify(request)

    def generate(self, request: GenerateRequest) -> GenerateResult:
        return self._generate(request)

    def verify(self, request: VerifyRequest) -> VerifyResult:
        return self._verify(request)

    def first_turn_query(self, message: str) -> str | None:
        # Spoken forms put in the documents' written register, with the glossary's renderings.
        return with_expansion(message)

    def broadened_query(self, previous_query: str) -> str | None:
        return broaden(previous_query)

    def warm_up(self) -> None:
        # Running the first turn's analyses on sample messages builds whatever they build lazily: the
        # exemplar matrices (seconds of embedding, unless stored), the spoken-register, glossary and
        # stem indexes; each is kept for the life of the process.
        for message in _WARM_UP_MESSAGES:
            self.triage(TriageRequest(message=message))
            self.first_turn_query(message)
            self.terms.message_words(message)


_WARM_UP_MESSAGES = ("سلام، فرانشیز بیمه بدنه ماشینم چقدره؟", "What does my travel insurance cover?")
