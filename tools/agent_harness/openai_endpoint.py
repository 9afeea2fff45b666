"""An OpenAI-compatible chat completions endpoint on this machine, for the openai provider's tests and tier.

`POST .../chat/completions` is answered one of two ways:

- **offline** (no `upstream`): read as a model would read it, like bedrock_endpoint.py reads a
  Converse request: the forced function (`tool_choice`) or the JSON schema (`response_format`) names
  the role, the tagged JSON blocks of the first user message are its data, and the offline
  provider's decision on that data goes back as the tool call (or as JSON content);
- **relay** (`upstream` set, e.g. the server of `make model-up`): the request goes unchanged to that
  server and its answer comes back unchanged. Containers cannot reach the host's loopback, so the
  container tier gives them this endpoint on the docker0 gateway in front of the loopback server.
  With `relay_tools`, only those roles' requests go to the server and the others are answered
  offline: a real model's drafts (GroundedAnswer) and verdicts (ClaimCheck) then reach the guards
  on turns that a model too small to route would have handed over at triage.

The providers' check of the server (`StructuredOutputCheck`, and a plain request without structured
output; insurance_llm/openai/provider.py) is answered offline without loading the offline model, or
relayed whenever there is an upstream: it asks about the server that answers the roles. `rejects`
names structured-output modes the endpoint answers with HTTP 500, as llama-cpp-python's server (0.3)
answers `response_format: json_schema`.

Either way the real client (langchain-openai, the OpenAI SDK, httpx) runs unchanged against it, and
faults queued per tool name ("*": any tool; `POST /_faults` or `state.add_fault`) replace the answer
at the wire, one request at a time (`FAULTS`). Every request is logged (`GET /_calls`): its tool,
fault, HTTP status, seconds, and whether the client had hung up before the answer (its read timeout).
"""

from __future__ import annotations

import contextlib
import itertools
import json
import select
import socket
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler
from typing import Any

from agent_harness.bedrock_endpoint import EndpointState, Fault, ThreadedServers, corrupt, data_blocks

# What the endpoint can do to a request instead of answering it well.
FAULTS = {
    "throttle": "429 rate_limit_exceeded",
    "server_error": "500 an internal server error",
    "unavailable": "503 the server is overloaded",
    "slow": "the answer after `seconds` (past the client's read timeout)",
    "drop": "the connection closed once the request is read, with no answer",
    "not_json": "200 with an HTML page instead of JSON (what a proxy in front of the server sends)",
    "schema": "a tool call (or JSON content) whose arguments violate the schema",
    "prose": "prose instead of the tool call",
    "content_filter": "no content, finish_reason content_filter",
    "foreign_citation": "GroundedAnswer citing a chunk that was not in the evidence",
    "invented_number": "GroundedAnswer stating a figure that no chunk holds",
    "wrong_language": "GroundedAnswer in the other language than the customer's",
}
_ERRORS = {"throttle": (429, "rate_limit_exceeded", "Rate limit reached, please try again later."),
           "server_error": (500, "server_error", "The server had an error while processing your request."),
           "unavailable": (503, "overloaded", "The server is overloaded. Try again later.")}
NOT_JSON = b"<html><head><title>502 Bad Gateway</title></head><body><h1>502 Bad Gateway</h1></body></html>"
MODEL_NAME = "offline-model"
#: The tool of the providers' check of the server: not a turn's request.
PROBE_TOOL = "StructuredOutputCheck"
# What llama-cpp-python's server (0.3) answers a mode it cannot serve: a bare 500, naming nothing.
_REJECTED = (500, "application/json", json.dumps({"error": {"message": "Internal Server Error",
                                                            "type": "internal_server_error"}}).encode())
Answerer = Callable[[str, dict[str, Any], str], dict[str, Any]]


def _text(content: Any) -> str:
    """A message's content as text (a string, or a list of text parts)."""
    if isinstance(content, str):
        return content
    return "\n".join(part.get("text", "") for part in content or [] if isinstance(part, dict))


def tool_of(request: dict[str, Any]) -> str:
    """The role's structured output the request asks for: the forced function, or the JSON schema's name."""
    choice = request.get("tool_choice")
    if isinstance(choice, dict) and choice.get("function"):
        return choice["function"].get("name", "")
    if request.get("tools"):
        return request["tools"][0].get("function", {}).get("name", "")
    response_format = request.get("response_format") or {}
    if response_format.get("type") == "json_schema":
        return (response_format.get("json_schema") or {}).get("name", "")
    return ""


def mode_of(request: dict[str, Any]) -> str | None:
    """The structured-output mode a request uses (OPENAI_STRUCTURED_OUTPUT's names), None for a plain one."""
    if request.get("tools"):
        return "function_calling"
    if (request.get("response_format") or {}).get("type") == "json_schema":
        return "json_schema"
    return None


def request_data(request: dict[str, Any]) -> tuple[dict[str, Any], str]:
    """The tagged blocks of the first user message (a corrective turn repeats none) and the system prompt."""
    messages = request.get("messages") or []
    system = "\n".join(_text(m.get("content")) for m in messages if m.get("role") in ("system", "developer"))
    for message in messages:
        if message.get("role") == "user":
            return data_blocks(_text(message.get("content"))), system
    return {}, system


def _client_gone(connection: socket.socket) -> bool:
    """Whether the client closed its end (it gave up waiting: its read timeout)."""
    try:
        readable, _, _ = select.select([connection], [], [], 0)
        return bool(readable) and connection.recv(1, socket.MSG_PEEK) == b""
    except OSError:
        return True


class OpenAIEndpoint(ThreadedServers):
    """The endpoint's servers (one per address it listens on) sharing one state and one way of answering.

    `answer(tool, data, system)` gives a tool call's arguments (default: the offline provider's
    decision, bedrock_endpoint.OfflineModel, created on first use); `upstream` is a real server's base
    URL (".../v1") to relay to instead, and may be changed while the endpoint runs; `relay_tools`
    (tool names), when given, limits the relay to those roles; `rejects` (structured-output modes)
    are answered with HTTP 500.
    """

    thread_name = "openai-endpoint"

    def __init__(self, addresses: list[tuple[str, int]], *, answer: Answerer | None = None,
                 upstream: str | None = None, upstream_timeout: float = 600.0,
                 relay_tools: frozenset[str] | None = None, rejects: frozenset[str] = frozenset()) -> None:
        self.state = EndpointState(known=FAULTS)
        self.rejects = rejects
        self.upstream = upstream
        self.relay_tools = relay_tools
        self.upstream_timeout = upstream_timeout
        self._answer = answer
        self._model_lock = threading.Lock()
        self._stopping = threading.Event()
        self._ids = itertools.count(1)  # the servers answer requests on several threads
        self._in_flight = 0
        self._listen(addresses, self._handler())

    def urls(self) -> list[str]:
        """The base URL (".../v1") of each address, as OPENAI_BASE_URL takes it."""
        return [f"http://{server.server_address[0]}:{server.server_address[1]}/v1" for server in self._servers]

    @property
    def url(self) -> str:
        return self.urls()[0]

    def __exit__(self, *exc: object) -> None:
        self._stopping.set()  # a slow answer still waiting stops waiting
        super().__exit__(*exc)

    def calls(self) -> list[dict[str, Any]]:
        with self.state.lock:
            return list(self.state.calls)

    def wait_idle(self, timeout: float = 10.0) -> bool:
        """Wait until no request is in flight (each logged one answered, or seen abandoned); False on timeout.

        A client that gave up does not wait for the endpoint to notice: the log settles just after."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self.state.lock:
                if self._in_flight == 0:
                    return True
            time.sleep(0.02)
        return False

    # -- answering ------------------------------------------------------------------------------------

    def answer(self, tool: str, data: dict[str, Any], system: str) -> dict[str, Any]:
        """The arguments of `tool`'s call for the request's data blocks and system prompt."""
        if tool == PROBE_TOOL:
            return {"ok": True}
        if self._answer is None:
            with self._model_lock:
                if self._answer is None:
                    from agent_harness.bedrock_endpoint import OfflineModel

                    self._answer = OfflineModel().answer
        return self._answer(tool, data, system)

    def completion(self, request: dict[str, Any], fault: Fault | None) -> dict[str, Any]:
        """The chat completion answering `request` offline, with `fault` (a body-level one) applied."""
        tool = tool_of(request)
        message: dict[str, Any] = {"role": "assistant", "content": None}
        finish = "stop"
        kind = fault.kind if fault else None
        if kind == "prose":
            message["content"] = "I'm not sure how to answer that. Could you rephrase the question?"
        elif kind == "content_filter":
            message["content"], finish = "", "content_filter"
        elif not tool:
            message["content"] = "This endpoint answers structured output only."
        else:
            data, system = request_data(request)
            arguments = self.answer(tool, data, system)
            if kind:
                arguments = corrupt(tool, kind, arguments, data)
            if request.get("tools"):
                message["tool_calls"] = [{"id": f"call_{next(self._ids):06d}", "type": "function",
                                          "function": {"name": tool, "arguments": json.dumps(arguments,
                                                                                              ensure_ascii=False)}}]
                finish = "tool_calls"
            else:
                message["content"] = json.dumps(arguments, ensure_ascii=False)
        prompt_chars = sum(len(_text(m.get("content"))) for m in request.get("messages") or [])
        return {"id": f"chatcmpl-{next(self._ids):06d}", "object": "chat.completion", "created": int(time.time()),
                "model": request.get("model") or MODEL_NAME,
                "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                "usage": {"prompt_tokens": prompt_chars // 4, "completion_tokens": 40,
                          "total_tokens": prompt_chars // 4 + 40}}

    def relays(self, tool: str) -> bool:
        """Whether a request for `tool` goes to the upstream server."""
        # The check's requests (structured, and plain when that is rejected) are about the server itself.
        return bool(self.upstream) and (self.relay_tools is None or tool in self.relay_tools
                                        or tool in (PROBE_TOOL, ""))

    def relay(self, path: str, body: bytes | None) -> tuple[int, str, bytes]:
        """Status, content type and body of the upstream server's answer to the same request."""
        url = self.upstream.rstrip("/") + path
        request = urllib.request.Request(url, data=body, method="POST" if body is not None else "GET",
                                         headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=self.upstream_timeout) as response:
                return response.status, response.headers.get("Content-Type", "application/json"), response.read()
        except urllib.error.HTTPError as error:
            return error.code, error.headers.get("Content-Type", "application/json"), error.read()
        except OSError as error:  # the upstream server is down or did not answer in time
            body = json.dumps({"error": {"message": f"upstream: {error}", "type": "upstream_error"}}).encode()
            return 502, "application/json", body

    # -- HTTP -----------------------------------------------------------------------------------------

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        """The request handler class of this endpoint's servers (http.server makes one per request)."""
        return type("Handler", (CompletionsHandler,), {"endpoint": self})


def _error_body(message: str, kind: str, code: str | None = None) -> bytes:
    """An OpenAI-shaped error body."""
    return json.dumps({"error": {"message": message, "type": kind} | ({"code": code} if code else {})}).encode()


def _fault_response(fault: Fault | None) -> tuple[int, str, bytes] | None:
    """The answer a wire-level fault gives instead of the model's; None when the model answers.
    Status 0 is `drop`: no answer at all."""
    if fault is None:
        return None
    if fault.kind == "drop":
        return 0, "application/json", b""
    if fault.kind in _ERRORS:
        status, code, message = _ERRORS[fault.kind]
        return status, "application/json", _error_body(message, code, code)
    if fault.kind == "not_json":
        return 200, "text/html", NOT_JSON
    return None


class CompletionsHandler(BaseHTTPRequestHandler):
    """One HTTP exchange with `endpoint` (an OpenAIEndpoint: its _handler names it)."""

    protocol_version = "HTTP/1.1"
    endpoint: OpenAIEndpoint

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
        pass

    # -- the wire -------------------------------------------------------------------------------------

    def _send(self, status: int, kind: str, data: bytes) -> bool:
        """Write the answer; False when the client is gone."""
        try:
            self.send_response(status)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
            self.wfile.flush()
            return True
        except (BrokenPipeError, ConnectionResetError):
            return False

    def _wait(self, seconds: float) -> None:
        """Hold the answer `seconds`, or until the client hangs up (nothing would read it then)."""
        until = time.monotonic() + seconds
        while (left := until - time.monotonic()) > 0 and not _client_gone(self.connection):
            if self.endpoint._stopping.wait(min(0.1, left)):
                return

    def _json(self, status: int, value: Any) -> None:
        self._send(status, "application/json", json.dumps(value, ensure_ascii=False).encode())

    # -- routes ---------------------------------------------------------------------------------------

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        if self.path == "/_calls":
            self._json(200, [{k: v for k, v in c.items() if k != "request"} for c in self.endpoint.calls()])
        elif self.path.endswith("/models"):
            self._models()
        else:
            self._json(404, {"error": {"message": f"no route {self.path}"}})

    def do_DELETE(self) -> None:  # noqa: N802
        self.endpoint.state.reset()
        self._json(200, {"reset": True})

    def do_POST(self) -> None:  # noqa: N802
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        if self.path == "/_faults":
            self._queue_fault(body)
        elif self.path.endswith("/chat/completions"):
            self._completion(body)
        else:
            self._json(404, {"error": {"message": f"no route {self.path}"}})

    def _models(self) -> None:
        """The upstream server's model list when relaying, else the offline model alone."""
        if self.endpoint.upstream:
            self._send(*self.endpoint.relay("/models", None))
        else:
            self._json(200, {"object": "list", "data": [{"id": MODEL_NAME, "object": "model",
                                                          "owned_by": "agent-local"}]})

    def _queue_fault(self, body: bytes) -> None:
        """`POST /_faults` {"tool", "kind", "times", "seconds"}: the next requests for `tool` get the fault."""
        try:
            spec = json.loads(body or b"{}")
            self.endpoint.state.add_fault(spec.get("tool", "*"), Fault(spec["kind"], int(spec.get("times", 1)),
                                                                       float(spec.get("seconds", 0))))
        except (ValueError, KeyError) as error:
            self._json(400, {"error": {"message": str(error)}})
            return
        self._json(200, {"queued": spec})

    # -- a chat completion ----------------------------------------------------------------------------

    def _completion(self, body: bytes) -> None:
        """Log the request, answer it, and record how the answer went (counted in flight meanwhile)."""
        started = time.monotonic()
        try:
            request = json.loads(body)
        except ValueError:
            self._json(400, {"error": {"message": "the body is not JSON", "type": "invalid_request_error"}})
            return
        endpoint = self.endpoint
        tool = tool_of(request)
        fault = endpoint.state.take_fault(tool)
        entry: dict[str, Any] = {"tool": tool, "model": request.get("model"), "fault": fault.kind if fault else None,
                                 "relayed": False, "at": time.time(), "request": request}
        with endpoint.state.lock:
            endpoint.state.calls.append(entry)
            endpoint._in_flight += 1
        try:
            rejected = _REJECTED if mode_of(request) in endpoint.rejects else None
            status, kind, data = rejected or _fault_response(fault) or self._model_response(request, body, fault,
                                                                                             entry)
            sent = self._deliver(status, kind, data)
            entry.update(status=status, seconds=round(time.monotonic() - started, 2), abandoned=not sent)
        finally:
            with endpoint.state.lock:
                endpoint._in_flight -= 1

    def _model_response(self, request: dict[str, Any], body: bytes, fault: Fault | None,
                        entry: dict[str, Any]) -> tuple[int, str, bytes]:
        """The answer of the upstream server (when it answers this role) or of the offline model, with a
        body-level fault applied; a `slow` fault holds it first."""
        if fault and fault.kind == "slow":
            self._wait(fault.seconds)
        if self.endpoint.relays(entry["tool"]) and (not fault or fault.kind == "slow"):
            entry["relayed"] = True
            status, kind, data = self.endpoint.relay("/chat/completions", body)
            entry["answer"] = data.decode("utf-8", "replace")  # what the real model said
            return status, kind, data
        try:
            return 200, "application/json", json.dumps(self.endpoint.completion(request, fault),
                                                       ensure_ascii=False).encode()
        except (ValueError, KeyError, TypeError) as error:
            return 400, "application/json", _error_body(str(error), "invalid_request_error")

    def _deliver(self, status: int, kind: str, data: bytes) -> bool:
        """Send the answer unless the client hung up first; status 0 closes the connection unanswered.
        Whether the answer (or the close) reached a client still waiting."""
        if status == 0:  # drop: the request was read, the connection closes unanswered
            self.close_connection = True
            with contextlib.suppress(OSError):
                self.connection.shutdown(socket.SHUT_RDWR)
            return True
        return not _client_gone(self.connection) and self._send(status, kind, data)
