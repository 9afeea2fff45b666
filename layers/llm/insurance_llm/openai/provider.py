"""OpenAIProvider: the roles (insurance_llm/provider.py) on an OpenAI-compatible chat completions server."""

from __future__ import annotations

from typing import Any

from insurance_agent.config import ModelSettings
from insurance_llm.provider import LanguageModelProvider
from insurance_llm.openai.client import ChatCompletionsCaller


class OpenAIProvider(LanguageModelProvider):
    name = "openai"

    def default_caller(self, settings: ModelSettings, **options: Any) -> ChatCompletionsCaller:
        return ChatCompletionsCaller(settings=settings, **options)
