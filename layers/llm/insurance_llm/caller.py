"""One structured-output call to a model service, with the retry policy the graph relies on.

What every language-model service gets (insurance_llm/bedrock/client.py, insurance_llm/openai/client.py):

- Transient faults (throttling, 5xx, timeouts, dropped connections: the service decides which) are
  retried with jittered exponential backoff, at most `max_attempts` attempts in all, while the
  invocation has time for another one; then TransientError, which the ASL retries in a fresh
  invocation. Other errors propagate unchanged.
- Output that does not fit the schema gets one corrective turn (the validation error is sent back);
  a second failure is ModelOutputError, which the ASL hands to a person as `model_output`.
- A refusal by the service itself (a guardrail, a content filter) raises ModelRefusedError: the ASL
  hands such a turn to a person (restricted_intent), it is not a fault.
- Any other answer without the structured output (empty, or prose) returns None: the role decides
  what it means.
"""

from __future__ import annotations

import random
import time
from abc import ABC, abstractmethod
from collections import OrderedDict
from collections.abc import Callable
from typing import Any, TypeVar

from pydantic import BaseModel

from insurance_agent import deadline, invocations
from insurance_agent.config import ModelSettings, get_settings
from insurance_agent.errors import ModelOutputError, ModelRefusedError, TransientError
from insurance_agent.observability import logger, metrics

W = TypeVar("W", bound=BaseModel)
BACKOFF_BASE_SECONDS = 0.5
BACKOFF_CAP_SECONDS = 8.0
MAX_RUNNABLES = 64


class RetryingCaller(ABC):
    """The call loop; a service supplies its chat model, its transient errors and its refusals."""

    def __init__(
        self,
        settings: ModelSettings | None = None,
        sleep: Callable[[float], None] = time.sleep,
        jitter: Callable[[float, float], float] = random.uniform,
    ) -> None:
        self.settings = settings or get_settings().models
        self._sleep = sleep
        self._jitter = jitter
        self._runnables: OrderedDict[tuple[str, type], Any] = OrderedDict()

    # -- what a service defines ---------------------------------------------------------------------

    @abstractmethod
    def structured(self, model_id: str, schema: type[W]) -> Any:
        """A runnable answering {"raw", "parsed", "parsing_error"} (with_structured_output, include_raw)."""

    @abstractmethod
    def is_transient(self, error: BaseException) -> bool:
        """Worth another attempt: throttling, a 5xx, a timeout or a dropped connection."""

    def error_code(self, error: BaseException) -> str:
        return type(error).__name__

    def malformed(self, error: BaseException) -> bool:
        """Whether a raised error is the model's answer failing the schema (a client that parses itself)."""
        return False

    @abstractmethod
    def refusal(self, raw: Any) -> str | None:
        """The service's own refusal of the call (a guardrail, a content filter), or None."""

    def has_answer(self, raw: Any) -> bool:
        """Whether the raw message carries the structured answer at all (a tool call, or content)."""
        return bool(getattr(raw, "tool_calls", None))

    def correction(self, raw: Any, problem: str, schema: type[BaseModel]) -> list[Any]:
        """The messages that send the schema violation back (after `raw`)."""
        from langchain_core.messages import ToolMessage

        call_id = raw.tool_calls[0]["id"]
        return [raw, ToolMessage(content=correction_text(problem, schema), tool_call_id=call_id, status="error")]

    # -- the loop ---------------------------------------------------------------------------------

    def _runnable(self, model_id: str, schema: type[W]) -> Any:
        key = (model_id, schema)
        if key in self._runnables:
            self._runnables.move_to_end(key)
        else:
            self._runnables[key] = self.structured(model_id, schema)
            # A draft's schema is its evidence's (wire.grounded_answer): a warm function sees many.
            while len(self._runnables) > MAX_RUNNABLES:
                self._runnables.popitem(last=False)
        return self._runnables[key]

    def call(self, role: str, model_id: str, schema: type[W], system: str, prompt: str) -> W | None:
        """The model's answer parsed into `schema`; None when it answered without one."""
        from langchain_core.messages import HumanMessage, SystemMessage

        runnable = self._runnable(model_id, schema)
        messages: list[Any] = [SystemMessage(content=system), HumanMessage(content=prompt)]
        for turn in (1, 2):
            output = self._invoke(role, model_id, runnable, messages)
            raw = output["raw"]
            parsed, error = output.get("parsed"), output.get("parsing_error")
            if parsed is not None and error is None:
                return parsed
            stop = self.refusal(raw)
            if stop:
                logger.warning("the model service refused the call", extra={"role": role, "stop_reason": stop})
                metrics.add_metric(name="ModelRefusals", unit="Count", value=1)
                raise ModelRefusedError(f"{role}: {stop}")
            if not self.has_answer(raw):
                logger.warning("model returned no structured answer", extra={"role": role})
                return None
            problem = str(error) if error is not None else f"the answer did not match {schema.__name__}"
            logger.warning("model output failed its schema", extra={"role": role, "attempt": turn})
            if turn == 2:
                raise ModelOutputError(f"{role}: the model's output does not fit {schema.__name__} after a correction")
            messages = [*messages, *self.correction(raw, problem, schema)]
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
                if self.malformed(error):
                    # The answer was there but failed the schema: the same correction as a parsing error.
                    return {"raw": AIMessage(content="(an answer that does not fit the schema)"), "parsed": None,
                            "parsing_error": error}
                if not self.is_transient(error):
                    raise
                code = self.error_code(error)
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


def correction_text(problem: str, schema: type[BaseModel]) -> str:
    return (
        f"Error: these arguments do not fit the {schema.__name__} schema: {problem[:1500]}\n"
        f"Call {schema.__name__} again with arguments that fit its schema exactly."
    )
