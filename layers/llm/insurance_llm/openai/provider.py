"""OpenAIProvider: the roles (insurance_llm/provider.py) on an OpenAI-compatible chat completions server."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar
from urllib.parse import urlsplit

from insurance_agent.config import ModelSettings, SettingProblem
from insurance_llm.provider import LanguageModelProvider
from insurance_llm.openai.client import ChatCompletionsCaller


class OpenAIProvider(LanguageModelProvider):
    name = "openai"
    model_parameters: ClassVar[dict[str, str]] = {"small_model_id": "OpenAISmallModel",
                                                  "main_model_id": "OpenAIMainModel"}

    @classmethod
    def check_settings(cls, settings: ModelSettings, environ: Mapping[str, str]) -> list[SettingProblem]:
        """The server's base URL and a served model name per role. The structured-output mechanism is
        one of two names, checked where the settings are read (config.model_settings)."""
        problems = []
        url = (settings.openai_base_url or "").strip()
        purpose = "the server's OpenAI-compatible base URL, such as https://llm.internal/v1"
        if not url:
            problems.append(SettingProblem(field="openai_base_url", problem="is not set", purpose=purpose))
        else:
            parts = urlsplit(url)
            # The value itself is not repeated: a URL may carry credentials.
            if parts.scheme not in ("http", "https") or not parts.hostname:
                problems.append(SettingProblem(field="openai_base_url", problem="is not an http(s) URL with a host",
                                               purpose=purpose))
        return problems + super().check_settings(settings, environ)

    def default_caller(self, settings: ModelSettings, **options: Any) -> ChatCompletionsCaller:
        return ChatCompletionsCaller(settings=settings, **options)
