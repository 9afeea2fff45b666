"""The turns page's answers (agent_local.ui) without a browser: loopback names only, read-only, and each
listed turn with its question and reply from the masked execution log."""

from __future__ import annotations

import json

from agent_local.trace import ExecutionTrace
from agent_local.ui import TEXT_LIMIT, TurnsPages, listed


def test_only_loopback_names_and_reads_are_answered(tmp_path):
    pages = TurnsPages(tmp_path, definition={"StartAt": "A", "States": {"A": {"Type": "Succeed"}}})
    for host in ("127.0.0.1:8723", "localhost:8723", "[::1]:8723", None):
        status, body, content_type, _ = pages.respond("GET", "/ui", "", host)
        assert status == 200 and content_type.startswith("text/html") and b"/ui/graph.js" in body
    # A name that resolves to loopback for a page of another site (DNS rebinding) reads nothing.
    assert pages.respond("GET", "/ui/api/turns", "", "attacker.example:8723")[0] == 403
    assert pages.respond("POST", "/ui/api/turns", "", "127.0.0.1:8723")[0] == 405
    status, body, _, _ = pages.respond("GET", "/ui/api/turns", "", "127.0.0.1:8723")
    assert status == 200 and json.loads(body) == []
    assert pages.respond("GET", "/ui/nothing", "", "127.0.0.1")[0] == 404


def test_a_listed_turn_carries_its_question_and_reply_clipped():
    trace = ExecutionTrace(execution_arn="arn:x", input={"turn_id": "t", "message": "  سوال\nدو   خط "},
                           output={"status": "answer", "message": "پ" * (TEXT_LIMIT + 50)})
    row = listed(trace)
    assert row["question"] == "سوال دو خط" and row["turn_id"] == "t"
    assert len(row["reply"]) == TEXT_LIMIT and row["reply"].endswith("…")
    # A refused, malformed input may carry no text at all, or not a string.
    assert listed(ExecutionTrace(execution_arn="arn:y", input={"message": 7}))["question"] is None
    assert listed(ExecutionTrace(execution_arn="arn:z", input="not json"))["reply"] is None
