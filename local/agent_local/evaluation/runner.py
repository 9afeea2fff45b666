"""Run a question set as real turns: DOCS ingested into a fresh home and tenant, every question one turn
through the local stack (moto runs the real ASL, the handlers in-process, the configured provider).

Nothing of the user's data is touched: the home is a new temporary folder (its embedded store, its
in-memory tables), removed afterwards, and the tenant is new too, so that even a Qdrant server chosen
with `--parameter-overrides QdrantUrl=...` only gets chunks that are deleted again at the end.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from agent_local.evaluation.questions import Expected, QuestionSet
from agent_local.evaluation.scoring import UNANSWERABLE, judge, offers_answer, summaries, sweep

USER = "eval-reader"

IngestProgress = Callable[[int, int], None]
TurnProgress = Callable[[dict[str, Any]], None]


class EvalError(RuntimeError):
    """The run cannot go on (no documents ingested, an execution that did not succeed); the message says why."""


@dataclass
class EvalRun:
    """Every turn's record, the summaries, the threshold sweep and what the run was."""

    records: list[dict[str, Any]]
    meta: dict[str, Any]
    summary: dict[str, Any] = field(default_factory=dict)
    sweep: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.summary = self.summary or summaries(self.records)
        self.sweep = self.sweep or sweep(self.records, self.meta["min_confidence"], self.meta["min_support"])


def run(docs: Path, questions: QuestionSet, *, overrides: dict[str, str] | None = None,
        on_ingest: IngestProgress | None = None, on_turn: TurnProgress | None = None) -> EvalRun:
    """Ingest `docs`, ask every question (a chain's turns in order in one thread) and score the replies."""
    from agent_local.stack import LocalStack

    home = Path(tempfile.mkdtemp(prefix="agent-eval-"))
    tenant = f"eval-{uuid.uuid4().hex[:10]}"
    started = time.perf_counter()
    try:
        _isolate(home)
        with LocalStack(home, parameters=overrides or {}, persist=False) as stack:
            try:
                ingest = _ingest(docs, tenant, on_ingest)
                meta = _meta(stack, docs, tenant, ingest)
                records = _ask(stack, questions, tenant, meta, on_turn)
            finally:
                _drop_tenant(tenant)
    finally:
        shutil.rmtree(home, ignore_errors=True)
    meta["seconds"] = round(time.perf_counter() - started, 1)
    return EvalRun(records=records, meta=meta)


def _isolate(home: Path) -> None:
    """Point the store and the log at the fresh home, whatever the user's environment says."""
    os.environ["AGENT_QDRANT_PATH"] = str(home / "qdrant")
    os.environ.pop("AGENT_QDRANT_URL", None)  # a server is used only when asked for with --parameter-overrides
    os.environ["AGENT_LOG_FILE"] = str(home / "logs" / "agent.log")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from insurance_search import index

    index.reset_caches()


def _ingest(docs: Path, tenant: str, on_ingest: IngestProgress | None) -> dict[str, Any]:
    from insurance_search.ingest import ingest_directory

    report = ingest_directory(docs, tenant, reset=True, progress=on_ingest)
    if not report.files:
        skipped = ("; ".join(f"{s.path}: {s.reason}" for s in report.skipped)
                   or "no file of a format agent ingest reads: .md, .txt, .pdf, .docx, .html")
        raise EvalError(f"no document of {docs} was ingested ({skipped})")
    return {"files": report.files, "chunks": report.chunks, "seconds": report.seconds,
            "skipped": [{"path": str(s.path), "reason": str(s.reason)} for s in report.skipped]}


def _drop_tenant(tenant: str) -> None:
    """Remove the run's chunks (they matter on a server) and close the store before its folder goes."""
    from insurance_search import index

    try:
        index.reset(tenant)
    except Exception:  # noqa: BLE001 - the embedded store goes with its folder anyway
        pass
    index.reset_caches()


def _meta(stack: Any, docs: Path, tenant: str, ingest: dict[str, Any]) -> dict[str, Any]:
    from insurance_agent.config import get_settings

    return {
        "docs": str(docs),
        "tenant": tenant,
        "provider": os.environ.get("MODEL_PROVIDER", ""),
        # Roles sent to another provider (RoleProviders / ROLE_PROVIDERS): a run's scores are those of the mix.
        "role_providers": dict(get_settings().models.role_providers),
        "parameters": dict(stack.overrides),
        # The two thresholds the sweep varies, as this run's graph applied them.
        "min_confidence": float(stack.parameters["MinConfidence"]),
        "min_support": get_settings().policy.verify_min_support,
        "started_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "ingest": ingest,
    }


def _ask(stack: Any, questions: QuestionSet, tenant: str, meta: dict[str, Any],
         on_turn: TurnProgress | None) -> list[dict[str, Any]]:
    records = []
    for item in questions.items:
        thread = f"eval-{uuid.uuid4().hex[:12]}"
        turns = item.questions()
        for number, (category, expected) in enumerate(turns, 1):
            record = _turn(stack, tenant, thread, category, expected, meta)
            record = {"id": f"{item.id}#{number}" if item.kind == "chain" else item.id, "item": item.id,
                      "half": item.split()} | record
            # The user's pick of the offered passage that holds the answer, as the next turn of the thread:
            # what a clarification is worth. Not within a chain, whose next turn is the chain's own.
            if record["offers_answer"] and item.kind != "chain":
                record["pick"] = _pick(stack, tenant, thread, category, expected, meta, record["offered"])
            records.append(record)
            if on_turn:
                on_turn(record)
    return records


def _pick(stack: Any, tenant: str, thread: str, category: str, expected: Expected, meta: dict[str, Any],
          offered: list[dict[str, Any]]) -> dict[str, Any]:
    """The turn that picks, by its number, the first offered passage holding an expected phrase; its
    reply is judged as the question's answer."""
    option = next(o["option"] for o in offered if offers_answer(expected.file_ids, expected.must_contain, [o]))
    turn = _turn(stack, tenant, thread, category, expected, meta, message=str(option))
    return {"option": option} | {key: turn[key] for key in ("turn_id", "reply", "verdict", "path", "drafts",
                                                             "llm_calls", "latency_ms")}


def _turn(stack: Any, tenant: str, thread: str, category: str, expected: Expected,
          meta: dict[str, Any], message: str | None = None) -> dict[str, Any]:
    from insurance_agent.models.chunks import RetrievedChunk
    from insurance_agent.policy.provisions import own_text
    from insurance_agent.store import turns

    turn_id = f"turn-{uuid.uuid4().hex}"
    payload = {"thread_id": thread, "turn_id": turn_id, "user_id": USER, "tenant_id": tenant,
               "roles": ["user"], "message": message or expected.question}
    began = time.perf_counter()
    response = stack.run_turn_raw(payload)
    latency_ms = round((time.perf_counter() - began) * 1000)
    if response["status"] != "SUCCEEDED":
        raise EvalError(f"the execution of {expected.question[:60]!r} ended {response['status']}: "
                        f"{response.get('error')} {str(response.get('cause', ''))[:300]}")
    reply = json.loads(response["output"])
    stored = turns.get_parts(turn_id, thread)
    chunks = {c["chunk_id"]: c for c in stored.get("chunks", [])}
    citations = reply.get("citations", [])
    offered = [{"option": number, "chunk_id": o["chunk_id"], "file_id": o.get("file_id"),
                "text": own_text(RetrievedChunk.model_validate(chunks[o["chunk_id"]]))}
               for number, o in enumerate(reply.get("options") or [], 1) if o.get("chunk_id") in chunks]
    verdict = judge(category, expected.file_ids, expected.must_contain, reply["status"], reply.get("message", ""),
                    (c.get("file_id") for c in citations))
    return {
        "kind": category,
        "thread_id": thread,
        "turn_id": turn_id,
        "question": expected.question,
        "file_ids": expected.file_ids,
        "must_contain": expected.must_contain,
        "reply": {"status": reply["status"], "message": reply.get("message", ""), "citations": citations,
                  "reason": reply.get("reason")},
        # Why a refused turn was refused (e.g. a chain's thread handed off at an earlier turn).
        "refusal": reply.get("error"),
        "verdict": verdict,
        "llm_calls": reply.get("trace", {}).get("llm_calls", 0),
        "latency_ms": latency_ms,
        "path": reply.get("trace", {}).get("path", []),
        # Each draft of the turn: answered or not, and the guards (verify last) that rejected it.
        "drafts": stored.get("drafts", []),
        "passages": [{"chunk_id": c["chunk_id"], "file_id": c.get("file_id"), "title": c.get("title"),
                      "text": chunks.get(c["chunk_id"], {}).get("text", "")} for c in citations],
        # The passages a clarifying question offered (a pick would show one), and whether one holds the answer.
        "offered": offered,
        "offers_answer": category != UNANSWERABLE and offers_answer(expected.file_ids, expected.must_contain, offered),
        "draft": _draft(stored, chunks, category, expected, reply, _support(stack, response["executionArn"]), meta),
    }


def _support(stack: Any, execution_arn: str) -> float | None:
    """The last Verify's support ratio, from the execution's history (None when Verify did not ask)."""
    from agent_local.execution_log import history_to_log_events
    from agent_local.trace import parse_execution

    trace = parse_execution(history_to_log_events(stack.history(execution_arn), execution_arn))
    support = None
    for visit in trace.visits:
        if visit.name == "Verify" and isinstance(visit.output, dict):
            support = (visit.output.get("verify") or {}).get("support")
    return support


def _draft(stored: dict[str, Any], chunks: dict[str, dict[str, Any]], category: str, expected: Expected,
           reply: dict[str, Any], support: float | None, meta: dict[str, Any]) -> dict[str, Any] | None:
    """The turn's last draft as the sweep needs it: confidence, support, its own verdict, eligibility."""
    draft = stored.get("draft")
    if not draft or not isinstance(draft.get("result"), dict):
        return None
    result = draft["result"]
    cited = [chunks[i].get("file_id") for i in result.get("citations", []) if i in chunks]
    confidence = float(result.get("confidence", 0.0))
    guards_passed = not draft.get("violations")
    answered = reply["status"] == "answer" and bool(reply.get("citations"))
    met = confidence >= meta["min_confidence"] and support is not None and support >= meta["min_support"]
    return {
        "confidence": confidence,
        "support": support,
        "guards_passed": guards_passed,
        "verdict": judge(category, expected.file_ids, expected.must_contain, "answer", result.get("answer", ""), cited),
        # Met both thresholds yet no answer: something else stopped it, which no threshold changes.
        "eligible": guards_passed and support is not None and (answered or not met),
    }
