"""The Converse API as the roles' structured caller (insurance_llm/caller.py has the retry policy).

- The bedrock-runtime client is built once per process (one Lambda container) with the configured
  connect/read timeouts and botocore's own retries off: retrying is decided by the caller, where the
  invocation's deadline is known, and the ASL retries a TransientError in a fresh invocation.
- Transient: throttling, 5xx and connection failures (RETRYABLE_CODES, or the HTTP status).
- A guardrail intervention or content filter stop is the service's refusal (ModelRefusedError).
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from botocore.exceptions import ClientError, ConnectionClosedError, ReadTimeoutError
from botocore.exceptions import ConnectionError as BotoConnectionError

from insurance_agent.config import ModelSettings, get_settings
from insurance_agent.errors import ConfigurationError
from insurance_llm.caller import RetryingCaller

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


class ConverseCaller(RetryingCaller):
    """Calls one model through ChatBedrockConverse.with_structured_output (a forced tool call), as configured."""

    def __init__(self, client: Any | None = None, settings: ModelSettings | None = None, **options: Any) -> None:
        super().__init__(settings or get_settings().models, **options)
        self._client = client
        self._chat_models: dict[str, Any] = {}

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

    def structured(self, model_id: str, schema: type) -> Any:
        return self.chat_model(model_id).with_structured_output(schema, include_raw=True)

    def is_transient(self, error: BaseException) -> bool:
        if isinstance(error, ClientError):
            code = error.response.get("Error", {}).get("Code", "")
            status = int(error.response.get("ResponseMetadata", {}).get("HTTPStatusCode") or 0)
            return code in RETRYABLE_CODES or status == 429 or status >= 500
        return isinstance(error, BotoConnectionError | ReadTimeoutError | ConnectionClosedError)

    def error_code(self, error: BaseException) -> str:
        if isinstance(error, ClientError):
            return error.response.get("Error", {}).get("Code", "ClientError")
        return type(error).__name__

    def refusal(self, raw: Any) -> str | None:
        stop = (raw.response_metadata or {}).get("stopReason")
        return stop if stop in REFUSAL_STOPS else None
