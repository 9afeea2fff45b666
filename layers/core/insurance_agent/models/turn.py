"""The turn contract: what the backend sends to StartSyncExecution and what it gets back."""

from __future__ import annotations

import json
import re
from enum import Enum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

MAX_MESSAGE_CHARS = 2000
# Ids and roles are compared exactly: no stripping, no case folding (a padded id is another id, and
# an invalid one rather than a silent alias). `\Z`, not `$`, so that a trailing newline never passes.
ID_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:@-]{0,127}\Z")
KNOWN_ROLES = ("user", "officer", "admin")
DOMAIN_PATTERN = re.compile(r"[a-z_]{1,32}\Z")
# A short language tag, BCP-47 ("fa", "en-US", "fa-Arab-IR") or POSIX-style ("en_GB", what Java,
# Android and gettext send): a locale is only a hint, and refusing every turn of a backend that
# writes "en_GB" would be a false refusal. Checked after MAX_LOCALE_CHARS.
LOCALE_PATTERN = re.compile(r"[A-Za-z]{2,3}(?:[-_][A-Za-z0-9]{1,8})*\Z")
MAX_LOCALE_CHARS = 64
# Checked on the raw input before any other work: a turn is a few KB at most.
MAX_INPUT_BYTES = 16_384
MAX_INPUT_DEPTH = 4
FIELDS = ("thread_id", "turn_id", "user_id", "tenant_id", "roles", "domain", "message", "locale")
# Characters a chat message never needs: C0/C1 controls other than tab and line breaks, lone
# surrogates, and the bidi overrides/isolates that make displayed text differ from stored text.
_FORBIDDEN_TEXT = re.compile(
    "[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff\u202a-\u202e\u2066-\u2069\ufffe\uffff]"
)

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
    # The model's answer did not fit its schema even after the corrective turn (ModelOutputError),
    # or a role that must answer got no structured answer: the model's doing, not a fault of the stack.
    MODEL_OUTPUT = "model_output"
    SYSTEM_ERROR = "system_error"


class RefusalCode(str, Enum):
    INVALID_INPUT = "invalid_input"
    THREAD_NOT_OWNED = "thread_not_owned"
    THREAD_HANDED_OFF = "thread_handed_off"
    DUPLICATE_TURN = "duplicate_turn"
    TURN_NOT_OWNED = "turn_not_owned"


class TurnInput(BaseModel):
    """Execution input. Identity and scope are set by the backend, never taken from user text.

    Strict: no type coercion, no unknown fields, nothing stripped. Use `parse_turn_input` on raw
    input: it checks size and depth first and names the offending field.
    """

    model_config = ConfigDict(extra="forbid", strict=True)

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
        unknown = [role for role in value if role not in KNOWN_ROLES]
        if unknown:
            raise ValueError("unknown role")
        return sorted(set(value), key=KNOWN_ROLES.index)

    @field_validator("domain")
    @classmethod
    def _domain_shape(cls, value: str | None) -> str | None:
        if value is not None and not DOMAIN_PATTERN.match(value):
            raise ValueError("must be a lower-case domain name")
        return value

    @field_validator("message")
    @classmethod
    def _message_text(cls, value: str) -> str:
        if _FORBIDDEN_TEXT.search(value):
            raise ValueError("contains control, bidi-override or unpaired surrogate characters")
        if not value.strip():
            raise ValueError("is blank")
        return value

    @field_validator("locale")
    @classmethod
    def _locale_shape(cls, value: str | None) -> str | None:
        if value is not None and (len(value) > MAX_LOCALE_CHARS or not LOCALE_PATTERN.match(value)):
            raise ValueError("must be a short language tag such as fa, en-US or en_GB")
        return value


class InputProblem(BaseModel):
    """Why a raw turn input was refused: the field (a top-level name, or `input`) and a fixed code."""

    field: str
    problem: Literal[
        "too_large", "too_deep", "not_an_object", "unknown_field", "missing", "wrong_type", "too_long", "invalid_value"
    ]


def _shape_problem(raw: Any) -> InputProblem | None:
    """Size and nesting of the raw input, measured iteratively (no recursion, stops early)."""
    if not isinstance(raw, dict):
        return InputProblem(field="input", problem="not_an_object")
    size = 0
    stack: list[tuple[Any, int]] = [(raw, 1)]
    while stack:
        value, depth = stack.pop()
        if depth > MAX_INPUT_DEPTH:
            return InputProblem(field="input", problem="too_deep")
        if isinstance(value, dict):
            size += 2 + len(value)
            for key, item in value.items():
                size += len(str(key)) * 4 + 4
                stack.append((item, depth + 1))
        elif isinstance(value, list):
            size += 2 + len(value)
            stack.extend((item, depth + 1) for item in value)
        elif isinstance(value, str):
            size += len(value) * 4 + 2  # an upper bound of its UTF-8 size, without encoding it
        else:
            size += 24
        if size > 4 * MAX_INPUT_BYTES:
            return InputProblem(field="input", problem="too_large")
    # The cheap bound passed; measure the real JSON size (surrogates counted, never raised on).
    encoded = json.dumps(raw, ensure_ascii=False, default=str).encode("utf-8", "surrogatepass")
    if len(encoded) > MAX_INPUT_BYTES:
        return InputProblem(field="input", problem="too_large")
    return None


_PROBLEM_OF_TYPE = {"missing": "missing", "extra_forbidden": "unknown_field"}
_SAFE_FIELD = re.compile(r"[a-z_]{1,32}\Z")


def _problem_of(error: dict[str, Any]) -> InputProblem:
    loc = error.get("loc") or ()
    name = str(loc[0]) if loc else "input"
    kind = str(error.get("type", ""))
    if kind == "extra_forbidden":
        # Never echo a key the caller made up unless it is a plain name.
        return InputProblem(field=name if _SAFE_FIELD.match(name) else "input", problem="unknown_field")
    if name not in FIELDS:
        name = "input"
    if kind in _PROBLEM_OF_TYPE:
        problem = _PROBLEM_OF_TYPE[kind]
    elif kind.endswith("_type") or kind.endswith("_parsing"):
        problem = "wrong_type"
    elif kind.endswith("_too_long"):
        problem = "too_long"
    else:
        problem = "invalid_value"
    return InputProblem(field=name, problem=problem)


def parse_turn_input(raw: Any) -> TurnInput | InputProblem:
    """The validated turn, or the first problem found (size and depth before anything else)."""
    problem = _shape_problem(raw)
    if problem is not None:
        return problem
    try:
        return TurnInput.model_validate(raw)
    except ValidationError as error:
        errors = error.errors(include_url=False, include_input=False)
        # Report fields in contract order so that the answer is stable whatever pydantic's order.
        problems = [_problem_of(e) for e in errors]
        problems.sort(key=lambda p: FIELDS.index(p.field) if p.field in FIELDS else len(FIELDS))
        return problems[0]


def safe_turn_id(raw: Any) -> str:
    """The caller's turn_id if it is a valid id, else "" (a refusal never echoes arbitrary text)."""
    if isinstance(raw, dict):
        value = raw.get("turn_id")
        if isinstance(value, str) and ID_PATTERN.match(value):
            return value
    return ""


class Citation(BaseModel):
    chunk_id: str
    file_id: str
    title: str


class ClarifyOption(BaseModel):
    label: str
    file_id: str | None = None
    title: str | None = None
    domain: str | None = None
    #: set when the option is one retrieved passage rather than a document (policy/provisions.py)
    chunk_id: str | None = None


class TopChunk(BaseModel):
    chunk_id: str
    score: float
    title: str


class HandoffContext(BaseModel):
    """What the person taking over sees. Personal data is masked everywhere except `last_message`,
    the user's last message as sent (the person needs it to act); the service never stores it raw."""

    rewritten_query: str = ""
    top_chunks: list[TopChunk] = Field(default_factory=list)
    conversation_summary: str = ""
    last_message: str = ""
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
    # With error=invalid_input: the offending field (a contract field name, or `input` for the whole
    # input) and what is wrong with it.
    field: str | None = None
    problem: str | None = None
    turn_id: str = ""
    trace: Trace = Field(default_factory=Trace)
