"""The local operations page: recent turns and the graph of a selected one (loopback only)."""

from __future__ import annotations

import json
import threading
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlparse

from agent_local.execution_log import LocalExecutionLog
from agent_local.trace import TraceError, find_executions, graph_json, group_executions, local_definition, printable

_STATIC = {"/ui": ("index.html", "text/html; charset=utf-8"), "/ui/": ("index.html", "text/html; charset=utf-8"),
           "/ui/graph.js": ("graph.js", "text/javascript; charset=utf-8")}
RECENT_DAYS = 7
RECENT_LIMIT = 200


class _Handler(BaseHTTPRequestHandler):
    server: UiServer

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - http.server's signature
        pass  # the page polls nothing, but a request log would still drown the serve output

    def _send(self, status: int, body: bytes, content_type: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        self.wfile.write(body)

    def _json(self, status: int, data: Any) -> None:
        body = printable(json.dumps(data, ensure_ascii=False)).encode()
        self._send(status, body, "application/json; charset=utf-8")

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        url = urlparse(self.path)
        if url.path == "/":
            self.send_response(HTTPStatus.FOUND)
            self.send_header("Location", "/ui")
            self.end_headers()
        elif url.path in _STATIC:
            name, content_type = _STATIC[url.path]
            self._send(HTTPStatus.OK, resources.files(__package__).joinpath(name).read_bytes(), content_type)
        elif url.path == "/api/turns":
            self._json(HTTPStatus.OK, self.server.recent())
        elif url.path == "/api/graph":
            key = parse_qs(url.query).get("execution", [""])[0]
            try:
                self._json(HTTPStatus.OK, self.server.graph(key))
            except TraceError as error:
                self._json(HTTPStatus.NOT_FOUND, {"error": str(error)})
        else:
            self._json(HTTPStatus.NOT_FOUND, {"error": "not found"})


class UiServer(ThreadingHTTPServer):
    """Serves the page and its two JSON endpoints from the local execution log of `home`."""

    daemon_threads = True

    def __init__(self, home: Path | str, port: int = 0, definition: dict[str, Any] | None = None) -> None:
        super().__init__(("127.0.0.1", port), _Handler)
        self.log = LocalExecutionLog(home)
        self.definition = definition or local_definition()
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/ui"

    def recent(self) -> list[dict[str, Any]]:
        traces = group_executions(self.log.events(days=RECENT_DAYS), None)
        return [t.summary() for t in traces[:RECENT_LIMIT]]

    def graph(self, key: str) -> dict[str, Any]:
        traces = find_executions(self.log, key, self.definition)
        return graph_json(traces[-1], self.definition)

    def start(self) -> UiServer:
        self._thread = threading.Thread(target=self.serve_forever, name="agent-ui", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self.shutdown()
        self.server_close()
