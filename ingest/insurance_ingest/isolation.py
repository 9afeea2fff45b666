"""Run one parse in a child process with a wall-time and an address-space limit.

A malformed PDF can make a parser loop or allocate without end; in a child process the limit is
enforced by the kernel (RLIMIT_AS) and by a kill on timeout, and the ingest goes on with the next
file. The time limit is on progress: a loader calls `heartbeat()` after each page, and the parse
is stopped when no page finishes within `Limits.seconds` (a long scan is OCRed page by page), or
when the whole file takes longer than `Limits.file_seconds`. Children come from a fork server that has the parsing libraries imported already, so a
child starts in milliseconds and never inherits the parent's model threads or open store.
"""

from __future__ import annotations

import multiprocessing
import os
import resource
import time
from collections.abc import Callable
from typing import Any

from insurance_ingest.errors import LoadError
from insurance_ingest.limits import Limits

_PRELOAD = ["insurance_ingest.preload"]
_context: Any = None
_beat: Any = None  # in a child: the pipe to the parent
# Largest resident set a parse child reached in this process's ingests (KiB), for benchmarks.
peak_rss_kib = 0


def _get_context() -> Any:
    global _context
    if _context is None:
        _context = multiprocessing.get_context("forkserver")
        _context.set_forkserver_preload(_PRELOAD)
    return _context


def _vm_bytes() -> int:
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmSize:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def heartbeat() -> None:
    """Tell the parent that the parse is progressing (a page done); nothing outside a child."""
    if _beat is not None:
        _beat.send(("beat", None, 0))


def _child(conn: Any, func: Callable[..., Any], args: tuple[Any, ...], memory_bytes: int) -> None:
    global _beat
    _beat = conn
    if memory_bytes:
        limit = _vm_bytes() + memory_bytes
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    try:
        result: tuple[str, Any] = ("ok", func(*args))
    except LoadError as exc:
        result = ("error", (exc.reason, exc.detail))
    except MemoryError:
        result = ("error", (LoadError.OUT_OF_MEMORY, "parsing needed more memory than allowed"))
    except RecursionError:
        result = ("error", (LoadError.CORRUPT, "the file nests too deeply to parse"))
    except Exception as exc:  # noqa: BLE001 - any parser failure is a refusal of this file, by type only
        result = ("error", (LoadError.CORRUPT, f"the parser failed ({type(exc).__name__})"))
    try:
        conn.send((*result, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss))
    except MemoryError:
        conn.send(("error", (LoadError.OUT_OF_MEMORY, "the extracted text needed more memory than allowed"), 0))
    finally:
        conn.close()


def run_isolated(func: Callable[..., Any], args: tuple[Any, ...], limits: Limits) -> Any:
    """`func(*args)` in a child process; LoadError (timeout, out_of_memory, ...) when it fails."""
    if os.environ.get("AGENT_INGEST_ISOLATE", "1").strip().lower() in ("0", "false", "no", "off"):
        return func(*args)
    context = _get_context()
    receiver, sender = context.Pipe(duplex=False)
    process = context.Process(target=_child, args=(sender, func, args, limits.memory_bytes), daemon=True)
    process.start()
    sender.close()
    started = time.monotonic()
    try:
        while True:
            if not receiver.poll(limits.seconds):
                raise LoadError(LoadError.TIMEOUT, f"no progress in {limits.seconds:g} s")
            try:
                status, payload, rss = receiver.recv()
            except (EOFError, OSError):
                status = None
            if status != "beat":
                break
            if time.monotonic() - started > limits.file_seconds:
                raise LoadError(LoadError.TIMEOUT, f"parsing took longer than {limits.file_seconds:g} s")
        if status is None:
            process.join(5)
            if process.exitcode is not None and process.exitcode < 0:
                raise LoadError(LoadError.OUT_OF_MEMORY, "the parser was stopped (out of memory or crashed)") from None
            raise LoadError(LoadError.CORRUPT, "the parser stopped without a result") from None
    finally:
        receiver.close()
        if process.is_alive():
            process.kill()
        process.join(5)
    global peak_rss_kib
    peak_rss_kib = max(peak_rss_kib, rss)
    if status == "ok":
        return payload
    reason, detail = payload
    raise LoadError(reason, detail)
