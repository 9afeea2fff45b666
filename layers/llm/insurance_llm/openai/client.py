"""The OpenAI Chat Completions API as the roles' structured caller (insurance_llm/caller.py has the retry policy).

- One langchain-openai ChatOpenAI per model name, against `OPENAI_BASE_URL` (any compatible server)
  with the key of `OPENAI_API_KEY` or, on AWS, the secret named by `OPENAI_API_KEY_SECRET`. The SDK's
  own retries are off and its timeout is the configured one: the caller retries while the
  invocation has time, the ASL after that.
- Structured output as the server supports it (`OPENAI_STRUCTURED_OUTPUT`): a JSON schema in
  `response_format`, or a forced tool call.
- Transient: 429, 5xx, timeouts and dropped connections. A refusal or a content-filter stop is the
  service's refusal (ModelRefusedError); other 4xx answers (a wrong key, an unknown model) propagate.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from insurance_agent import secrets
from insurance_agent.config import ModelSettings, get_settings
from insurance_agent.errors import ConfigurationError
from insurance_llm.caller import RetryingCaller, correction_text


class ChatCompletionsCaller(RetryingCaller):
    """Calls one model of an OpenAI-compatible server through ChatOpenAI.with_structured_output."""

    def __init__(self, settings: ModelSettings | None = None, **options: Any) -> None:
        super().__init__(settings or get_settings().models, **options)
        self._chat_models: dict[str, Any] = {}

    def chat_model(self, model_id: str) -> Any:
        """The ChatOpenAI of `model_id`, created once and reused."""
        if not model_id:
            raise ConfigurationError("no model name is configured (SMALL_MODEL_ID / MAIN_MODEL_ID)")
        if model_id not in self._chat_models:
            from langchain_openai import ChatOpenAI

            # A server without keys (llama.cpp, vLLM on a private network) still needs a non-empty one.
            api_key = secrets.resolve("OPENAI_API_KEY", "OPENAI_API_KEY_SECRET") or "none"
            self._chat_models[model_id] = ChatOpenAI(
                model=model_id,
                base_url=self.settings.openai_base_url,
                api_key=api_key,
                temperature=0.0,
                # `max_tokens`, not the `max_completion_tokens` langchain-openai sends for it: llama.cpp's
                # server ignores the newer name, so a model that loops wrote on until its context was full
                # (4,625 tokens, 170 s, seen with SmolLM2); vLLM, Ollama and LiteLLM take both.
                extra_body={"max_tokens": self.settings.max_output_tokens},
                timeout=self.settings.timeout_seconds,
                max_retries=0,
                streaming=False,
            )
        return self._chat_models[model_id]

    def structured(self, model_id: str, schema: type) -> Any:
        method = self.settings.openai_structured_output
        options = {"strict": True} if method == "json_schema" else {}
        return self.chat_model(model_id).with_structured_output(schema, method=method, include_raw=True, **options)

    def is_transient(self, error: BaseException) -> bool:
        import openai

        if isinstance(error, openai.APIConnectionError):  # includes APITimeoutError
            return True
        if isinstance(error, openai.APIStatusError):
            return error.status_code == 429 or error.status_code >= 500
        # A body that is not the API's JSON (a proxy's error page): the server is not answering properly.
        return isinstance(error, openai.APIResponseValidationError | ValueError)

    def malformed(self, error: BaseException) -> bool:
        # With response_format json_schema the SDK validates the answer itself and raises.
        from pydantic import ValidationError

        return isinstance(error, ValidationError)

    def error_code(self, error: BaseException) -> str:
        status = getattr(error, "status_code", None)
        return f"{type(error).__name__}({status})" if status else type(error).__name__

    def refusal(self, raw: Any) -> str | None:
        if (raw.response_metadata or {}).get("finish_reason") == "content_filter":
            return "content_filter"
        if (raw.additional_kwargs or {}).get("refusal"):
            return "refusal"
        return None

    def has_answer(self, raw: Any) -> bool:
        # A forced tool call answers in the call; a JSON schema answers in the content.
        if self.settings.openai_structured_output == "function_calling":
            return bool(raw.tool_calls)
        return bool(raw.tool_calls) or bool(str(raw.content or "").strip())

    def correction(self, raw: Any, problem: str, schema: type[BaseModel]) -> list[Any]:
        from langchain_core.messages import AIMessage, HumanMessage

        if not raw.tool_calls:
            return [raw, HumanMessage(content=correction_text(problem, schema).replace("Call", "Answer with", 1))]
        # The rejected call goes back as text, not as an assistant tool call and its tool result: beside
        # tool calls the API's content is null, which llama.cpp's server refuses (HTTP 500), and a
        # server need not take tool-result messages at all. The forced tool choice still applies.
        said = json.dumps({"name": raw.tool_calls[0]["name"], "arguments": raw.tool_calls[0]["args"]}, ensure_ascii=False)
        return [AIMessage(content=said), HumanMessage(content=correction_text(problem, schema))]


# -- whether the server takes the configured structured output (OpenAIProvider.check_service) ---------

#: The structured-output modes, and words a server's error about one uses when it names the cause.
MODES = ("json_schema", "function_calling")
_MODE_WORDS = {"json_schema": ("response_format", "json_schema"), "function_calling": ("tool_choice", "tools")}
# The probe's answer is a few tokens; the bound only keeps a model that rambles from holding the server.
PROBE_MAX_TOKENS = 32


@dataclass(frozen=True)
class ModeAnswer:
    """The server's answer to one structured request: "accepted" (it answered, whatever the model
    wrote), "rejected" (an HTTP error, with its status and body), or "unknown" (no answer in time, no
    connection, or a failure before the request was sent)."""

    outcome: str
    status: int | None = None
    body: str = ""

    def names(self, mode: str) -> bool:
        """Whether the error body names `mode`'s part of the request."""
        return any(word in self.body.lower() for word in _MODE_WORDS[mode])


def _probe_messages() -> list[Any]:
    from langchain_core.messages import HumanMessage, SystemMessage

    return [SystemMessage(content="Answer with the structured output only."),
            HumanMessage(content="Set ok to true.")]


def _probe_caller(settings: ModelSettings, mode: str, seconds: float) -> ChatCompletionsCaller:
    return ChatCompletionsCaller(settings.model_copy(update={
        "openai_structured_output": mode, "max_output_tokens": PROBE_MAX_TOKENS,
        "timeout_seconds": max(0.1, seconds), "max_attempts": 1}))


def ask_structured(settings: ModelSettings, model_id: str, mode: str, seconds: float) -> ModeAnswer:
    """One tiny structured request to `model_id` in `mode` through the client the roles use, so that
    the request has the shape a turn's has (strict json_schema, or a forced tool call)."""
    import openai
    from langchain_core.exceptions import OutputParserException
    from pydantic import ValidationError

    from insurance_llm.wire import StructuredOutputCheck

    caller = _probe_caller(settings, mode, seconds)
    try:
        caller.structured(model_id, StructuredOutputCheck).invoke(_probe_messages())
    except openai.APIStatusError as error:
        return ModeAnswer("rejected", error.status_code, f"{error.message} {json.dumps(error.body, default=str)}")
    except (ValidationError, OutputParserException, ValueError, openai.LengthFinishReasonError,
            openai.ContentFilterFinishReasonError, openai.APIResponseValidationError):
        # An answer came back that does not fit the tiny schema: the server took the request.
        return ModeAnswer("accepted")
    except Exception:  # noqa: BLE001 - a timeout, no connection, a key that cannot be read: no answer
        return ModeAnswer("unknown")
    return ModeAnswer("accepted")


def ask_plain(settings: ModelSettings, model_id: str, seconds: float) -> bool:
    """Whether the server answers the same request without structured output."""
    try:
        _probe_caller(settings, settings.openai_structured_output, seconds).chat_model(model_id).invoke(
            _probe_messages())
    except Exception:  # noqa: BLE001 - any failure: the server does not answer even a plain request
        return False
    return True
