"""Per-turn working data (chunks, drafts, verdict details, the final reply) keyed by turn_id.

The execution payload carries only ids and verdicts; the bulky data lives here with a TTL.
Each part (a field of models/parts.TurnParts) is one JSON-string attribute, so floats need no
Decimal conversion; a part is written from its model and read back into it.

The record is also the turn's idempotency key for as long as it lives: load_memory creates it with
the caller's identity (tenant, user, thread, roles) under a condition, so a turn_id can belong to
one caller only, and the turn's commit marks it `committed_at`; a committed record is replayed,
never run again.
"""

from __future__ import annotations

import json
from functools import cache
from typing import Any

from pydantic import BaseModel, TypeAdapter, ValidationError

from insurance_agent.config import get_settings
from insurance_agent.errors import InvalidInputError
from insurance_agent.models.parts import TurnParts
from insurance_agent.policy.pii import mask_pii, mask_strings
from insurance_agent.store import dynamo

#: The attributes of a turn record that hold parts: the fields of the model, named once.
PARTS: tuple[str, ...] = tuple(TurnParts.model_fields)


# A turn record must stay far below DynamoDB's 400 KB item limit whatever the documents hold.
# Chunk texts are bounded by the chunker and messages by the contract; this per-part bound is the
# backstop that turns a bug upstream into a clean system_error instead of a failed write.
MAX_PART_BYTES = 96_000


class TurnOwner(BaseModel):
    """Who a turn_id belongs to: a replay must come from exactly this caller."""

    tenant_id: str
    user_id: str
    roles: list[str]

    def roles_key(self) -> str:
        return ",".join(self.roles)


class TurnRecordMeta(BaseModel):
    """The identity and commit state of a live turn record."""

    thread_id: str
    tenant_id: str | None = None
    user_id: str | None = None
    roles: str | None = None
    committed: bool = False

    def owned_by(self, thread_id: str, owner: TurnOwner) -> bool:
        return (self.thread_id == thread_id and self.tenant_id == owner.tenant_id
                and self.user_id == owner.user_id and self.roles == owner.roles_key())


def _masked(name: str, value: Any) -> Any:
    """Parts that hold the user's own words are stored with personal data masked.

    Document text (chunks, drafts quoting them) is not the user's and is kept as retrieved: later
    nodes check numbers against it. The reply's hand-off context is masked (the raw last message
    reaches the backend in the execution output only, never this table).
    """
    if name in ("history", "query"):
        return mask_strings(value)
    if name == "reply" and isinstance(value, dict) and isinstance(value.get("handoff_context"), dict):
        context = dict(value["handoff_context"])
        for key in ("rewritten_query", "conversation_summary", "last_message"):
            if isinstance(context.get(key), str):
                context[key] = mask_pii(context[key])
        return value | {"handoff_context": context}
    return value


@cache
def _part_type(name: str) -> TypeAdapter:
    """The type of part `name`, built on first use (a node writes only a few of the parts)."""
    return TypeAdapter(TurnParts.model_fields[name].annotation)


def _stored_form(name: str, value: Any) -> Any:
    """Part `name` as the JSON value its attribute holds; a value that is not of its type is a bug."""
    part = _part_type(name)
    try:
        return part.dump_python(part.validate_python(value), mode="json")
    except ValidationError as error:
        raise TypeError(f"turn part {name!r} is not of its type: {error}") from None


def _bounded(name: str, value: Any) -> str:
    text = dynamo.dumps(_masked(name, _stored_form(name, value)))
    if len(text.encode("utf-8")) > MAX_PART_BYTES:
        raise PartTooLargeError(f"turn part {name!r} is {len(text.encode('utf-8'))} bytes (limit {MAX_PART_BYTES})")
    return text


class PartTooLargeError(InvalidInputError):
    """A part of a turn would push its record towards DynamoDB's item limit: a bug upstream, never stored."""

    code = "turn_part_too_large"


def put_parts(turn_id: str, thread_id: str, *, owner: TurnOwner | None = None, commit: bool = False, **parts: Any) -> None:
    """Write the given parts of a turn (each of its TurnParts type); a turn_id can only ever belong
    to one thread (and owner).

    `owner` (load_memory, the record's first write) records who the turn belongs to and refuses a
    live record of anyone else; `commit` marks the turn applied, after its thread update.
    """
    unknown = set(parts) - set(PARTS)
    if unknown:
        raise ValueError(f"unknown turn parts: {sorted(unknown)}")
    settings = get_settings().tables
    now = dynamo.now()
    names = {"#thread": "thread_id", "#exp": "expires_at"}
    values: dict[str, Any] = {":thread": thread_id, ":exp": now + settings.turn_ttl_seconds, ":now": now}
    sets = ["#thread = :thread", "#exp = :exp"]
    condition = "attribute_not_exists(turn_id) OR #exp <= :now OR #thread = :thread"
    if owner is not None:
        names |= {"#tenant": "tenant_id", "#user": "user_id", "#roles": "roles"}
        values |= {":tenant": owner.tenant_id, ":user": owner.user_id, ":roles": owner.roles_key()}
        sets += ["#tenant = :tenant", "#user = :user", "#roles = :roles"]
        condition = ("attribute_not_exists(turn_id) OR #exp <= :now OR "
                     "(#thread = :thread AND #tenant = :tenant AND #user = :user AND #roles = :roles)")
    if commit:
        names["#committed"] = "committed_at"
        values[":committed"] = now
        sets.append("#committed = :committed")
    for index, (name, value) in enumerate(parts.items()):
        names[f"#p{index}"] = name
        values[f":p{index}"] = _bounded(name, value)
        sets.append(f"#p{index} = :p{index}")
    try:
        dynamo.table(settings.turns).update_item(
            Key={"turn_id": turn_id},
            UpdateExpression="SET " + ", ".join(sets),
            ConditionExpression=condition,
            ExpressionAttributeNames=names,
            ExpressionAttributeValues=values,
        )
    except dynamo.STORE_ERRORS as error:
        if dynamo.is_condition_failure(error):
            raise InvalidInputError("turn_id already used by another thread or caller") from error
        dynamo.raise_typed(error)


def get_meta(turn_id: str) -> TurnRecordMeta | None:
    """Identity and commit state of a live turn record (None when absent or expired)."""
    item = dynamo.get_item(get_settings().tables.turns, {"turn_id": turn_id})
    if not item or int(item.get("expires_at", 0)) <= dynamo.now():
        return None
    return TurnRecordMeta(
        thread_id=str(item.get("thread_id", "")),
        tenant_id=item.get("tenant_id"),
        user_id=item.get("user_id"),
        roles=item.get("roles"),
        committed="committed_at" in item,
    )


def get_parts(turn_id: str, thread_id: str) -> dict[str, Any]:
    """All stored parts of a live turn in their JSON form, as inspection tools read them (expired
    items are treated as absent)."""
    item = dynamo.get_item(get_settings().tables.turns, {"turn_id": turn_id})
    if not item or item.get("thread_id") != thread_id or int(item.get("expires_at", 0)) <= dynamo.now():
        return {}
    return {name: json.loads(item[name]) for name in PARTS if name in item}


def load_parts(turn_id: str, thread_id: str, message: str) -> TurnParts:
    """The stored parts of a live turn as their models; the query defaults to the user's `message`."""
    return TurnParts.of(get_parts(turn_id, thread_id), message)


def mark_committed(turn_id: str, thread_id: str) -> None:
    """Record that the turn was applied to its thread: from now on it is only ever replayed."""
    put_parts(turn_id, thread_id, commit=True)
