"""The labelled question file of `agent eval`: a JSON list of items in the insurance-law-fa set's format.

An item is one question (`kind` any label, e.g. formal / colloquial / english, with `file_ids` and
`must_contain`), an unanswerable question (`kind: "unanswerable"`, no expectations), or a chain
(`kind: "chain"`, `turns`: questions asked in order in one thread). Other keys (`span`, `lang`,
`why_not_answerable`) are kept for the reader and ignored here.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from agent_local.evaluation.scoring import Half, half_of


class QuestionFileError(ValueError):
    """The question file cannot be used; the message names the file and the item."""


class Expected(BaseModel):
    """What a correct answer cites (any one of `file_ids`) and says (any one of `must_contain`)."""

    model_config = ConfigDict(extra="ignore")

    question: str = Field(min_length=1)
    file_ids: list[str] = Field(default_factory=list)
    must_contain: list[str] = Field(default_factory=list)

    def require_answer(self) -> None:
        if not self.file_ids or not self.must_contain:
            raise ValueError("an answerable question needs file_ids and must_contain (at least one each)")


class Item(BaseModel):
    model_config = ConfigDict(extra="ignore")

    id: str = Field(min_length=1)
    kind: str = Field(min_length=1)
    question: str | None = None
    file_ids: list[str] = Field(default_factory=list)
    must_contain: list[str] = Field(default_factory=list)
    turns: list[Expected] | None = None
    # A set written to fit on says so; otherwise the half follows from the id's hash.
    half: Literal["fit", "report"] | None = None

    @model_validator(mode="after")
    def _shape(self) -> Item:
        if self.kind == "chain":
            if not self.turns:
                raise ValueError("a chain needs turns (a list of questions with file_ids and must_contain)")
            for number, turn in enumerate(self.turns, 1):
                try:
                    turn.require_answer()
                except ValueError as error:
                    raise ValueError(f"turn {number}: {error}") from None
        elif self.turns is not None:
            raise ValueError(f"only kind 'chain' has turns (this item's kind is {self.kind!r})")
        elif not self.question or not self.question.strip():
            raise ValueError("question is missing or empty")
        elif self.kind != "unanswerable":
            self.expected().require_answer()
        return self

    def expected(self) -> Expected:
        return Expected(question=self.question or "", file_ids=self.file_ids, must_contain=self.must_contain)

    def split(self) -> Half:
        return self.half or half_of(self.id)

    def questions(self) -> list[tuple[str, Expected]]:
        """(category, expectation) per turn: a chain's first turn and its follow-ups are categories of their own."""
        if self.turns:
            return [("chain-first" if n == 0 else "follow-up", turn) for n, turn in enumerate(self.turns)]
        return [(self.kind, self.expected())]


class QuestionSet(BaseModel):
    items: list[Item]

    def half(self, half: Half | None) -> QuestionSet:
        """Only the items of one half (all of them for None)."""
        return self if half is None else QuestionSet(items=[i for i in self.items if i.split() == half])

    @property
    def turn_count(self) -> int:
        return sum(len(item.questions()) for item in self.items)


def load_questions(path: Path) -> QuestionSet:
    """Read and check a question file; a QuestionFileError says which item is wrong and why."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as error:
        raise QuestionFileError(f"{path}: cannot read it ({type(error).__name__}: {error})") from None
    except json.JSONDecodeError as error:
        raise QuestionFileError(f"{path}: not JSON (line {error.lineno}, column {error.colno}: {error.msg})") from None
    if not isinstance(data, list) or not data:
        raise QuestionFileError(f"{path}: expected a non-empty JSON list of question items")
    items: list[Item] = []
    seen: set[str] = set()
    for index, entry in enumerate(data, 1):
        label = f"item {index}" + (f" (id {entry['id']!r})" if isinstance(entry, dict) and "id" in entry else "")
        try:
            item = Item.model_validate(entry)
        except ValidationError as error:
            raise QuestionFileError(f"{path}: {label}: {_first_problem(error)}") from None
        if item.id in seen:
            raise QuestionFileError(f"{path}: {label}: the id is used by an earlier item")
        seen.add(item.id)
        items.append(item)
    return QuestionSet(items=items)


def _first_problem(error: ValidationError) -> str:
    problem = error.errors()[0]
    where = ".".join(str(part) for part in problem["loc"])
    message = problem["msg"].removeprefix("Value error, ")
    return f"{where}: {message}" if where else message
