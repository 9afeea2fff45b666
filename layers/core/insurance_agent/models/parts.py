"""The working data one node of a turn stores for the later ones, typed (store/turns.py keeps it).

The nodes exchange it through the turn's item in DynamoDB, not through the execution's state: a
payload of the state machine stays small whatever the documents hold. Each part's JSON form is what
the item holds, so these models dump exactly what records written before them hold, and load those.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, RootModel

from insurance_agent.models.chunks import RetrievedChunk
from insurance_agent.models.history import HistoryTurn
from insurance_agent.models.roles import ChunkRelevance, GenerateResult, GradeVerdict
from insurance_agent.models.scope import Scope
from insurance_agent.models.turn import ClarifyOption, TurnReply

class GradeDetail(BaseModel):
    """grade's verdict on the retrieved evidence, with the per-chunk relevance it rests on."""

    verdict: GradeVerdict
    relevance: list[ChunkRelevance] = Field(default_factory=list)
    #: the passages the question is pinned to (policy/provisions.py), for generate
    pinned: list[str] = Field(default_factory=list)


class Draft(BaseModel):
    """generate's latest draft, after the calculator, and the deterministic guards' violations of it."""

    result: GenerateResult
    violations: list[str] = Field(default_factory=list)


class DraftRecord(BaseModel):
    """One draft of the turn: answered or not, and the guards (policy/guards.GUARDS) that rejected it."""

    answered: bool
    rejected_by: list[str] = Field(default_factory=list)


class DraftLog(RootModel[list[DraftRecord]]):
    """Every draft of the turn in order, for operations and the evaluation."""

    root: list[DraftRecord] = Field(default_factory=list)

    def add(self, answered: bool, rejected_by: list[str]) -> None:
        """Log a new draft (generate)."""
        self.root.append(DraftRecord(answered=answered, rejected_by=list(rejected_by)))

    def reject_latest(self, guard: str) -> None:
        """The latest draft was also rejected by `guard` (verify, after the deterministic guards passed it)."""
        if self.root:
            latest = self.root[-1]
            self.root[-1] = latest.model_copy(update={"rejected_by": [*latest.rejected_by, guard]})

    def __len__(self) -> int:
        return len(self.root)


class VerifyDetail(BaseModel):
    """Why verify found the latest draft ungrounded: what a regeneration must fix."""

    grounded: bool
    unsupported: list[str] = Field(default_factory=list)
    violations: list[str] = Field(default_factory=list)


class TurnParts(BaseModel):
    """What the turn's nodes wrote so far. `query` is the retrieval query once contextualize (or
    account) wrote one, else the user's message."""

    # Built on first use, like the role models it holds: a node that only writes a few parts
    # (load_memory) never builds the drafts' and verdicts' models.
    model_config = ConfigDict(extra="ignore", defer_build=True)

    query: str
    history: list[HistoryTurn] = Field(default_factory=list)
    #: store/profiles.Profile.public(): fact name -> its values, and `preferred_language`.
    profile: dict[str, list[str] | str] = Field(default_factory=dict)
    scope: Scope = Field(default_factory=Scope)
    chunks: list[RetrievedChunk] = Field(default_factory=list)
    account_chunks: list[RetrievedChunk] = Field(default_factory=list)
    options: list[ClarifyOption] = Field(default_factory=list)
    grade: GradeDetail | None = None
    draft: Draft | None = None
    drafts: DraftLog = Field(default_factory=DraftLog)
    verify: VerifyDetail | None = None
    feedback: list[str] = Field(default_factory=list)
    reply: TurnReply | None = None

    @classmethod
    def of(cls, stored: Mapping[str, Any], message: str) -> TurnParts:
        """The parts as read from the store (absent or empty ones take their defaults)."""
        present = {name: value for name, value in stored.items() if value not in (None, "", [], {})}
        return cls.model_validate({**present, "query": stored.get("query") or message})
