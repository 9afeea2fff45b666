"""OpenAIProvider: the roles (insurance_llm/provider.py) on an OpenAI-compatible chat completions server."""

from __future__ import annotations

from collections.abc import Mapping
import time
from typing import Any, ClassVar
from urllib.parse import urlsplit

from insurance_agent.config import ModelSettings, Role, SettingProblem
from insurance_agent.observability import logger
from insurance_llm.openai.client import MODES, ChatCompletionsCaller, ask_plain, ask_structured
from insurance_llm.provider import ROLE_MODELS, LanguageModelProvider

_MODE_PURPOSE = "how the server is asked for structured output: json_schema (response_format) or function_calling"
_MODE_PARTS = {"json_schema": "response_format", "function_calling": "tools"}


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

    @classmethod
    def check_service(cls, settings: ModelSettings, roles: tuple[Role, ...], seconds: float) -> list[SettingProblem]:
        """Whether the server takes the configured structured output (OPENAI_STRUCTURED_OUTPUT), asked
        of each model `roles` call in one tiny structured request. llama-cpp-python's server (0.3)
        answers `response_format: json_schema` with HTTP 500, which the caller retries as transient:
        every turn would end in `system_error` with the cause only in the logs.

        A rejection is definite when the error names the structured part of the request, or when the
        same request without structured output is answered; then the other mode is tried, to say
        whether to switch. Anything else (a timeout, no connection, a server that fails every
        request, 429) says nothing about the mode and finds no problem."""
        deadline = time.monotonic() + seconds
        mode = settings.openai_structured_output
        other = next(m for m in MODES if m != mode)
        for model_id in dict.fromkeys(getattr(settings, ROLE_MODELS[role]) for role in roles):
            answer = ask_structured(settings, model_id, mode, deadline - time.monotonic())
            if answer.outcome != "rejected" or answer.status in (408, 429):
                if answer.outcome == "unknown":
                    logger.warning("the model server did not answer the structured-output check",
                                   extra={"model": model_id, "mode": mode})
                continue
            if answer.names(mode):
                why = f"HTTP {answer.status} to a structured request, naming its {_MODE_PARTS[mode]}"
            elif ask_plain(settings, model_id, deadline - time.monotonic()):
                why = f"HTTP {answer.status} to a structured request, while a plain one is answered"
            else:
                continue  # the server fails more than this mode: not this check's to name
            tried = ask_structured(settings, model_id, other, deadline - time.monotonic())
            problem = f"is {mode}, which the server at {_shown(settings.openai_base_url)} does not accept ({why})"
            if tried.outcome == "rejected" and (tried.names(other) or tried.status not in (408, 429)):
                return [SettingProblem(field="openai_structured_output", purpose=_MODE_PURPOSE,
                                       problem=f"{problem}, nor {other} (HTTP {tried.status})")]
            if tried.outcome == "accepted":
                problem += f"; it answers {other}"
            return [SettingProblem(field="openai_structured_output", problem=problem, purpose=_MODE_PURPOSE,
                                   value=other)]
        return []

    def default_caller(self, settings: ModelSettings, **options: Any) -> ChatCompletionsCaller:
        return ChatCompletionsCaller(settings=settings, **options)


def _shown(url: str | None) -> str:
    """The base URL without what may be a credential (user info, a query)."""
    parts = urlsplit((url or "").strip())
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    netloc = f"{host}:{parts.port}" if parts.port else host
    return f"{parts.scheme}://{netloc}{parts.path}"
