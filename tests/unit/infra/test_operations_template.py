"""The template's operations resources agree with what the code emits: the dashboard, the saved
queries and the escalation-rate alarm name only metrics and dimensions that some node publishes."""

from __future__ import annotations

import json
import re

import pytest
from agent_local.template import REPO_ROOT, load_template, resources_of_type

CORE = REPO_ROOT / "layers" / "core" / "insurance_agent"


@pytest.fixture(scope="module")
def template():
    return load_template()


def _emitted() -> dict[str, set[str]]:
    """Metric name -> dimension names, read from the code (emit(...) and metrics.add_metric(...))."""
    source = "\n".join(p.read_text(encoding="utf-8") for p in CORE.rglob("*.py"))
    out: dict[str, set[str]] = {}
    for name, args in re.findall(r'emit\(\s*"(\w+)"(.*)', source):  # a call fits on one line
        out.setdefault(name, set()).update(re.findall(r"\b(\w+)=(?!=)", args))
    for name in re.findall(r'add_metric\(name="(\w+)"', source):
        out.setdefault(name, set())
    return out


def _dashboard(template) -> dict:
    body = template["Resources"]["OperationsDashboard"]["Properties"]["DashboardBody"]["Fn::Sub"]
    return json.loads(re.sub(r"\$\{[\w:.]+\}", "1", body))


def test_no_metric_name_carries_a_value():
    names = set(_emitted())
    assert {"Turns", "Escalations", "Routes", "Verdicts", "NodeLatency", "NodeFailures", "ColdStart"} <= names
    assert not [n for n in names if "_" in n]
    assert _emitted()["Escalations"] == {"Reason"} and _emitted()["Turns"] == {"Status"}


def test_the_dashboard_shows_only_metrics_the_service_emits(template):
    emitted = _emitted()
    widgets = _dashboard(template)["widgets"]
    titles = {w["properties"]["title"] for w in widgets}
    assert {"Turns by status", "Escalations by reason", "Latency per state (p95, ms)", "Model calls per turn"} <= titles
    for widget in widgets:
        for row in widget["properties"].get("metrics", []):
            first = row[0]
            if isinstance(first, dict) and "SEARCH(" in first.get("expression", ""):
                match = re.search(r"\{InsuranceAgent,([\w,]+)\} MetricName=\"(\w+)\"", first["expression"])
                dimensions, name = set(match.group(1).split(",")) - {"service"}, match.group(2)
                assert name in emitted and dimensions == emitted[name], (name, dimensions)
            elif first == "InsuranceAgent":
                assert row[1] in emitted, row


def test_the_escalation_alarm_divides_turn_outcomes(template):
    alarm = template["Resources"]["EscalationRateAlarm"]["Properties"]
    stats = [m["MetricStat"]["Metric"] for m in alarm["Metrics"] if "MetricStat" in m]
    assert {m["MetricName"] for m in stats} == {"Turns"}
    statuses = {d["Value"] for m in stats for d in m["Dimensions"] if d["Name"] == "Status"}
    assert statuses == {"escalate", "answer", "clarify"}
    (expression,) = [m["Expression"] for m in alarm["Metrics"] if "Expression" in m]
    assert "escalated" in expression and "answered" in expression and "clarified" in expression


def test_saved_queries_cover_the_operations_questions(template):
    queries = resources_of_type(template, "AWS::Logs::QueryDefinition")
    names = {q["Properties"]["Name"]["Fn::Sub"].split("/")[-1] for q in queries.values()}
    assert {"turns-by-status-and-reason", "latency-per-state", "model-calls-per-turn",
            "failed-tasks-with-cause", "find-a-turn"} <= names
    logs = set(resources_of_type(template, "AWS::Logs::LogGroup"))
    for query in queries.values():
        assert all(group["Ref"] in logs for group in query["Properties"]["LogGroupNames"])
    latency = next(q for q in queries.values() if q["Properties"]["Name"]["Fn::Sub"].endswith("latency-per-state"))
    assert "NodeLatency" in latency["Properties"]["QueryString"] and "by Node" in latency["Properties"]["QueryString"]


def test_turns_handed_over_for_unusable_model_output_have_an_alarm(template):
    from insurance_agent.models.turn import EscalationReason

    alarm = template["Resources"]["ModelOutputAlarm"]["Properties"]
    assert alarm["Namespace"] == "InsuranceAgent" and alarm["MetricName"] == "Escalations"
    assert alarm["MetricName"] in _emitted()
    dimensions = {d["Name"]: d["Value"] for d in alarm["Dimensions"]}
    assert dimensions == {"service": "insurance-agent", "Reason": EscalationReason.MODEL_OUTPUT.value}
    assert alarm["Threshold"] == {"Ref": "ModelOutputAlarmThreshold"}
