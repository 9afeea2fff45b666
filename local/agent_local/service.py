"""One local stack per $AGENT_HOME, shared by every `agent` command.

The embedded Qdrant store and the DynamoDB snapshot belong to one process at a time. That process
holds `$AGENT_HOME/agent.lock` (an flock, released by the kernel when the process dies) and writes
who it is into the file. A process that runs the stack (`agent serve`, `chat`, `converse`, ...) also
publishes its endpoint there; any other `agent` command then routes its work through that endpoint
(turns with StartSyncExecution, the rest through the small JSON API under `/agent/v1/`) instead of
opening the store a second time. A holder without an endpoint (an ingest or a search that runs
in-process) is waited for.
"""

from __future__ import annotations

import fcntl
import json
import os
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

LOCK_NAME = "agent.lock"
API_PREFIX = "/agent/v1/"


class ServiceError(RuntimeError):
    """The running local stack could not be reached or refused the request; the message says why."""


class HomeLock:
    """The exclusive claim on one $AGENT_HOME (Qdrant store and DynamoDB snapshot)."""

    def __init__(self, home: Path, command: str) -> None:
        self.path = home / LOCK_NAME
        self.command = command
        self._handle = None

    def try_acquire(self) -> bool:
        handle = self.path.open("a+", encoding="utf-8")
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            handle.close()
            return False
        self._handle = handle
        self.publish({})
        return True

    def publish(self, info: dict[str, Any]) -> None:
        """Tell other processes who holds the home (and, once it serves, where)."""
        assert self._handle is not None
        record = {"pid": os.getpid(), "command": self.command} | info
        self._handle.seek(0)
        self._handle.truncate()
        self._handle.write(json.dumps(record))
        self._handle.flush()

    def release(self) -> None:
        if self._handle is None:
            return
        self._handle.seek(0)
        self._handle.truncate()
        self._handle.flush()
        fcntl.flock(self._handle.fileno(), fcntl.LOCK_UN)
        self._handle.close()
        self._handle = None


def holder(home: Path) -> dict[str, Any] | None:
    """Who holds the home according to its lock file (None when nobody says so)."""
    try:
        text = (home / LOCK_NAME).read_text(encoding="utf-8")
        info = json.loads(text) if text.strip() else None
    except (OSError, json.JSONDecodeError):
        return None
    return info if isinstance(info, dict) and "pid" in info else None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class Service:
    """A client of the local stack that another process runs."""

    def __init__(self, info: dict[str, Any]) -> None:
        self.info = info
        self.endpoint: str = info["endpoint_url"]
        self.state_machine_arn: str = info["state_machine_arn"]
        self.pid: int = info["pid"]
        self.command: str = info.get("command", "agent")

    def describe(self) -> str:
        return f"`{self.command}` (pid {self.pid}) at {self.endpoint}"

    def call(self, operation: str, payload: dict[str, Any], timeout: float = 3600) -> dict[str, Any]:
        request = urllib.request.Request(
            self.endpoint + API_PREFIX + operation, data=json.dumps(payload, ensure_ascii=False).encode(),
            headers={"Content-Type": "application/json"}, method="POST",
        )
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:  # noqa: S310 - loopback only
                return json.loads(response.read())
        except urllib.error.HTTPError as error:
            try:
                detail = json.loads(error.read()).get("error", "")
            except (ValueError, AttributeError):
                detail = ""
            if error.code == 400 and detail:
                from agent_local.operations import OperationError

                raise OperationError(detail) from None  # bad input: the same message as in-process
            raise ServiceError(f"the local stack {self.describe()} answered {error.code}: {detail or error.reason}") from None
        except (urllib.error.URLError, OSError) as error:
            reason = getattr(error, "reason", error)
            raise ServiceError(f"the local stack {self.describe()} cannot be reached ({reason}); "
                               "it may have stopped: run the command again") from None

    def run_turn(self, payload: dict[str, Any]) -> dict[str, Any]:
        from agent_local.stack import StackError, start_sync_execution

        try:
            response = start_sync_execution(self.endpoint, self.state_machine_arn, payload)
        except StackError:
            raise
        except Exception as error:  # noqa: BLE001 - botocore's connection and client errors alike
            raise ServiceError(f"the local stack {self.describe()} failed the turn: {type(error).__name__}") from None
        if response["status"] != "SUCCEEDED":
            raise StackError(f"execution {response['status']}: {response.get('error')}")
        return json.loads(response["output"])


def running_service(home: Path) -> Service | None:
    """The stack serving this home, when one runs and answers."""
    info = holder(home)
    if not info or "endpoint_url" not in info or not _alive(int(info["pid"])):
        return None
    try:
        with urllib.request.urlopen(info["endpoint_url"] + API_PREFIX + "health", timeout=5) as response:  # noqa: S310
            health = json.loads(response.read())
    except (urllib.error.URLError, OSError, ValueError):
        return None
    if health.get("pid") != info["pid"]:
        return None
    return Service(info)


def claim(home: Path, command: str, *, wait_seconds: float = 900, quiet: bool = False) -> Service | HomeLock:
    """The running service to route through, or the home's lock for this process to run in-process.

    A holder that does not serve (an in-process ingest or search) is waited for, with a note on stderr.
    """
    home.mkdir(parents=True, exist_ok=True)
    deadline = time.monotonic() + wait_seconds
    told = False
    while True:
        service = running_service(home)
        if service is not None:
            return service
        lock = HomeLock(home, command)
        if lock.try_acquire():
            return lock
        info = holder(home) or {}
        if time.monotonic() > deadline:
            raise ServiceError(f"{home} is still in use by `{info.get('command', 'another agent process')}` "
                               f"(pid {info.get('pid', '?')}); try again when it has finished")
        if not told and not quiet:
            print(f"agent: waiting for `{info.get('command', 'another agent process')}` (pid {info.get('pid', '?')}) "
                  f"to finish with {home} ...", file=sys.stderr)
            told = True
        time.sleep(0.3)


class ApiApp:
    """WSGI app of the JSON API under API_PREFIX, served by the process that owns $AGENT_HOME."""

    def __init__(self, stack: Any) -> None:
        self.stack = stack

    def __call__(self, environ: dict[str, Any], start_response: Any) -> list[bytes]:
        from agent_local.operations import OPERATIONS, OperationError, qdrant_lock_message

        operation = environ.get("PATH_INFO", "").removeprefix(API_PREFIX)
        status, body = "200 OK", {}
        if operation == "health":
            body = {"pid": os.getpid(), "home": str(self.stack.home), "state_machine_arn": self.stack.state_machine_arn}
        elif operation not in OPERATIONS or environ.get("REQUEST_METHOD") != "POST":
            status, body = "404 Not Found", {"error": f"no operation {operation!r}"}
        else:
            self.stack.wait_for_warm_up()  # they open the store and load the encoders the warm-up is loading
            try:
                length = int(environ.get("CONTENT_LENGTH") or 0)
                payload = json.loads(environ["wsgi.input"].read(length) or b"{}")
                if not isinstance(payload, dict):
                    raise OperationError("the request body must be a JSON object")
                body = OPERATIONS[operation](**payload)
                if self.stack.persist:
                    self.stack.save()
            except (OperationError, TypeError, ValueError) as error:
                status, body = "400 Bad Request", {"error": str(error)}
            except RuntimeError as error:
                status, body = "500 Internal Server Error", {"error": qdrant_lock_message(error) or type(error).__name__}
            except Exception as error:  # noqa: BLE001 - the caller gets the type, the log gets the trace
                import logging

                logging.getLogger(__name__).exception("local API operation %s failed", operation)
                status, body = "500 Internal Server Error", {"error": type(error).__name__}
        data = json.dumps(body, ensure_ascii=False).encode()
        start_response(status, [("Content-Type", "application/json"), ("Content-Length", str(len(data)))])
        return [data]
