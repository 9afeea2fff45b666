"""Per-turn working data (chunks, drafts, verdict details, the final reply) keyed by turn_id.

The execution payload carries only ids and verdicts; the bulky data lives here with a TTL.
Each part is one JSON-string attribute, so floats need no Decimal conversion.
"""

from __future__ import annotations

import json
from typing import Any

from botocore.exceptions import ClientError

from insurance_agent.config import get_settings
from insurance_agent.errors import InvalidInputError
from insurance_agent.store import dynamo

PARTS = (
    "history", "profile", "query", "scope", "chunks", "account_chunks", "grade", "options", "draft",
    "verify", "feedback", "reply",
)


def put_parts(turn_id: str, thread_id: str, **parts: Any) -> None:
    """Write the given parts of a turn; a turn_id can only ever belong to one thread."""
    unknown = set(parts) - set(PARTS)
    if unknown:
        raise ValueError(f"unknown turn parts: {sorted(unknown)}")
    settings = get_settings().tables
    names = {"#thread": "thread_id", "#exp": "expires_at"}
    values: dict[str, Any] = {":thread": thread_id, ":exp": dynamo.now() + settings.turn_ttl_seconds}
    sets = ["#thread = :thread", "#exp = :exp"]
    for index, (name, value) in enumerate(parts.items()):
        names[f"#p{index}"] = name
        values[f":p{index}"] = dynamo.dumps(value)
        sets.append(f"#p{index} = :p{index}")
    try:
        dynamo.table(settings.turns).update_item(
            Key={"turn_id": turn_id},
            UpdateExpression="SET " + ", ".join(sets),
            ConditionExpression="attribute_not_exists(turn_id) OR #thread = :thread",
            ExpressionAttributeNames=names,
            ExpressionAttributeValues=values,
        )
    except ClientError as error:
        if dynamo.is_condition_failure(error):
            raise InvalidInputError("turn_id already used on another thread") from error
        dynamo.raise_typed(error)


def get_parts(turn_id: str, thread_id: str) -> dict[str, Any]:
    """All stored parts of a live turn (expired items are treated as absent)."""
    item = dynamo.get_item(get_settings().tables.turns, {"turn_id": turn_id})
    if not item or item.get("thread_id") != thread_id or int(item.get("expires_at", 0)) <= dynamo.now():
        return {}
    return {name: json.loads(item[name]) for name in PARTS if name in item}
