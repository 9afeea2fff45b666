"""Earlier turns of a thread as the store keeps them and the roles read them.

Apart from the roles' requests (models/roles.py) so that the nodes that only store or hand off a
thread (load_memory, escalate, write_memory) do not build every role's models at cold start.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from insurance_agent.models.scope import Scope
from insurance_agent.models.turn import ClarifyOption


class DocumentLabel(BaseModel):
    """What names a document the turn answered from (its front matter): the tenant's own vocabulary."""

    file_id: str
    title: str = ""
    product: str | None = None
    domain: str | None = None


class HistoryTurn(BaseModel):
    """One earlier turn of the thread, as the roles see it."""

    message: str
    reply: str = ""
    status: str = "answer"
    query: str = ""
    language: str = "fa"
    options: list[ClarifyOption] = Field(default_factory=list)
    scope: Scope = Field(default_factory=Scope)
    # The documents the reply cited: a follow-up's product words are recognised against these.
    documents: list[DocumentLabel] = Field(default_factory=list)
