"""Production observability, through real turns: metrics carry values as dimensions, the cold start
and each node's latency are metrics, a failing node is logged with its error type and traceback, and
X-Ray traces are annotated with tenant, thread and turn."""

from __future__ import annotations

import json
import logging

import pytest
from agent_local import moto_patches
from insurance_agent import lambda_entry
from insurance_agent.observability import logger, tracer

pytestmark = pytest.mark.stack


class ModelQuotaExceeded(Exception):
    """A failure type no node raises on its own."""

KNOWLEDGE = "دوره انتظار زایمان در بیمه تکمیلی درمان چقدر است؟"


@pytest.fixture
def emf(monkeypatch, capsys):
    """Metrics switched on for the test; returns a function that parses the EMF records printed so far."""
    monkeypatch.setenv("POWERTOOLS_METRICS_DISABLED", "false")
    capsys.readouterr()

    def records() -> list[dict]:
        out = []
        for line in capsys.readouterr().out.splitlines():
            if line.startswith("{") and '"_aws"' in line:
                out.append(json.loads(line))
        return out

    return records


def metric(records, name):
    """(dimensions, value) of every record that holds metric `name`."""
    found = []
    for record in records:
        for block in record["_aws"]["CloudWatchMetrics"]:
            if any(m["Name"] == name for m in block["Metrics"]):
                assert block["Namespace"] == "InsuranceAgent"
                dimensions = {d: record[d] for names in block["Dimensions"] for d in names}
                value = record[name]  # EMF allows a list of values; Powertools writes one
                found.append((dimensions, value[0] if isinstance(value, list) and len(value) == 1 else value))
    return found


def test_outcomes_are_one_metric_each_with_the_value_as_a_dimension(conversation, emf):
    conversation().say("می‌خواهم با یک کارشناس صحبت کنم")
    conversation().ask(KNOWLEDGE)  # the passages offered, and the pick answered with one
    records = emf()
    names = {m["Name"] for r in records for b in r["_aws"]["CloudWatchMetrics"] for m in b["Metrics"]}
    # No metric name carries a value any more (Escalation_user_requested, Intent_knowledge, ...).
    assert not {n for n in names if "_" in n}, names
    assert ({"Reason": "user_requested", "service": "insurance-agent"}, 1) in metric(records, "Escalations")
    statuses = sorted(d["Status"] for d, _ in metric(records, "Turns"))
    assert statuses == ["answer", "clarify", "escalate"]  # once per turn, by the node that ends it
    assert {d["Route"] for d, _ in metric(records, "Routes")} == {"handoff_request", "knowledge"}
    assert {(d["Node"], d["Verdict"]) for d, _ in metric(records, "Verdicts")} == {
        ("grade", "ambiguous"), ("grade", "sufficient"), ("verify", "grounded")}
    latency = {d["Node"] for d, _ in metric(records, "NodeLatency")}
    assert {"LoadMemory", "Triage", "Retrieve", "Generate", "Verify", "WriteMemory", "Escalate"} <= latency
    assert [v for d, v in metric(records, "LlmCallsPerTurn")]  # the aggregate metrics are still published


def test_a_cold_start_is_counted_once_per_node(conversation, emf, monkeypatch):
    monkeypatch.setattr(lambda_entry, "_warm", set())
    conversation().say("سلام")
    conversation().say("سلام")
    cold = [d["Node"] for d, _ in metric(emf(), "ColdStart")]
    assert "LoadMemory" in cold and len(cold) == len(set(cold))


def test_a_failing_node_is_logged_with_its_error_type_and_counted(stack, conversation, emf):
    records: list[logging.LogRecord] = []

    class Keep(logging.Handler):
        def emit(self, record):
            records.append(record)

    keep = Keep(level=logging.ERROR)
    logger.addHandler(keep)
    name = stack.function_names["GenerateFunction"]
    original = moto_patches.handlers()[name]

    def boom(state):
        raise ModelQuotaExceeded("quota")

    # The real handler wrapper around a node that fails the way a provider error would.
    moto_patches.register_handler(name, lambda_entry.node_handler("Generate", boom))
    try:
        chat = conversation()
        assert chat.say(KNOWLEDGE)["status"] == "clarify"
        reply = chat.say("۱")  # the pick of a passage is the turn that reaches generate
    finally:
        moto_patches.register_handler(name, original)
        logger.removeHandler(keep)
    assert reply["reason"] == "system_error"
    failed = [r for r in records if r.getMessage() == "node failed"]
    assert failed and failed[0].exc_info and failed[0].exc_info[0] is ModelQuotaExceeded
    assert failed[0].error_type == "ModelQuotaExceeded"
    assert ({"Node": "Generate", "ErrorType": "ModelQuotaExceeded", "service": "insurance-agent"}, 1) in \
        metric(emf(), "NodeFailures")


def test_traces_are_annotated_with_tenant_thread_and_turn(conversation, monkeypatch):
    annotations: list[tuple[str, str]] = []
    monkeypatch.setattr(tracer, "put_annotation", lambda key, value: annotations.append((key, value)))
    chat = conversation(tenant="kavir")
    reply = chat.say("سلام")
    assert ("tenant_id", "kavir") in annotations and ("thread_id", chat.thread_id) in annotations
    assert ("turn_id", reply["turn_id"]) in annotations and ("node", "Triage") in annotations
