"""The wrapper every node Lambda uses: parse the state, correlate logs, run the node, shape the result."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from insurance_agent import deadline, invocations
from insurance_agent.models.state import TurnState
from insurance_agent.observability import logger, metrics, tracer

NodeRun = Callable[[TurnState], TurnState]


def node_handler(name: str, run: NodeRun) -> Callable[[dict[str, Any], LambdaContext], dict[str, Any]]:
    """Build the Lambda handler of node `name` (the ASL state name, recorded in the trace path)."""

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
        state = TurnState.model_validate(event)
        raw = state.input if isinstance(state.input, dict) else {}
        logger.append_keys(
            node=name,
            thread_id=str(raw.get("thread_id", ""))[:128],
            turn_id=str(raw.get("turn_id", ""))[:128],
            execution=event.get("execution_id", ""),
        )
        tracer.put_annotation("node", name)
        state.trace.path.append(name)
        result = run(state)
        result.model_invocations += invocations.total()
        logger.info("node done", extra={"route": result.route, "counters": result.counters.model_dump()})
        return result.dump() | {"execution_id": event.get("execution_id", "")}

    return entry
