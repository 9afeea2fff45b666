"""What each role asks the model to return: the tool schemas of Bedrock structured output.

These are deliberately narrower than the result models (models/roles.py): the model is not asked
for anything the code can decide better (the turn's language, option labels, calculator results,
support ratios). The class name is the tool name, field descriptions are the tool's documentation.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, WithJsonSchema, create_model, model_validator


class _Wire(BaseModel):
    model_config = ConfigDict(extra="forbid")


class TriageDecision(_Wire):
    """Record how the user's latest message must be routed."""

    intent: Literal["chitchat", "knowledge", "account", "handoff_request", "out_of_scope"] = Field(
        description="chitchat: greetings, thanks, small talk. knowledge: a question the organisation's documents "
        "can answer: any subject of <corpus_topics>, with or without the word insurance, and a short follow-up of an "
        "answered question. account: a question about the user's own policies or records. handoff_request: the user "
        "asks for a human, in any wording. out_of_scope: a topic unrelated to the documents and to insurance."
    )
    asks_about_rule: bool = Field(
        default=False,
        description="true when the message asks how something works (a deadline, condition, procedure or cover), "
        "even about complaints, appeals, cancellation or courts; false when the user asks us to act, states that "
        "they will, or reports their own case"
    )
    restricted: bool = Field(
        description="true when the user asks us to act on, or reports, one of the restricted intents; a question "
        "about the rule of one of them is not restricted. Decided before any pick of a clarifying question's options"
    )
    restricted_category: str | None = Field(
        default=None, description="the name of the restricted intent, when restricted is true"
    )
    frustration: bool = Field(description="true when the user is explicitly dissatisfied or repeats themselves")


class StandaloneQuery(_Wire):
    """Record the standalone search query for the user's latest message."""

    standalone_query: str = Field(
        min_length=1, max_length=500, description="the query, self-contained, in the language of the documents"
    )


class ChunkJudgement(_Wire):
    chunk_id: str = Field(description="id of a chunk from the evidence")
    relevant: bool = Field(description="true when this chunk helps answer the query")


class EvidenceGrade(_Wire):
    """Record whether the retrieved evidence can answer the query."""

    verdict: Literal["sufficient", "ambiguous", "insufficient"] = Field(
        description="sufficient: the evidence answers the query. ambiguous: it would, but for several distinct "
        "products and the query does not say which one. insufficient: it does not answer the query."
    )
    chunks: list[ChunkJudgement] = Field(description="one judgement per chunk of the evidence")


class ClarifyingQuestion(_Wire):
    """Record the clarifying question to ask the user."""

    question: str = Field(min_length=1, max_length=300, description="one short question, without the options")


class AnswerClaim(_Wire):
    text: str = Field(min_length=1, description="one factual statement of the answer, worded as in the answer")
    chunk_ids: list[str] = Field(min_length=1, description="ids of the evidence chunks that state it")


class Operand(_Wire):
    value: str = Field(default="", description="the figure exactly as written in its source")
    chunk_id: str | None = Field(
        default=None, description='the chunk the figure is quoted from, or "message" for the user\'s own message'
    )
    calculation: str | None = Field(default=None, description="or: the id of an earlier calculation")
    currency: str | None = Field(
        default=None, description="the currency when the source states it apart from the figure (IRR, IRT, USD...)"
    )


class CalculationRequest(_Wire):
    id: str = Field(pattern=r"^[A-Za-z0-9_-]{1,32}$", description="short id, used as {{calc:<id>}} in the answer")
    operation: Literal["add", "subtract", "multiply", "percent_of", "convert"]
    operands: list[Operand] = Field(min_length=1, max_length=10)
    target_currency: str | None = Field(default=None, description="for convert: IRR or IRT")


class GroundedAnswer(_Wire):
    """Record the answer drafted from the evidence."""

    answered: bool = Field(description="false when the evidence does not answer the question")
    answer: str = Field(description="the answer shown to the user; empty when answered is false")
    claims: list[AnswerClaim] = Field(default_factory=list, description="every factual statement of the answer")
    calculations: list[CalculationRequest] = Field(
        default_factory=list, description="money arithmetic for the calculator; never compute it yourself"
    )
    confidence: float = Field(ge=0.0, le=1.0, description="how fully the evidence answers the question")

    @model_validator(mode="after")
    def _cited_when_answered(self) -> GroundedAnswer:
        # A schema cannot make `claims` required only when `answered` is true; the correction turn this
        # error gets costs less than the draft the citation guard would reject after verify.
        if self.answered and self.answer.strip() and not self.claims:
            raise ValueError("an answer (answered true) needs its claims, each citing the chunk_ids of <evidence> "
                             "that state it; with no chunk to cite, set answered to false")
        return self


def grounded_answer(chunk_ids: Sequence[str]) -> type[GroundedAnswer]:
    """GroundedAnswer for one request's evidence: every chunk id it may cite (a claim's, an operand's)
    is one of `chunk_ids`, in the schema the model is given (an enum: Bedrock's tool, OpenAI's strict
    json_schema and a forced function alike) and in the validation of its answer, whose error names
    the ids for the correction turn. Same name, so that the tool name is the role's."""
    return _grounded_answer(tuple(dict.fromkeys(chunk_ids)))


def _require_claims(schema: dict[str, Any]) -> None:
    # Required on the wire, optional in validation: a model held to the schema by a grammar leaves out
    # a key it may omit (the reader, Qwen2.5-Coder-1.5B, wrote answered drafts without `claims`), while
    # a declined draft that omits it is still a valid answer.
    required = schema.setdefault("required", [])
    if "claims" not in required:
        required.append("claims")


class _CitedAnswer(GroundedAnswer):
    model_config = ConfigDict(json_schema_extra=_require_claims)


def _one_of(values: tuple[str, ...]) -> Any:
    """One of `values`, as an enum even for one value (pydantic writes `const` then, which not every
    server's schema-to-grammar conversion takes)."""
    return Annotated[Literal[values], WithJsonSchema({"type": "string", "enum": list(values)})]


@lru_cache(maxsize=64)
def _grounded_answer(chunk_ids: tuple[str, ...]) -> type[GroundedAnswer]:
    if not chunk_ids:
        return GroundedAnswer
    cited = _one_of(chunk_ids)
    claim = create_model(
        "AnswerClaim", __base__=AnswerClaim,
        chunk_ids=(list[cited], Field(min_length=1, description=AnswerClaim.model_fields["chunk_ids"].description)))
    operand = create_model(
        "Operand", __base__=Operand,
        chunk_id=(_one_of((*chunk_ids, "message")) | None,
                  Field(default=None, description=Operand.model_fields["chunk_id"].description)))
    calculation = create_model(
        "CalculationRequest", __base__=CalculationRequest,
        operands=(list[operand], Field(min_length=1, max_length=10)))
    fields = GroundedAnswer.model_fields
    model = create_model(
        "GroundedAnswer", __base__=_CitedAnswer, __doc__=GroundedAnswer.__doc__,
        claims=(list[claim], Field(default_factory=list, description=fields["claims"].description)),
        calculations=(list[calculation], Field(default_factory=list, description=fields["calculations"].description)))
    return model


#: QuotedAnswer.sentence when no sentence of the evidence answers the question
NO_SENTENCE = "none"


class QuotedAnswer(_Wire):
    """Record the sentence of the evidence that answers the question."""

    sentence: str = Field(description='the id of the sentence that answers the question, or "none"')


def quoted_answer(sentence_ids: Sequence[str]) -> type[QuotedAnswer]:
    """QuotedAnswer for one request's evidence: `sentence` is NO_SENTENCE or one of `sentence_ids`
    (an enum, as `grounded_answer`'s chunk ids are).

    NO_SENTENCE comes first and there is no separate yes/no: measured on the reader (Qwen2.5-Coder-1.5B),
    a choice among the ids followed by "does it answer?" said yes to every pick, most of them wrong,
    while "none" offered first is what it gives unless one sentence stands out (docs/benchmarks.md)."""
    return _quoted_answer(tuple(dict.fromkeys(sentence_ids)))


@lru_cache(maxsize=64)
def _quoted_answer(sentence_ids: tuple[str, ...]) -> type[QuotedAnswer]:
    return create_model(
        "QuotedAnswer", __base__=QuotedAnswer, __doc__=QuotedAnswer.__doc__,
        sentence=(_one_of((NO_SENTENCE, *sentence_ids)),
                  Field(description=QuotedAnswer.model_fields["sentence"].description)))


class Reply(_Wire):
    """Record the reply to a message that needs no documents."""

    reply: str = Field(min_length=1, max_length=600)


class ClaimVerdict(_Wire):
    claim: int = Field(ge=1, description="the claim's number in the list")
    supported: bool = Field(description="true only when the cited chunks state it")


class ClaimCheck(_Wire):
    """Record which claims of the draft the cited evidence supports."""

    verdicts: list[ClaimVerdict] = Field(description="one verdict per claim")
    unsupported_statements: list[str] = Field(
        default_factory=list, description="factual statements of the answer that no claim covers and no chunk states"
    )
    answers_question: bool = Field(
        default=True,
        description="false when the claims, however well supported, do not state what <question> asks about",
    )


class StructuredOutputCheck(_Wire):
    """Confirm that this structured answer arrives."""

    ok: bool = Field(description="true")
