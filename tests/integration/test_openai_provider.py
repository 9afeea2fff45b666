"""The OpenAI-compatible provider against servers that misbehave, at the wire.

A small chat-completions server on loopback answers as a compatible server would (a forced tool call,
or JSON content for `response_format: json_schema`) or fails the way real ones do: 429, 5xx, an
answer slower than the client's timeout, a dropped connection, a body that is not JSON. The real
provider, langchain-openai and the OpenAI SDK run unchanged against it.
"""

from __future__ import annotations

import json
import threading
from collections import deque
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from insurance_agent.config import ModelSettings, Settings
from insurance_agent.errors import ModelOutputError, ModelRefusedError, TransientError
from insurance_agent.models.roles import Intent, TriageRequest
from insurance_llm.openai import OpenAIProvider

GOOD = {"intent": "chitchat", "restricted": False, "frustration": False}


class ChatServer:
    """Queued behaviours, one per request: "ok", "bad_schema", "prose", "filtered", "429", "500", "slow", "drop", "html"."""

    def __init__(self) -> None:
        self.behaviours: deque[str] = deque()
        self.requests: list[dict] = []
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def _answer(self, request: dict, behaviour: str) -> dict:
        arguments = GOOD if behaviour != "bad_schema" else {"intent": "weather", "restricted": "perhaps"}
        message: dict = {"role": "assistant", "content": None}
        finish = "stop"
        if behaviour == "prose":
            message["content"] = "I am not sure."
        elif behaviour == "filtered":
            message["content"], finish = "", "content_filter"
        elif request.get("tools"):
            name = request["tools"][0]["function"]["name"]
            message["tool_calls"] = [{"id": "call_1", "type": "function",
                                      "function": {"name": name, "arguments": json.dumps(arguments)}}]
            finish = "tool_calls"
        else:
            message["content"] = json.dumps(arguments)
        return {"id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": request.get("model", "m"),
                "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}}

    def _handler(self):
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_POST(self):  # noqa: N802
                request = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                outer.requests.append(request)
                behaviour = outer.behaviours.popleft() if outer.behaviours else "ok"
                if behaviour == "drop":
                    self.connection.close()
                    return
                if behaviour == "slow":
                    threading.Event().wait(2.5)
                status, body, kind = 200, json.dumps(self_answer(request, behaviour)).encode(), "application/json"
                if behaviour in ("429", "500"):
                    status, body = int(behaviour), json.dumps({"error": {"message": "busy", "type": "x"}}).encode()
                elif behaviour == "html":
                    body, kind = b"<html><body>502 Bad Gateway</body></html>", "text/html"
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        def self_answer(request, behaviour):
            return outer._answer(request, behaviour)

        return Handler

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def server():
    running = ChatServer()
    yield running
    running.close()


def _provider(server: ChatServer, method: str = "function_calling", attempts: int = 3) -> OpenAIProvider:
    settings = Settings(models=ModelSettings(
        provider="openai", small_model_id="small-model", main_model_id="main-model", openai_base_url=server.url,
        openai_structured_output=method, max_attempts=attempts, timeout_seconds=1.0))
    return OpenAIProvider(settings=settings, sleep=lambda seconds: None)


@pytest.mark.parametrize("method", ["function_calling", "json_schema"])
def test_structured_output_by_either_mechanism(server, method):
    result = _provider(server, method).triage(TriageRequest(message="سلام"))
    assert result.intent == Intent.CHITCHAT
    (request,) = server.requests
    assert request["model"] == "small-model" and request["temperature"] == 0.0
    if method == "function_calling":
        assert request["tool_choice"]["function"]["name"] == "TriageDecision"
    else:
        assert request["response_format"]["type"] == "json_schema"
        assert request["response_format"]["json_schema"]["strict"] is True
    # The same system prompt and data blocks as the Bedrock provider sends.
    assert "<user_message>" in request["messages"][1]["content"]


@pytest.mark.parametrize("method", ["function_calling", "json_schema"])
def test_one_correction_then_a_model_output_error(server, method):
    server.behaviours.extend(["bad_schema", "ok"])
    assert _provider(server, method).triage(TriageRequest(message="سلام")).intent == Intent.CHITCHAT
    assert "do not fit the TriageDecision schema" in json.dumps(server.requests[1]["messages"][-1], ensure_ascii=False)
    server.behaviours.extend(["bad_schema", "bad_schema"])
    with pytest.raises(ModelOutputError):
        _provider(server, method).triage(TriageRequest(message="سلام"))


@pytest.mark.parametrize("fault", ["429", "500", "slow", "drop", "html"])
def test_a_failing_server_is_retried_then_a_transient_error(server, fault):
    server.behaviours.append(fault)
    assert _provider(server).triage(TriageRequest(message="سلام")).intent == Intent.CHITCHAT
    server.requests.clear()
    server.behaviours.extend([fault] * 3)
    with pytest.raises(TransientError):
        _provider(server, attempts=3).triage(TriageRequest(message="سلام"))
    assert len(server.requests) == 3


def test_prose_is_no_answer_and_a_content_filter_is_a_refusal(server):
    server.behaviours.append("prose")
    with pytest.raises(ModelOutputError):  # triage must answer; generate would escalate instead
        _provider(server).triage(TriageRequest(message="سلام"))
    server.behaviours.append("filtered")
    with pytest.raises(ModelRefusedError):
        _provider(server).triage(TriageRequest(message="سلام"))
