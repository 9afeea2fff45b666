"""The execution payload passed between states: ids, route, verdicts and counters only.

Budgets are checked by ASL Choice states over `counters` against `limits` (which come from the
template's parameters through DefinitionSubstitutions). Bulky data lives in the turns table.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from insurance_agent.models.turn import TurnInput, TurnReply


class Limits(BaseModel):
    max_retrieval_rounds: int = 2
    max_clarifications: int = 2
    max_regenerations: int = 1
    max_llm_calls: int = 8
    min_confidence: float = 0.5


class Counters(BaseModel):
    retrieval_rounds: int = 0
    regenerations: int = 0
    llm_calls: int = 0
    clarifications: int = 0


class TriageFlags(BaseModel):
    restricted: bool = False
    restricted_category: str | None = None
    frustration: bool = False


class GenerateVerdict(BaseModel):
    answered: bool = False
    confidence: float = 0.0


class VerifyVerdict(BaseModel):
    grounded: bool = False
    # Share of the draft's claims the verifier found supported (None: a guard failed, nothing was asked).
    # Carried so that a run's thresholds can be swept afterwards without re-running (`agent eval`).
    support: float | None = None


class StateTrace(BaseModel):
    path: list[str] = Field(default_factory=list)


class TurnState(BaseModel):
    """What every node receives and returns. `input` is the raw execution input, kept as sent."""

    model_config = ConfigDict(extra="ignore")

    input: Any = Field(default_factory=dict)
    turn: TurnInput | None = None
    limits: Limits = Field(default_factory=Limits)
    counters: Counters = Field(default_factory=Counters)
    route: str | None = None
    language: str = "fa"
    # The turn mixes Persian and English (it is answered in `language`, its dominant one).
    mixed_language: bool = False
    triage: TriageFlags = Field(default_factory=TriageFlags)
    grade: str | None = None
    # A later retrieval round could not write a query different from the one already searched:
    # the graph escalates instead of searching the same thing again.
    rewrite_exhausted: bool = False
    generate: GenerateVerdict = Field(default_factory=GenerateVerdict)
    verify: VerifyVerdict = Field(default_factory=VerifyVerdict)
    escalation_reason: str | None = None
    error: dict[str, Any] | None = None
    trace: StateTrace = Field(default_factory=StateTrace)
    # Requests sent to a model service by the node runs this state went through (invocations.py).
    # Top level, not in `counters`: the ASL's counting Pass states rebuild `counters` field by field.
    model_invocations: int = 0
    reply: TurnReply | None = None

    def require_turn(self) -> TurnInput:
        if self.turn is None:
            # Only load_memory admits a turn; any later node without one means a broken graph.
            raise RuntimeError("turn input was not validated by load_memory")
        return self.turn

    def dump(self) -> dict[str, Any]:
        return self.model_dump(mode="json", exclude_none=True)
