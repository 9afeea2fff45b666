"""Thread records: owner, status, recent turns and the cross-turn clarification counter.

Every write is a conditional put on `version` (optimistic concurrency): two turns racing on one
thread both land, the loser re-reads and re-applies. Writes are idempotent on turn_id.

Personal data is masked before anything is stored (the user's message and the query of each
recent turn), and a thread expires `thread_retention_days` after its last turn (`expires_at`,
the table's TTL attribute, refreshed on every write; an expired thread reads as absent).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Literal

from pydantic import BaseModel, Field

from insurance_agent.config import get_settings
from insurance_agent.errors import ThreadHandedOffError, ThreadNotOwnedError, TransientError
from insurance_agent.models.history import HistoryTurn
from insurance_agent.policy.pii import mask_pii
from insurance_agent.store import dynamo

MAX_TURN_IDS = 50
MAX_WRITE_ATTEMPTS = 6


class TurnEntry(HistoryTurn):
    """One committed turn as kept on the thread (the user's text and the bot's reply text)."""

    turn_id: str
    at: int = 0


class ThreadRecord(BaseModel):
    thread_id: str
    tenant_id: str
    user_id: str
    status: Literal["active", "handed_off"] = "active"
    version: int = 0
    turns: list[TurnEntry] = Field(default_factory=list)
    turn_ids: list[str] = Field(default_factory=list)
    clarify_count: int = 0
    clarify_topic: str = ""
    handed_off_reason: str | None = None
    created_at: int = 0
    updated_at: int = 0
    expires_at: int = 0

    def owned_by(self, tenant_id: str, user_id: str) -> bool:
        return self.tenant_id == tenant_id and self.user_id == user_id

    def history(self, limit: int) -> list[HistoryTurn]:
        return [HistoryTurn.model_validate(t.model_dump()) for t in self.turns[-limit:]]

    def hand_off(self, reason: str, entry: TurnEntry) -> None:
        """Latch the thread to a person: the escalating turn is its last entry, no clarification pends."""
        self.status = "handed_off"
        self.handed_off_reason = reason
        self.clarify_count = 0
        self.turns.append(entry)


def _to_item(record: ThreadRecord) -> dict:
    data = record.model_dump()
    for turn in data["turns"]:
        turn["message"] = mask_pii(turn.get("message") or "")
        turn["query"] = mask_pii(turn.get("query") or "")
    data["turns"] = dynamo.dumps(data["turns"])
    return {k: v for k, v in data.items() if v is not None}


def _from_item(item: dict) -> ThreadRecord:
    item = dict(item)
    item["turns"] = json.loads(item.get("turns") or "[]")
    for key in ("version", "clarify_count", "created_at", "updated_at", "expires_at"):
        item[key] = int(item.get(key, 0))
    return ThreadRecord.model_validate(item)


def _expired(item: dict) -> bool:
    expires = int(item.get("expires_at", 0) or 0)
    return 0 < expires <= dynamo.now()


def get_thread(thread_id: str) -> ThreadRecord | None:
    """The live thread (None when absent or past its retention; TTL deletion lags by up to days)."""
    item = dynamo.get_item(get_settings().tables.threads, {"thread_id": thread_id})
    return _from_item(item) if item and not _expired(item) else None


def update_thread(
    *,
    thread_id: str,
    tenant_id: str,
    user_id: str,
    turn_id: str,
    mutate: Callable[[ThreadRecord], None],
    allow_handed_off: bool = False,
) -> ThreadRecord:
    """Apply `mutate` to the thread under optimistic concurrency; a no-op if turn_id was applied.

    Creates the thread on its first turn. Refuses (typed errors) a thread owned by someone else and,
    unless `allow_handed_off`, a thread already handed to a human.
    """
    table = dynamo.table(get_settings().tables.threads)
    for _ in range(MAX_WRITE_ATTEMPTS):
        current = get_thread(thread_id)
        if current is None:
            record = ThreadRecord(
                thread_id=thread_id, tenant_id=tenant_id, user_id=user_id, created_at=dynamo.now()
            )
        else:
            if not current.owned_by(tenant_id, user_id):
                raise ThreadNotOwnedError("thread belongs to another user")
            if turn_id in current.turn_ids:
                return current
            if current.status == "handed_off" and not allow_handed_off:
                raise ThreadHandedOffError("thread was handed to a human")
            record = current.model_copy(deep=True)
        mutate(record)
        record.turn_ids = (record.turn_ids + [turn_id])[-MAX_TURN_IDS:]
        record.version += 1
        record.updated_at = dynamo.now()
        record.expires_at = record.updated_at + get_settings().tables.thread_retention_days * 86400
        if current is None:
            # A thread past its retention that TTL has not deleted yet is replaced, not merged.
            condition = {
                "ConditionExpression": "attribute_not_exists(thread_id) OR (#exp > :zero AND #exp <= :now)",
                "ExpressionAttributeNames": {"#exp": "expires_at"},
                "ExpressionAttributeValues": {":zero": 0, ":now": record.updated_at},
            }
        else:
            condition = {
                "ConditionExpression": "#v = :v",
                "ExpressionAttributeNames": {"#v": "version"},
                "ExpressionAttributeValues": {":v": current.version},
            }
        try:
            table.put_item(Item=_to_item(record), **condition)
            return record
        except dynamo.STORE_ERRORS as error:
            if dynamo.is_condition_failure(error):
                continue  # someone else wrote first: re-read and re-apply
            dynamo.raise_typed(error)
    raise TransientError("thread update kept conflicting")
