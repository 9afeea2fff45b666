"""The working data one node of a turn stores for the later ones (store/turns.PARTS), typed.

The nodes exchange it through the turn's item in DynamoDB, not through the execution's state: a
payload of the state machine stays small whatever the documents hold.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from insurance_agent.models.chunks import RetrievedChunk
from insurance_agent.models.history import HistoryTurn
from insurance_agent.models.scope import Scope
from insurance_agent.models.turn import ClarifyOption


class TurnParts(BaseModel):
    """What the turn's nodes wrote so far. `query` is the retrieval query once contextualize (or
    account) wrote one, else the user's message."""

    model_config = ConfigDict(extra="ignore")

    query: str
    history: list[HistoryTurn] = Field(default_factory=list)
    profile: dict[str, Any] = Field(default_factory=dict)
    scope: Scope = Field(default_factory=Scope)
    chunks: list[RetrievedChunk] = Field(default_factory=list)
    account_chunks: list[RetrievedChunk] = Field(default_factory=list)
    options: list[ClarifyOption] = Field(default_factory=list)
    grade: dict[str, Any] = Field(default_factory=dict)
    draft: dict[str, Any] = Field(default_factory=dict)
    #: One entry per draft of the turn: {"answered": bool, "rejected_by": [guard names, policy/guards.GUARDS]}.
    drafts: list[dict[str, Any]] = Field(default_factory=list)
    verify: dict[str, Any] = Field(default_factory=dict)
    feedback: list[str] = Field(default_factory=list)
    reply: dict[str, Any] | None = None

    @classmethod
    def of(cls, stored: Mapping[str, Any], message: str) -> TurnParts:
        """The parts as read from the store (absent or empty ones take their defaults)."""
        present = {name: value for name, value in stored.items() if value not in (None, "", [], {})}
        return cls.model_validate({**present, "query": stored.get("query") or message})
