"""benchmarks/guards_real_model.py stretches the ASL's time limits for a slow real model: without it
Generate's 90 s Task timeout ended every draft of a 1.5B model on one CPU thread in States.Timeout,
a `system_error` before the guards saw anything. The stretch may only raise limits, never lower one
or touch anything else of the graph.
"""

from __future__ import annotations

import json

from agent_local.template import REPO_ROOT
from script_loader import load_script




BENCH = load_script(REPO_ROOT / "benchmarks" / "guards_real_model.py", "guards_real_model")
ASL = (REPO_ROOT / "statemachine" / "turn.asl.json").read_text(encoding="utf-8")


def _timeouts(asl: dict) -> dict[str, int]:
    return {name: state["TimeoutSeconds"] for name, state in asl["States"].items() if "TimeoutSeconds" in state}


def test_every_task_and_the_execution_get_at_least_the_benchmarks_limits():
    before, after = json.loads(ASL), json.loads(BENCH.stretch_timeouts(ASL, 1210, 9680))
    assert _timeouts(before)["Generate"] == 90  # the limit this stretch exists for
    assert set(_timeouts(after)) == set(_timeouts(before))
    assert all(seconds == 1210 for seconds in _timeouts(after).values())
    assert after["TimeoutSeconds"] == 9680


def test_a_limit_already_longer_stays_and_nothing_else_changes():
    before = json.loads(ASL)
    after = json.loads(BENCH.stretch_timeouts(ASL, 45, 100))
    assert _timeouts(after) == {name: max(seconds, 45) for name, seconds in _timeouts(before).items()}
    assert after["TimeoutSeconds"] == before["TimeoutSeconds"]  # 280 > 100

    def without_timeouts(asl: dict) -> dict:
        return {name: {k: v for k, v in state.items() if k != "TimeoutSeconds"} for name, state in asl["States"].items()}

    assert without_timeouts(after) == without_timeouts(before)


def test_nested_states_are_stretched_too():
    asl = {"StartAt": "P", "TimeoutSeconds": 10, "States": {"P": {"Type": "Parallel", "End": True, "Branches": [
        {"StartAt": "T", "States": {"T": {"Type": "Task", "TimeoutSeconds": 5, "End": True}}}]}}}
    after = json.loads(BENCH.stretch_timeouts(json.dumps(asl), 60, 600))
    assert after["States"]["P"]["Branches"][0]["States"]["T"]["TimeoutSeconds"] == 60
