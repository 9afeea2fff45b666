"""A narrowing of retrieval to some documents or one passage: the option a user picked from a clarifying question.

It is parsed once where it enters (a provider's contextualize result, a stored turn or thread, a
caller of `search`) and travels as this model; retrieval turns it into filter conditions.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_serializer

from insurance_agent.errors import InvalidInputError

#: The payload keys a scope may narrow on; any other key is refused, never silently dropped.
SCOPE_KEYS = ("file_id", "domain", "chunk_id")

_Value = Annotated[str, Field(min_length=1)]


class Scope(BaseModel):
    """Each key holds the values a chunk's payload key must take (all keys must hold); empty: no narrowing."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    file_id: list[_Value] = Field(default_factory=list)
    domain: list[_Value] = Field(default_factory=list)
    #: one passage the user picked from a clarifying question's provisions (policy/provisions.py)
    chunk_id: list[_Value] = Field(default_factory=list)

    @field_validator("file_id", "domain", "chunk_id", mode="before")
    @classmethod
    def _as_list(cls, value: Any) -> Any:
        # One value may be given bare, as the option picks write it; None or [] narrows nothing.
        if value is None:
            return []
        return [value] if isinstance(value, str) else value

    @model_serializer
    def _stored_form(self) -> dict[str, str | list[str]]:
        # The form turn and thread records have always held: a single value bare, no empty keys.
        return {key: values[0] if len(values) == 1 else list(values)
                for key, values in self.narrowing()}

    def narrowing(self) -> list[tuple[str, list[str]]]:
        """The keys that narrow, with their values."""
        return [(key, list(getattr(self, key))) for key in SCOPE_KEYS if getattr(self, key)]

    @property
    def first_domain(self) -> str | None:
        return self.domain[0] if self.domain else None

    @classmethod
    def of(cls, value: Scope | Mapping[str, Any] | None) -> Scope:
        """A caller's scope (a mapping of SCOPE_KEYS to a string or a list of strings), validated."""
        if isinstance(value, Scope):
            return value
        if not value:
            return cls()
        if not isinstance(value, Mapping) or set(value) - set(SCOPE_KEYS):
            raise InvalidInputError(f"scope may only have the keys {list(SCOPE_KEYS)}")
        try:
            return cls.model_validate(dict(value))
        except ValidationError as error:
            key = next((str(e["loc"][0]) for e in error.errors() if e["loc"]), "value")
            raise InvalidInputError(f"scope {key} must be a string or a list of strings") from None
