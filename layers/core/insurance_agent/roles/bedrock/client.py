"""One structured-output call to a Bedrock model, with the retry policy the graph relies on.

- The bedrock-runtime client is built once per process (one Lambda container) with the configured
  connect/read timeouts and botocore's own retries off: retrying is decided here, where the
  invocation's deadline is known, and the ASL retries a TransientError in a fresh invocation.
- Throttling, 5xx and connection failures are retried with jittered exponential backoff, at most
  `max_attempts` attempts in all; then TransientError. Other client errors propagate unchanged.
- Output that does not fit the tool schema gets one corrective turn (the validation error is sent
  back as the tool result); a second failure is ModelOutputError.
- A guardrail intervention or content filter stop raises ModelRefusedError, whatever the role:
  the ASL hands such a turn to a person (restricted_intent), it is not a fault.
- Any other answer without a tool call (empty, or a refusal in prose) returns None: the role
  decides what it means.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from functools import lru_cache
from typing import Any, TypeVar

from botocore.exceptions import ClientError, ConnectionClosedError, ReadTimeoutError
from botocore.exceptions import ConnectionError as BotoConnectionError
from pydantic import BaseModel

from insurance_agent import deadline, invocations
from insurance_agent.config import ModelSettings, get_settings
from insurance_agent.errors import ConfigurationError, ModelOutputError, ModelRefusedError, TransientError
from insurance_agent.observability import logger, metrics

W = TypeVar("W", bound=BaseModel)

# Error codes of bedrock-runtime that mean "try again later", whatever their HTTP status.
RETRYABLE_CODES = frozenset(
    {
        "ThrottlingException",
        "TooManyRequestsException",
        "ServiceUnavailableException",
        "InternalServerException",
        "ModelNotReadyException",
        "ModelTimeoutException",
        "RequestTimeout",
        "RequestTimeoutException",
    }
)
REFUSAL_STOPS = frozenset({"guardrail_intervened", "content_filtered"})
BACKOFF_BASE_SECONDS = 0.5
BACKOFF_CAP_SECONDS = 8.0


@lru_cache(maxsize=1)
def runtime_client() -> Any:
    """The process-wide bedrock-runtime client (timeouts from settings, no botocore retries)."""
    import boto3
    from botocore.config import Config

    settings = get_settings().models
    config = Config(
        connect_timeout=settings.connect_timeout_seconds,
        read_timeout=settings.timeout_seconds,
        retries={"total_max_attempts": 1, "mode": "standard"},
        user_agent_extra="insurance-agent",
    )
    return boto3.client("bedrock-runtime", region_name=settings.bedrock_region, config=config)


def is_transient(error: BaseException) -> bool:
    """Throttling, a 5xx, a timeout or a dropped connection: worth another attempt."""
    if isinstance(error, ClientError):
        code = error.response.get("Error", {}).get("Code", "")
        status = int(error.response.get("ResponseMetadata", {}).get("HTTPStatusCode") or 0)
        return code in RETRYABLE_CODES or status == 429 or status >= 500
    return isinstance(error, BotoConnectionError | ReadTimeoutError | ConnectionClosedError)


def _error_code(error: BaseException) -> str:
    if isinstance(error, ClientError):
        return error.response.get("Error", {}).get("Code", "ClientError")
    return type(error).__name__


class StructuredCaller:
    """Calls one model through ChatBedrockConverse.with_structured_output, as configured."""

    def __init__(
        self,
        client: Any | None = None,
        settings: ModelSettings | None = None,
        sleep: Callable[[float], None] = time.sleep,
        jitter: Callable[[float, float], float] = random.uniform,
    ) -> None:
        self.settings = settings or get_settings().models
        self._client = client
        self._sleep = sleep
        self._jitter = jitter
        self._chat_models: dict[str, Any] = {}
        self._runnables: dict[tuple[str, type], Any] = {}

    @property
    def client(self) -> Any:
        if self._client is None:
            self._client = runtime_client()
        return self._client

    def chat_model(self, model_id: str) -> Any:
        """The ChatBedrockConverse of `model_id`, created once and reused."""
        if not model_id:
            raise ConfigurationError("no Bedrock model id is configured (SMALL_MODEL_ID / MAIN_MODEL_ID)")
        if model_id not in self._chat_models:
            from langchain_aws import ChatBedrockConverse

            guardrail = None
            if self.settings.guardrail_id:
                guardrail = {"guardrailIdentifier": self.settings.guardrail_id,
                             "guardrailVersion": self.settings.guardrail_version, "trace": "disabled"}
            self._chat_models[model_id] = ChatBedrockConverse(
                model=model_id,
                client=self.client,
                region_name=self.settings.bedrock_region or self.client.meta.region_name,
                temperature=0.0,
                max_tokens=self.settings.max_output_tokens,
                disable_streaming=True,  # one Converse call per role: nothing to stream to
                guardrail_config=guardrail,
            )
        return self._chat_models[model_id]

    def _structured(self, model_id: str, schema: type[W]) -> Any:
        key = (model_id, schema)
        if key not in self._runnables:
            self._runnables[key] = self.chat_model(model_id).with_structured_output(schema, include_raw=True)
        return self._runnables[key]

    def call(self, role: str, model_id: str, schema: type[W], system: str, prompt: str) -> W | None:
        """The model's tool call parsed into `schema`; None when it answered without one (a refusal)."""
        from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage

        runnable = self._structured(model_id, schema)
        messages: list[Any] = [SystemMessage(content=system), HumanMessage(content=prompt)]
        for turn in (1, 2):
            output = self._invoke(role, model_id, runnable, messages)
            raw: AIMessage = output["raw"]
            parsed, error = output.get("parsed"), output.get("parsing_error")
            if parsed is not None and error is None:
                return parsed
            stop = (raw.response_metadata or {}).get("stopReason")
            if stop in REFUSAL_STOPS:
                logger.warning("the model service refused the call", extra={"role": role, "stop_reason": stop})
                metrics.add_metric(name="ModelRefusals", unit="Count", value=1)
                raise ModelRefusedError(f"{role}: {stop}")
            if not raw.tool_calls:
                logger.warning("model returned no tool call", extra={"role": role, "stop_reason": stop})
                return None
            problem = str(error) if error is not None else f"the tool call did not match {schema.__name__}"
            logger.warning("model output failed its schema", extra={"role": role, "attempt": turn})
            if turn == 2:
                raise ModelOutputError(f"{role}: the model's output does not fit {schema.__name__} after a correction")
            call_id = raw.tool_calls[0]["id"]
            correction = (
                f"Error: these arguments do not fit the {schema.__name__} schema: {problem[:1500]}\n"
                f"Call {schema.__name__} again with arguments that fit its schema exactly."
            )
            messages = [*messages, raw, ToolMessage(content=correction, tool_call_id=call_id, status="error")]
        raise AssertionError("unreachable")  # pragma: no cover

    def _invoke(self, role: str, model_id: str, runnable: Any, messages: list[Any]) -> dict[str, Any]:
        """One logical call: attempts until success, a non-transient error, or the attempts run out."""
        from langchain_core.exceptions import OutputParserException
        from langchain_core.messages import AIMessage

        attempts = max(1, self.settings.max_attempts)
        for attempt in range(1, attempts + 1):
            # Every attempt is a request the model service sees (and bills), whatever its outcome.
            invocations.record()
            metrics.add_metric(name="ModelInvocations", unit="Count", value=1)
            try:
                return runnable.invoke(messages)
            except OutputParserException:
                # Raised before parsing when a model without forced tool choice answers in prose.
                return {"raw": AIMessage(content=""), "parsed": None, "parsing_error": None}
            except Exception as error:  # classified below: re-raised unless transient
                if not is_transient(error):
                    raise
                code = _error_code(error)
                logger.warning(
                    "transient model error", extra={"role": role, "model": model_id, "attempt": attempt, "code": code}
                )
                if attempt == attempts:
                    raise TransientError(f"{role}: {code} after {attempts} attempts") from error
                pause = self._jitter(0.0, min(BACKOFF_CAP_SECONDS, BACKOFF_BASE_SECONDS * 2**attempt))
                left = deadline.remaining_seconds()
                needed = pause + self.settings.connect_timeout_seconds + self.settings.timeout_seconds
                if left is not None and left < needed + 1.0:
                    # Not enough time for another attempt in this invocation: let the ASL retry it.
                    raise TransientError(f"{role}: {code}; no time left for another attempt") from error
                self._sleep(pause)
        raise AssertionError("unreachable")  # pragma: no cover
