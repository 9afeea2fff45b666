"""Pending hand-offs: the intent to latch a thread, written before the latch itself.

Escalate writes this marker before its thread write. When the thread write then fails for good (the
Threads table throttled or conflicting past every retry, the node timing out), the state machine
still tells the user a person takes over (`EscalateFallback`), and the marker is what makes that
hold: the thread's next turn finds it in load_memory, latches the thread and is refused
`thread_handed_off`. After a successful latch the marker is deleted.

The marker lives in the Turns table under the key `handoff#<thread_id>`: `#` is not an id
character (models.turn.ID_PATTERN), so the key can never be a turn's. It is kept as long as a
thread is (`thread_retention_days`). The user's message in it is masked like the thread's copy.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel

from insurance_agent.config import get_settings
from insurance_agent.policy.pii import mask_pii
from insurance_agent.store import dynamo

PREFIX = "handoff#"


class PendingHandoff(BaseModel):
    """A hand-off the user was told about, for a thread that may not record it yet."""

    thread_id: str
    tenant_id: str
    user_id: str
    turn_id: str
    reason: str
    message: str  # the user's message, masked
    reply: str  # what the hand-off told the user
    query: str = ""  # masked
    language: str = "fa"
    at: int = 0

    def applies_to(self, thread: Any) -> bool:
        """True when the thread (a ThreadRecord or None) does not record this hand-off yet.

        A marker whose latch landed is normally deleted; if that delete failed, the thread is handed
        off (nothing reopens a thread; an operation that ever does must delete its marker). Turns
        other callers committed meanwhile do not void it: the user was told of the hand-off.
        """
        if thread is None:
            return True
        return thread.status != "handed_off" and self.turn_id not in thread.turn_ids


def _key(thread_id: str) -> dict[str, str]:
    return {"turn_id": PREFIX + thread_id}


def put(pending: PendingHandoff) -> None:
    """Record the intent (idempotent: the same turn writes the same marker); store errors are raised."""
    settings = get_settings().tables
    data = pending.model_dump() | {"message": mask_pii(pending.message), "query": mask_pii(pending.query)}
    try:
        dynamo.table(settings.turns).put_item(Item=_key(pending.thread_id) | {
            "thread_id": pending.thread_id,
            "handoff_turn_id": pending.turn_id,
            "marker": dynamo.dumps(data),
            "expires_at": pending.at + settings.thread_retention_days * 86400,
        })
    except dynamo.STORE_ERRORS as error:
        dynamo.raise_typed(error)


def get(thread_id: str) -> PendingHandoff | None:
    """The thread's pending hand-off, if one is recorded and live."""
    item = dynamo.get_item(get_settings().tables.turns, _key(thread_id))
    if not item or "marker" not in item or int(item.get("expires_at", 0)) <= dynamo.now():
        return None
    return PendingHandoff.model_validate(json.loads(item["marker"]))


def clear(thread_id: str, turn_id: str) -> None:
    """Delete the marker once its latch landed (only if it is still this turn's)."""
    try:
        dynamo.table(get_settings().tables.turns).delete_item(
            Key=_key(thread_id),
            ConditionExpression="#turn = :turn",
            ExpressionAttributeNames={"#turn": "handoff_turn_id"},
            ExpressionAttributeValues={":turn": turn_id},
        )
    except dynamo.STORE_ERRORS as error:
        if not dynamo.is_condition_failure(error):
            dynamo.raise_typed(error)
