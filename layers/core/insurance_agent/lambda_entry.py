"""The wrapper every node Lambda uses: parse the state, correlate logs, run the node, shape the result."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from insurance_agent import deadline, invocations
from insurance_agent.models.state import TurnState
from insurance_agent.models.turn import ID_PATTERN
from insurance_agent.observability import logger, metrics, tracer

NodeRun = Callable[[TurnState], TurnState]


def node_handler(
    name: str, run: NodeRun, *, raw_input: bool = False
) -> Callable[[dict[str, Any], LambdaContext], dict[str, Any]]:
    """Build the Lambda handler of node `name` (the ASL state name, recorded in the trace path).

    `raw_input`: the event is the execution input as the backend sent it (the graph's first state),
    not an execution state; it may be anything JSON can hold.
    """

    @metrics.log_metrics
    @tracer.capture_lambda_handler(capture_response=False)
    @logger.inject_lambda_context(clear_state=True)
    def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
        token, counted = deadline.start(context), invocations.start()
        try:
            return _run(event)
        finally:
            invocations.end(counted)
            deadline.end(token)

    def entry(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
        try:
            return handler(event, context)
        finally:
            if os.environ.get("POWERTOOLS_METRICS_DISABLED", "").lower() == "true":
                # Powertools keeps unflushed metrics when disabled; a long-lived local stack must not.
                metrics.clear_metrics()

    def _run(event: dict[str, Any]) -> dict[str, Any]:
        state = TurnState(input=event) if raw_input else TurnState.model_validate(event)
        ids = state.turn.model_dump() if state.turn else state.input if isinstance(state.input, dict) else {}
        execution = _execution_id(event) if not raw_input else ""
        # Only well-formed ids go into log keys: raw input may hold control or bidi characters.
        logger.append_keys(
            node=name,
            thread_id=_log_id(ids.get("thread_id")),
            turn_id=_log_id(ids.get("turn_id")),
            execution=execution,
        )
        tracer.put_annotation("node", name)
        state.trace.path.append(name)
        result = run(state)
        result.model_invocations += invocations.total()
        logger.info("node done", extra={"route": result.route, "counters": result.counters.model_dump()})
        return result.dump() | ({"execution": {"id": execution}} if execution else {})

    return entry


def _execution_id(event: Any) -> str:
    """The execution id that the ASL's StampExecution state put into the state (`$.execution.id`)."""
    execution = event.get("execution") if isinstance(event, dict) else None
    value = execution.get("id", "") if isinstance(execution, dict) else ""
    return value if isinstance(value, str) else ""


def _log_id(value: Any) -> str:
    return value if isinstance(value, str) and ID_PATTERN.match(value) else ""
