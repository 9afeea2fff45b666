"""Tasks forwarded to `sam local start-lambda`: a handler's exception stays a Lambda function error."""

from __future__ import annotations

import json

from agent_local.moto_patches import _runtime_error


def test_the_runtime_clients_error_object_is_a_function_error():
    # What awslambdaric posts for an exception (requestId included), which SAM's emulator returns
    # without X-Amz-Function-Error.
    error = {"errorMessage": "generate: ThrottlingException after 3 attempts", "errorType": "TransientError",
             "requestId": "c2bb67fb", "stackTrace": ["  File \"/var/task/app.py\", line 1"]}
    assert _runtime_error(json.dumps(error).encode()) == "Unhandled"
    assert _runtime_error(json.dumps({"errorMessage": "x", "errorType": "ModelOutputError"}).encode()) == "Unhandled"


def test_a_node_result_is_not_an_error():
    state = {"turn": {"turn_id": "t"}, "route": "knowledge", "error": {"type": "TransientError"}, "errorType": None}
    assert _runtime_error(json.dumps(state).encode()) is None
    assert _runtime_error(b"not json") is None and _runtime_error(b"") is None and _runtime_error(b"[1]") is None
