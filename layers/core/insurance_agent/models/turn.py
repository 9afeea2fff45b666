"""The turn contract: what the backend sends to StartSyncExecution and what it gets back."""

from __future__ import annotations

import re
from enum import Enum
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

MAX_MESSAGE_CHARS = 2000
ID_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:@-]{0,127}$")
KNOWN_ROLES = ("user", "officer", "admin")

Language = Literal["fa", "en"]


class Status(str, Enum):
    ANSWER = "answer"
    CLARIFY = "clarify"
    ESCALATE = "escalate"
    REFUSED = "refused"


class EscalationReason(str, Enum):
    USER_REQUESTED = "user_requested"
    INSUFFICIENT_RETRIEVAL = "insufficient_retrieval"
    UNGROUNDED = "ungrounded"
    LOW_CONFIDENCE = "low_confidence"
    RESTRICTED_INTENT = "restricted_intent"
    BUDGET_EXHAUSTED = "budget_exhausted"
    FRUSTRATION = "frustration"
    SYSTEM_ERROR = "system_error"


class RefusalCode(str, Enum):
    INVALID_INPUT = "invalid_input"
    THREAD_NOT_OWNED = "thread_not_owned"
    THREAD_HANDED_OFF = "thread_handed_off"
    DUPLICATE_TURN = "duplicate_turn"


class TurnInput(BaseModel):
    """Execution input. Identity and scope are set by the backend, never taken from user text."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)

    thread_id: str
    turn_id: str
    user_id: str
    tenant_id: str
    roles: list[str] = Field(default_factory=lambda: ["user"], min_length=1, max_length=3)
    domain: str | None = None
    message: str = Field(min_length=1, max_length=MAX_MESSAGE_CHARS)
    locale: str | None = None

    @field_validator("thread_id", "turn_id", "user_id", "tenant_id")
    @classmethod
    def _id_shape(cls, value: str) -> str:
        if not ID_PATTERN.match(value):
            raise ValueError("must be 1-128 characters of letters, digits and . _ : @ -")
        return value

    @field_validator("roles")
    @classmethod
    def _known_roles(cls, value: list[str]) -> list[str]:
        unknown = sorted(set(value) - set(KNOWN_ROLES))
        if unknown:
            raise ValueError(f"unknown roles: {', '.join(unknown)}")
        return sorted(set(value), key=KNOWN_ROLES.index)

    @field_validator("domain")
    @classmethod
    def _domain_shape(cls, value: str | None) -> str | None:
        if value is not None and not re.match(r"^[a-z_]{1,32}$", value):
            raise ValueError("must be a lower-case domain name")
        return value


class Citation(BaseModel):
    chunk_id: str
    file_id: str
    title: str


class ClarifyOption(BaseModel):
    label: str
    file_id: str | None = None
    title: str | None = None
    domain: str | None = None


class TopChunk(BaseModel):
    chunk_id: str
    score: float
    title: str


class HandoffContext(BaseModel):
    rewritten_query: str = ""
    top_chunks: list[TopChunk] = Field(default_factory=list)
    conversation_summary: str = ""
    user_profile: dict = Field(default_factory=dict)


class Trace(BaseModel):
    path: list[str] = Field(default_factory=list)
    llm_calls: int = 0
    retrieval_rounds: int = 0
    model_invocations: int = 0


class TurnReply(BaseModel):
    """Execution output: always exactly this shape."""

    status: Status
    message: str
    language: Language = "fa"
    citations: list[Citation] = Field(default_factory=list)
    options: list[ClarifyOption] = Field(default_factory=list)
    reason: EscalationReason | None = None
    handoff_context: HandoffContext | None = None
    error: RefusalCode | None = None
    turn_id: str = ""
    trace: Trace = Field(default_factory=Trace)
