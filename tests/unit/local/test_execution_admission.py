"""The local stack's admission control: at most N executions at once, the rest wait their turn."""

from __future__ import annotations

import threading
import time

import pytest

from agent_local import moto_patches
from agent_local.stack import StackError, max_concurrent_turns


@pytest.fixture
def running(monkeypatch):
    state = {"now": 0, "peak": 0, "done": 0, "barrier": None}
    lock = threading.Lock()

    def fake_run(_response):
        with lock:
            state["now"] += 1
            state["peak"] = max(state["peak"], state["now"])
        if state["barrier"] is not None:
            state["barrier"].wait(timeout=10)  # breaks (and the test fails) unless all run at once
        else:
            time.sleep(0.05)
        with lock:
            state["now"] -= 1
            state["done"] += 1
        return "reply"

    monkeypatch.setattr(moto_patches, "_run_sync_execution", fake_run)
    yield state
    moto_patches.limit_concurrent_executions(None)


def _start_many(count: int) -> list[object]:
    replies: list[object] = []
    threads = [threading.Thread(target=lambda: replies.append(moto_patches._start_sync_execution(object())))
               for _ in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    return replies


def test_executions_beyond_the_limit_wait_and_all_run(running):
    moto_patches.limit_concurrent_executions(2)
    replies = _start_many(8)
    assert replies == ["reply"] * 8 and running["done"] == 8
    assert running["peak"] == 2


def test_no_limit_runs_them_all_at_once(running):
    moto_patches.limit_concurrent_executions(None)
    running["barrier"] = threading.Barrier(6)
    assert _start_many(6) == ["reply"] * 6
    assert running["peak"] == 6


def test_the_limit_comes_from_the_environment(monkeypatch):
    monkeypatch.setenv("AGENT_MAX_CONCURRENT_TURNS", "3")
    assert max_concurrent_turns() == 3
    monkeypatch.delenv("AGENT_MAX_CONCURRENT_TURNS")
    assert max_concurrent_turns() >= 2
    for bad in ("0", "many", "-1"):
        monkeypatch.setenv("AGENT_MAX_CONCURRENT_TURNS", bad)
        with pytest.raises(StackError, match="AGENT_MAX_CONCURRENT_TURNS"):
            max_concurrent_turns()
