"""Long-term user memory (ADR 0007's Store): durable, non-sensitive facts per tenant and user."""

from __future__ import annotations

import json

from pydantic import BaseModel, Field

from insurance_agent.config import get_settings
from insurance_agent.policy.pii import is_clean
from insurance_agent.store import dynamo

MAX_APPLIED_TURNS = 50


class Profile(BaseModel):
    facts: dict[str, list[str]] = Field(default_factory=dict)
    preferred_language: str | None = None
    applied_turns: list[str] = Field(default_factory=list)
    version: int = 0

    def public(self) -> dict:
        """What other components (handoff context, contextualize) may see."""
        data: dict = {key: sorted(values) for key, values in self.facts.items() if values}
        if self.preferred_language:
            data["preferred_language"] = self.preferred_language
        return data


def _key(tenant_id: str, user_id: str) -> dict:
    return {"user_key": f"{tenant_id}#{user_id}"}


def get_profile(tenant_id: str, user_id: str) -> Profile:
    item = dynamo.get_item(get_settings().tables.profiles, _key(tenant_id, user_id))
    if not item:
        return Profile()
    return Profile(
        facts=json.loads(item.get("facts", "{}")),
        preferred_language=item.get("preferred_language"),
        applied_turns=list(item.get("applied_turns", [])),
        version=int(item.get("version", 0)),
    )


def remember(
    tenant_id: str, user_id: str, turn_id: str, facts: dict[str, list[str]], language: str | None
) -> Profile:
    """Merge facts into the profile once per turn_id; any value that looks sensitive is dropped."""
    table = dynamo.table(get_settings().tables.profiles)
    for _ in range(5):
        profile = get_profile(tenant_id, user_id)
        if turn_id in profile.applied_turns:
            return profile
        merged = {key: set(values) for key, values in profile.facts.items()}
        for key, values in facts.items():
            merged.setdefault(key, set()).update(v for v in values if is_clean(v) and is_clean(key))
        previous = profile.version
        profile.facts = {key: sorted(values) for key, values in merged.items() if values}
        profile.preferred_language = language or profile.preferred_language
        profile.applied_turns = (profile.applied_turns + [turn_id])[-MAX_APPLIED_TURNS:]
        profile.version += 1
        item = _key(tenant_id, user_id) | {
            "facts": dynamo.dumps(profile.facts),
            "applied_turns": profile.applied_turns,
            "version": profile.version,
            "updated_at": dynamo.now(),
        }
        if profile.preferred_language:
            item["preferred_language"] = profile.preferred_language
        try:
            table.put_item(
                Item=item,
                ConditionExpression="attribute_not_exists(user_key) OR #v = :v",
                ExpressionAttributeNames={"#v": "version"},
                ExpressionAttributeValues={":v": previous},
            )
            return profile
        except dynamo.STORE_ERRORS as error:
            if not dynamo.is_condition_failure(error):
                dynamo.raise_typed(error)
    return get_profile(tenant_id, user_id)
