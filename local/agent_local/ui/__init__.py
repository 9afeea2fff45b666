"""The local operations page: recent turns and the graph of a selected one (loopback only).

`agent serve` mounts it on the local stack's own port (`UiApp`, under `/ui`); `UiServer` serves the
same page on a port of its own (tests, a log without a running stack).
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

from agent_local.execution_log import LocalExecutionLog
from agent_local.trace import (
    ExecutionTrace,
    TraceError,
    find_executions,
    graph_json,
    group_executions,
    local_definition,
    printable,
)

PREFIX = "/ui"
_PAGE = ("index.html", "text/html; charset=utf-8")
_STATIC = {PREFIX: _PAGE, f"{PREFIX}/": _PAGE, f"{PREFIX}/graph.js": ("graph.js", "text/javascript; charset=utf-8")}
RECENT_DAYS = 7
RECENT_LIMIT = 200
TEXT_LIMIT = 280  # characters of a turn's question and reply shown in the list
# Names a loopback page is reached by; any other Host is a page of another site (DNS rebinding).
_LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "[::1]"})

Response = tuple[int, bytes, str, dict[str, str]]


def _clip(value: Any) -> str | None:
    """A turn's text as the list shows it: a string (the log's masked copy), cut to TEXT_LIMIT characters."""
    if not isinstance(value, str) or not value.strip():
        return None
    text = " ".join(value.split())
    return text if len(text) <= TEXT_LIMIT else text[: TEXT_LIMIT - 1] + "…"


def listed(trace: ExecutionTrace) -> dict[str, Any]:
    """One row of the turn list: the trace's summary, the question asked and the reply's message.

    Both come from the execution log, where personal data is already masked; they are this turn's
    own input and output, which the page's graph of the same turn already reads.
    """
    question = trace.input.get("message") if isinstance(trace.input, dict) else None
    return trace.summary() | {"question": _clip(question), "reply": _clip(trace.reply.get("message"))}


def _host_is_loopback(host: str | None) -> bool:
    if not host:
        return True  # HTTP/1.0 without a Host: only a local client
    name = host.rsplit(":", 1)[0] if not host.endswith("]") else host
    return name.lower() in _LOOPBACK_HOSTS


class TurnsPages:
    """The page, its script and its two JSON endpoints, read from the execution log of `home`."""

    def __init__(self, home: Path | str, definition: dict[str, Any] | None = None) -> None:
        self.log = LocalExecutionLog(home)
        self.definition = definition or local_definition()

    def recent(self) -> list[dict[str, Any]]:
        traces = group_executions(self.log.events(days=RECENT_DAYS), None)
        return [listed(t) for t in traces[:RECENT_LIMIT]]

    def graph(self, key: str) -> dict[str, Any]:
        traces = find_executions(self.log, key, self.definition)
        return graph_json(traces[-1], self.definition)

    def respond(self, method: str, path: str, query: str, host: str | None) -> Response:
        """(status, body, content type, extra headers) for one request."""
        if not _host_is_loopback(host):
            return _json(403, {"error": f"the turns page answers loopback names only, not {host!r}"})
        if method not in ("GET", "HEAD"):
            return _json(405, {"error": f"{method} is not allowed here"})
        if path in _STATIC:
            name, content_type = _STATIC[path]
            return 200, resources.files(__package__).joinpath(name).read_bytes(), content_type, {}
        if path == f"{PREFIX}/api/turns":
            return _json(200, self.recent())
        if path == f"{PREFIX}/api/graph":
            key = parse_qs(query).get("execution", [""])[0]
            try:
                return _json(200, self.graph(key))
            except TraceError as error:
                return _json(404, {"error": str(error)})
        return _json(404, {"error": "not found"})


def _json(status: int, data: Any) -> Response:
    body = printable(json.dumps(data, ensure_ascii=False)).encode()
    return status, body, "application/json; charset=utf-8", {}


_REASONS = {200: "OK", 302: "Found", 403: "Forbidden", 404: "Not Found", 405: "Method Not Allowed"}


class UiApp:
    """The pages as a WSGI application, for the local stack's routes (`PREFIX` and `PREFIX/`)."""

    def __init__(self, home: Path | str, definition: dict[str, Any] | None = None) -> None:
        self.pages = TurnsPages(home, definition)

    def routes(self) -> dict[str, Any]:
        return {PREFIX: self, f"{PREFIX}/": self}

    def __call__(self, environ: dict[str, Any], start_response: Any) -> list[bytes]:
        status, body, content_type, headers = self.pages.respond(
            environ.get("REQUEST_METHOD", "GET"), environ.get("PATH_INFO", ""), environ.get("QUERY_STRING", ""),
            environ.get("HTTP_HOST"))
        start_response(f"{status} {_REASONS.get(status, '')}".strip(),
                       [("Content-Type", content_type), ("Content-Length", str(len(body))),
                        ("Cache-Control", "no-store"), *headers.items()])
        return [b"" if environ.get("REQUEST_METHOD") == "HEAD" else body]


class _Handler(BaseHTTPRequestHandler):
    server: UiServer

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - http.server's signature
        pass  # the page polls nothing, but a request log would still drown the serve output

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        path, _, query = self.path.partition("?")
        if path == "/":
            status, body, content_type, headers = 302, b"", "text/plain", {"Location": PREFIX}
        else:
            status, body, content_type, headers = self.server.pages.respond("GET", path, query, self.headers.get("Host"))
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        for key, value in headers.items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(body)


class UiServer(ThreadingHTTPServer):
    """The same pages on a loopback port of their own."""

    daemon_threads = True

    def __init__(self, home: Path | str, port: int = 0, definition: dict[str, Any] | None = None) -> None:
        super().__init__(("127.0.0.1", port), _Handler)
        self.pages = TurnsPages(home, definition)
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}{PREFIX}"

    def recent(self) -> list[dict[str, Any]]:
        return self.pages.recent()

    def graph(self, key: str) -> dict[str, Any]:
        return self.pages.graph(key)

    def start(self) -> UiServer:
        self._thread = threading.Thread(target=self.serve_forever, name="agent-ui", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self.shutdown()
        self.server_close()
