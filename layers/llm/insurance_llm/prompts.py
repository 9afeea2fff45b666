"""Prompt files (insurance_llm/templates/) and the tagged data blocks a role sends as its user message."""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from string import Template
from typing import Any

from insurance_agent.errors import ConfigurationError

PROMPTS_DIR = Path(__file__).resolve().parent / "templates"
LANGUAGE_NAMES = {"fa": "Persian", "en": "English"}


@lru_cache(maxsize=32)
def _read(name: str) -> str | None:
    path = PROMPTS_DIR / f"{name}.md"
    try:
        return path.read_text(encoding="utf-8").strip()
    except FileNotFoundError:
        return None


def system_prompt(role: str, language: str | None = None, **values: str) -> str:
    """The role's system prompt with `$placeholders` filled, plus its variant for `language` if any."""
    base = _read(role)
    if base is None:
        raise ConfigurationError(f"prompt file {role}.md is missing from {PROMPTS_DIR}")
    try:
        text = Template(base).substitute(values)
    except (KeyError, ValueError) as exc:
        raise ConfigurationError(f"prompt {role}.md has a placeholder without a value: {exc}") from exc
    variant = _read(f"{role}.{language}") if language else None
    return f"{text}\n\n{variant}" if variant else text


def as_data(value: Any) -> str:
    """JSON for a tagged block; < and > are escaped so data can never close or open a tag."""
    return json.dumps(value, ensure_ascii=False, indent=1).replace("<", "\\u003c").replace(">", "\\u003e")


def block(tag: str, value: Any) -> str:
    """`<tag>` + the value as JSON data + `</tag>`."""
    return f"<{tag}>\n{as_data(value)}\n</{tag}>"


def user_prompt(*blocks: str, task: str) -> str:
    """The role's user message: its data blocks, then what to do with them."""
    return "\n\n".join([*blocks, task])
