"""The wrapper every node Lambda uses: parse the state, correlate logs, run the node, shape the result."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.metrics.functions import is_metrics_disabled
from aws_lambda_powertools.utilities.typing import LambdaContext

from insurance_agent import deadline, invocations
from insurance_agent.config import ROLES
from insurance_agent.errors import ConfigurationError
from insurance_agent.models.state import TurnState
from insurance_agent.models.turn import ID_PATTERN
from insurance_agent.observability import emit, logger, metrics, tracer
from insurance_agent.serving import serving

NodeRun = Callable[[TurnState], TurnState]
# Nodes that have run in this process: the first invocation of each is its cold start (one node per
# process on Lambda; the local stack hosts all of them in one).
_warm: set[str] = set()
# The nodes after which the ASL goes straight to Done: their reply is the turn's outcome.
_REPLY_NODES = frozenset({"LoadMemory", "WriteMemory", "Escalate"})


def node_handler(
    name: str, run: NodeRun, *, raw_input: bool = False, cold_start: Callable[[], None] | None = None
) -> Callable[[dict[str, Any], LambdaContext], dict[str, Any]]:
    """Build the Lambda handler of node `name` (the ASL state name, recorded in the trace path).

    `raw_input`: the event is the execution input as the backend sent it (the graph's first state),
    not an execution state; it may be anything JSON can hold.

    `cold_start`: a check of the function's configuration, run here, at import (Lambda's Init), e.g.
    the model provider's settings (roles/base.check_model_settings). A ConfigurationError is logged
    at Init, where an operator looks after a deploy; then every invocation fails at once with it,
    before any work. The ASL catches it like any node failure (RecordSystemError), and Escalate hands
    the turn over as `system_error` with its fixed message and publishes the ConfigurationError metric
    that an alarm watches. Raising at Init would reach the ASL the same way, but the runtime exits
    after reporting an Init error, so Lambda would start a new environment and repeat the whole Init
    (seconds on a model node) for every invocation of every turn.
    """
    # A model node serves its own role (ROLE_PROVIDERS): its provider, its check, its word analysis.
    role = name.lower() if name.lower() in ROLES else None
    with serving(role):
        misconfigured = _cold_start_check(name, cold_start)

    @metrics.log_metrics
    @tracer.capture_lambda_handler(capture_response=False)
    @logger.inject_lambda_context(clear_state=True)
    def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
        token, counted = deadline.start(context), invocations.start()
        started = time.perf_counter()
        if name not in _warm:
            _warm.add(name)
            emit("ColdStart", Node=name)
        try:
            if misconfigured is not None:
                raise ConfigurationError(misconfigured)
            with serving(role):
                return _run(event)
        except Exception as error:
            # The ASL retries or catches it; this record is where the type and traceback are kept.
            logger.exception("node failed", extra={"error_type": type(error).__name__})
            emit("NodeFailures", Node=name, ErrorType=type(error).__name__)
            raise
        finally:
            emit("NodeLatency", (time.perf_counter() - started) * 1000, MetricUnit.Milliseconds, Node=name)
            invocations.end(counted)
            deadline.end(token)

    def entry(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
        try:
            return handler(event, context)
        finally:
            # Powertools' own reading of POWERTOOLS_METRICS_DISABLED, as emit() and the flush use.
            if is_metrics_disabled():
                # Powertools keeps unflushed metrics when disabled; a long-lived local stack must not.
                metrics.clear_metrics()

    def _run(event: dict[str, Any]) -> dict[str, Any]:
        state = TurnState(input=event) if raw_input else TurnState.model_validate(event)
        ids = state.turn.model_dump() if state.turn else state.input if isinstance(state.input, dict) else {}
        execution = _execution_id(event) if not raw_input else ""
        # Only well-formed ids go into log keys and trace annotations: raw input may hold control or
        # bidi characters.
        keys = {key: _log_id(ids.get(key)) for key in ("tenant_id", "thread_id", "turn_id")}
        logger.append_keys(node=name, execution=execution, **keys)
        # X-Ray: find a turn's traces by tenant, thread or turn (annotations are indexed, metadata not).
        tracer.put_annotation("node", name)
        for key, value in keys.items():
            if value:
                tracer.put_annotation(key, value)
        state.trace.path.append(name)
        result = run(state)
        result.model_invocations += invocations.total()
        logger.info("node done", extra={"route": result.route, "counters": result.counters.model_dump()})
        if name in _REPLY_NODES and result.reply is not None:
            _record_outcome(result)
        return result.dump() | ({"execution": {"id": execution}} if execution else {})

    return entry


def _cold_start_check(name: str, check: Callable[[], None] | None) -> str | None:
    """Run a function's configuration check at Init; the problem, logged, or None."""
    if check is None:
        return None
    try:
        check()
    except ConfigurationError as error:
        logger.error(f"ConfigurationError: {error}",
                     extra={"node": name, "error_type": "ConfigurationError", "phase": "init"})
        return str(error)
    return None


def _record_outcome(state: TurnState) -> None:
    """The turn's outcome, once per turn: `Turns` by status, and the escalation reason or refusal
    code as the dimension of one metric each."""
    reply = state.reply
    status = getattr(reply.status, "value", reply.status)
    emit("Turns", Status=status)
    if reply.reason is not None:
        emit("Escalations", Reason=getattr(reply.reason, "value", reply.reason))
    if reply.error is not None:
        emit("Refusals", Error=getattr(reply.error, "value", reply.error))


def _execution_id(event: Any) -> str:
    """The execution id that the ASL's StampExecution state put into the state (`$.execution.id`)."""
    execution = event.get("execution") if isinstance(event, dict) else None
    value = execution.get("id", "") if isinstance(execution, dict) else ""
    return value if isinstance(value, str) else ""


def _log_id(value: Any) -> str:
    return value if isinstance(value, str) and ID_PATTERN.match(value) else ""
