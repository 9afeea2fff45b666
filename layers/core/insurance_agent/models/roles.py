"""Typed inputs and outputs of the model roles, shared by every provider."""

from __future__ import annotations

from enum import Enum
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from insurance_agent.models.chunks import RetrievedChunk
# Re-exported: the roles take the thread history as these records.
from insurance_agent.models.history import DocumentLabel, HistoryTurn  # noqa: F401
from insurance_agent.models.scope import Scope
from insurance_agent.models.turn import ClarifyOption
from insurance_agent.text import Normalized, normalize


class _RoleModel(BaseModel):
    # Built on first use, not at import: a node validates only its own role's request and result
    # (docs/packaging.md gives the import and first-use figures).
    model_config = ConfigDict(defer_build=True)


class Intent(str, Enum):
    CHITCHAT = "chitchat"
    KNOWLEDGE = "knowledge"
    ACCOUNT = "account"
    HANDOFF_REQUEST = "handoff_request"
    OUT_OF_SCOPE = "out_of_scope"


class GradeVerdict(str, Enum):
    SUFFICIENT = "sufficient"
    AMBIGUOUS = "ambiguous"
    INSUFFICIENT = "insufficient"


class PolicySignals(_RoleModel):
    """What the policy lexicons and the repetition check say about a message on their own."""

    model_config = ConfigDict(defer_build=True, frozen=True)

    restricted_category: str | None = None
    handoff: bool = False
    frustrated: bool = False

    @property
    def any(self) -> bool:
        return self.restricted_category is not None or self.handoff or self.frustrated


class MessageAnalysis(_RoleModel):
    """The user's message as the triage node analysed it, once (policy/routing.analyse_message).

    The node needs the same readings as any provider's triage: the turn's language (detected once,
    by load_memory), the policy signals and whether the message picks an option of our previous
    clarifying question. A provider reads them here instead of analysing the message again.
    """

    model_config = ConfigDict(defer_build=True, frozen=True)

    # normalize(message): kept as plain text by the model, handed out again as `text`.
    normalized: str
    language: Literal["fa", "en"] = "fa"
    mixed_language: bool = False
    signals: PolicySignals = Field(default_factory=PolicySignals)
    # It picks an option of the previous clarifying question (policy/clarification.pick_option).
    picks_option: bool = False

    @field_validator("normalized", mode="before")
    @classmethod
    def _normal_form(cls, value: object) -> object:
        # So that `text` never claims a form it lacks; free for the node's text, already Normalized.
        return normalize(value) if isinstance(value, str) else value

    @property
    def text(self) -> Normalized:
        """The normalised message, typed so that the checks it is passed to do not normalise it again."""
        return Normalized(self.normalized)


class TriageRequest(_RoleModel):
    message: str
    history: list[HistoryTurn] = Field(default_factory=list)
    locale: str | None = None
    # What the tenant's corpus (as the caller may read it) is about: titles, products, domains.
    corpus_topics: list[str] = Field(default_factory=list)
    # Whether the message's own words occur in that corpus (insurance_search/topics.py); None: unknown.
    in_corpus: bool | None = None
    # The node's analysis of `message`; None (a direct caller): the provider analyses it itself.
    analysis: MessageAnalysis | None = None


class TriageResult(_RoleModel):
    intent: Intent
    restricted: bool = False
    restricted_category: str | None = None
    frustration: bool = False
    # The language to answer in: the turn's dominant one when it mixes Persian and English.
    language: Literal["fa", "en"] = "fa"
    mixed_language: bool = False
    confidence: float = 1.0


class ContextualizeRequest(_RoleModel):
    message: str
    history: list[HistoryTurn] = Field(default_factory=list)
    profile: dict = Field(default_factory=dict)
    language: Literal["fa", "en"] = "fa"
    mixed_language: bool = False
    # Retrieval rounds already run this turn: from 1 on, `previous_query` found no sufficient
    # evidence and the rewrite must try something else (broader words, the documents' synonyms).
    attempt: int = Field(default=0, ge=0)
    previous_query: str = ""


class ContextualizeResult(_RoleModel):
    standalone_query: str
    # Set when the user picked an option of the previous clarifying question: retrieval is scoped to it.
    scope: Scope = Field(default_factory=Scope)


class ChunkRelevance(_RoleModel):
    chunk_id: str
    relevant: bool
    score: float = 0.0


class GradeRequest(_RoleModel):
    query: str
    chunks: list[RetrievedChunk]
    #: the passages the question is pinned to by structure, not by words (policy/provisions.py)
    pinned: list[str] = Field(default_factory=list)
    #: the passages stating a provision the question names by number, its document unnamed: offered
    numbered: list[str] = Field(default_factory=list)
    #: whether generate's provider reads the evidence (roles/base.py CANNOT_READ): for one that cannot,
    #: a grader that cannot read either offers the passages to choose from. Unknown: it cannot.
    drafter_reads: bool = False


class GradeResult(_RoleModel):
    verdict: GradeVerdict
    relevance: list[ChunkRelevance] = Field(default_factory=list)
    #: what an ambiguous verdict asks the user to choose between: documents, or the relevant passages
    choose: Literal["documents", "passages"] = "documents"


class ClarifyRequest(_RoleModel):
    query: str
    message: str
    chunks: list[RetrievedChunk]
    options: list[ClarifyOption]
    language: Literal["fa", "en"] = "fa"


class ClarifyResult(_RoleModel):
    question: str


class Claim(_RoleModel):
    text: str
    chunk_ids: list[str] = Field(default_factory=list)


class GenerateRequest(_RoleModel):
    route: Intent
    message: str
    query: str
    chunks: list[RetrievedChunk] = Field(default_factory=list)
    language: Literal["fa", "en"] = "fa"
    # Claims the last verify found unsupported: a regeneration must drop or fix them.
    feedback: list[str] = Field(default_factory=list)
    #: the passages the question is pinned to by structure, not by words (policy/provisions.py)
    pinned: list[str] = Field(default_factory=list)


#: `CalculationOperand.chunk_id` of a count or percentage the user stated in this turn's message.
MESSAGE_SOURCE = "message"

CalculationOperation = Literal["add", "subtract", "multiply", "percent_of", "convert"]


class CalculationOperand(_RoleModel):
    """One input of a calculation: a value quoted verbatim from its source, or an earlier result."""

    value: str = ""
    # The chunk the value is quoted from (MESSAGE_SOURCE: a count or percentage from the user's turn).
    chunk_id: str | None = None
    # Or the id of an earlier calculation of the same draft, whose result is the operand.
    calculation: str | None = None
    # The currency, when the source states it apart from the figure (a table header "(ریال)").
    currency: str | None = None


class Calculation(_RoleModel):
    """A request to the money calculator (policy/money.py); the answer shows `{{calc:<id>}}` for it.

    `result`, `amount`, `currency` and `error` are filled in by the calculator, never by a model.
    """

    id: str = Field(pattern=r"^[A-Za-z0-9_-]{1,32}$")
    operation: CalculationOperation
    operands: list[CalculationOperand] = Field(min_length=1, max_length=10)
    target_currency: str | None = None
    result: str | None = None
    amount: str | None = None
    currency: str | None = None
    error: str | None = None


class GenerateResult(_RoleModel):
    answer: str
    claims: list[Claim] = Field(default_factory=list)
    citations: list[str] = Field(default_factory=list)
    answered: bool
    confidence: float = Field(ge=0.0, le=1.0)
    calculations: list[Calculation] = Field(default_factory=list)


class VerifyRequest(_RoleModel):
    answer: str
    claims: list[Claim]
    chunks: list[RetrievedChunk]
    # Results of the money calculator the answer uses: computed deterministically, not claims to check.
    calculations: list[Calculation] = Field(default_factory=list)
    # Share of claims that must be supported for `grounded` (VERIFY_MIN_SUPPORT).
    min_support: float = Field(default=1.0, ge=0.0, le=1.0)
    # The question the answer is for (the standalone query): true claims that do not state what it
    # asks about are no answer to it. Empty: only the claims' support is checked.
    question: str = ""


class VerifyResult(_RoleModel):
    grounded: bool
    unsupported_claims: list[str] = Field(default_factory=list)
    support: float = Field(default=1.0, ge=0.0, le=1.0)
