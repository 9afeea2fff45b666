"""OpenAIProvider: the roles (roles/llm/provider.py) on an OpenAI-compatible chat completions server."""

from __future__ import annotations

from collections.abc import Callable

from insurance_agent.config import Settings, get_settings
from insurance_agent.roles.llm.provider import LanguageModelProvider, StructuredCaller
from insurance_agent.roles.openai.client import ChatCompletionsCaller


class OpenAIProvider(LanguageModelProvider):
    name = "openai"

    def __init__(
        self,
        caller: StructuredCaller | None = None,
        *,
        settings: Settings | None = None,
        sleep: Callable[[float], None] | None = None,
    ) -> None:
        settings = settings or get_settings()
        if caller is None:
            options = {"sleep": sleep} if sleep is not None else {}
            caller = ChatCompletionsCaller(settings=settings.models, **options)
        super().__init__(caller, settings)
