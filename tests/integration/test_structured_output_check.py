"""Before any turn, the openai provider asks its server whether it takes the configured structured output.

llama-cpp-python's server (0.3) answers `response_format: json_schema` with HTTP 500 and takes a forced
tool call; the caller retries a 500 as transient and every turn ended in `system_error`. The server
here is agent_harness/openai_endpoint.py on loopback with `rejects` (or a tiny http.server that names
the cause in its error); the provider, langchain-openai and the OpenAI SDK run unchanged against it.
The `agent` commands' preflight and a function's cold start: test_provider_settings.py.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from agent_harness.openai_endpoint import PROBE_TOOL, Fault, OpenAIEndpoint, mode_of
from agent_local.preflight import model_settings_problem
from insurance_agent.config import ModelSettings
from insurance_agent.roles.base import service_problems
from insurance_llm.openai import OpenAIProvider


def _settings(url: str, mode: str = "json_schema", **extra) -> ModelSettings:
    return ModelSettings(provider="openai", small_model_id="small-model", main_model_id="main-model",
                         openai_base_url=url, openai_structured_output=mode, timeout_seconds=2.0, **extra)


def _check(url: str, mode: str = "json_schema", roles=("generate",), seconds: float = 10.0, **extra):
    return OpenAIProvider.check_service(_settings(url, mode, **extra), roles, seconds)


@pytest.fixture
def llama():
    """A server like llama-cpp-python's: HTTP 500 to json_schema, tool calls answered."""
    with OpenAIEndpoint([("127.0.0.1", 0)], rejects=frozenset({"json_schema"})) as endpoint:
        yield endpoint


def _requests(endpoint: OpenAIEndpoint) -> list[tuple[str | None, int]]:
    # The client has its answer a moment before the endpoint logs the status it sent.
    assert endpoint.wait_idle()
    return [(mode_of(call["request"]), call["status"]) for call in endpoint.calls()]


def test_a_server_that_rejects_json_schema_is_named_with_the_mode_it_takes(llama):
    (problem,) = _check(llama.url)
    assert problem.field == "openai_structured_output" and problem.value == "function_calling"
    text = str(problem)
    assert f"OPENAI_STRUCTURED_OUTPUT is json_schema, which the server at {llama.url} does not accept" in text
    assert "HTTP 500 to a structured request, while a plain one is answered" in text
    assert "it answers function_calling" in text and "OpenAIStructuredOutput" in text and text.endswith(
        "to function_calling")
    # The structured request, the plain one, then the other mode; each tiny, each for the role's model.
    assert _requests(llama) == [("json_schema", 500), (None, 200), ("function_calling", 200)]
    first = llama.calls()[0]["request"]
    assert first["response_format"]["json_schema"]["name"] == PROBE_TOOL
    assert first["response_format"]["json_schema"]["strict"] is True
    assert all(call["request"]["max_tokens"] <= 32 and call["request"]["model"] == "main-model"
               for call in llama.calls())


def test_the_mode_the_server_takes_is_one_request_and_no_problem(llama):
    assert _check(llama.url, "function_calling") == []
    assert _requests(llama) == [("function_calling", 200)]
    (call,) = llama.calls()
    assert call["request"]["tool_choice"]["function"]["name"] == PROBE_TOOL


def test_each_model_of_the_served_roles_is_asked_once(llama):
    assert _check(llama.url, "function_calling", roles=("triage", "grade", "generate", "clarify")) == []
    assert [call["request"]["model"] for call in llama.calls()] == ["small-model", "main-model"]


def test_a_server_that_takes_neither_mode_is_named_without_a_value_to_switch_to():
    with OpenAIEndpoint([("127.0.0.1", 0)], rejects=frozenset({"json_schema", "function_calling"})) as endpoint:
        (problem,) = _check(endpoint.url)
    assert problem.value is None and "nor function_calling (HTTP 500)" in str(problem)


def test_a_server_that_fails_every_request_says_nothing_about_the_mode():
    with OpenAIEndpoint([("127.0.0.1", 0)]) as endpoint:
        endpoint.state.add_fault("*", Fault("server_error", 10, 0.0))
        assert _check(endpoint.url) == []
        assert _requests(endpoint) == [("json_schema", 500), (None, 500)]
        endpoint.state.reset()
        endpoint.state.add_fault("*", Fault("throttle", 10, 0.0))
        assert _check(endpoint.url) == [] and _requests(endpoint) == [("json_schema", 429)]


def test_no_server_and_a_slow_one_are_no_answer_within_the_bound():
    with socket.socket() as unused:
        unused.bind(("127.0.0.1", 0))
        port = unused.getsockname()[1]
    assert _check(f"http://127.0.0.1:{port}/v1") == []
    with OpenAIEndpoint([("127.0.0.1", 0)], rejects=frozenset({"json_schema"})) as endpoint:
        endpoint.state.add_fault("*", Fault("slow", 10, 5.0))
        started = time.monotonic()
        assert _check(endpoint.url, seconds=1.0) == []
        assert time.monotonic() - started < 3.0


class _NamingHandler(BaseHTTPRequestHandler):
    """A server that refuses response_format in words (as vLLM or a proxy may), and nothing else works."""

    def log_message(self, format, *args):  # noqa: A002
        pass

    def do_POST(self):  # noqa: N802
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        body = json.dumps({"error": {"message": "response_format of type json_schema is not supported",
                                     "type": "invalid_request_error"}}).encode()
        self.send_response(400)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def test_an_error_that_names_response_format_is_definite_without_a_plain_request():
    server = ThreadingHTTPServer(("127.0.0.1", 0), _NamingHandler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        (problem,) = _check(f"http://127.0.0.1:{server.server_address[1]}/v1")
    finally:
        server.shutdown()
        server.server_close()
    assert "HTTP 400 to a structured request, naming its response_format" in str(problem)
    assert "nor function_calling (HTTP 400)" in str(problem)


def test_a_url_with_credentials_is_shown_without_them(llama):
    url = llama.url.replace("http://", "http://user:secret@")
    (problem,) = _check(url)
    assert "secret" not in str(problem) and llama.url in str(problem)


def test_only_the_providers_of_the_roles_are_asked(llama):
    mixed = _settings(llama.url).model_copy(update={"provider": "offline", "role_providers": {"generate": "openai"}})
    assert service_problems(mixed, ("triage", "grade"), 5.0) == {} and llama.calls() == []
    (problem,) = service_problems(mixed, ("triage", "generate"), 5.0)["openai"]
    assert problem.value == "function_calling"


def test_the_agent_commands_preflight_names_the_mode_to_set(tmp_path, llama):
    overrides = {"ModelProvider": "openai", "OpenAIBaseUrl": llama.url, "OpenAISmallModel": "small-model",
                 "OpenAIMainModel": "main-model"}
    problem = model_settings_problem(tmp_path, overrides)
    assert problem.startswith("model provider 'openai' does not work with its server as configured, so no turn "
                              "was run:")
    assert f"OPENAI_STRUCTURED_OUTPUT is json_schema, which the server at {llama.url} does not accept" in problem
    assert "--parameter-overrides OpenAIStructuredOutput=function_calling" in problem
    llama.state.reset()
    assert model_settings_problem(tmp_path, overrides | {"OpenAIStructuredOutput": "function_calling"}) is None
    assert [call["tool"] for call in llama.calls()] == [PROBE_TOOL, PROBE_TOOL]  # one per model
