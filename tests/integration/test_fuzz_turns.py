"""A sample of the fuzz suite (benchmarks/fuzz_turns.py runs 10,000): generated turn inputs through
StartSyncExecution must never crash the execution, never end in system_error, never write for a
refused input, and every input the contract forbids must be refused as invalid_input."""

from __future__ import annotations

import pytest
from agent_harness.fuzz import WriteCounter, bounded_wait, fuzz_state_machine, run_case, turn_inputs
from hypothesis import HealthCheck, Phase, given, settings

pytestmark = pytest.mark.stack

EXAMPLES = 200


@pytest.fixture(scope="module")
def fuzz_machine(stack):
    return fuzz_state_machine(stack)


@pytest.fixture(scope="module")
def writes(stack):
    counter = WriteCounter()
    yield counter
    counter.close()


def test_generated_turn_inputs(stack, fuzz_machine, writes):
    seen = []

    # derandomize: the same sample every run (CI must not flake); the benchmark explores further.
    @settings(max_examples=EXAMPLES, derandomize=True, database=None, deadline=None,
              phases=[Phase.explicit, Phase.generate, Phase.shrink], suppress_health_check=list(HealthCheck))
    @given(case=turn_inputs())
    def check(case):
        outcome = run_case(stack, fuzz_machine, case, writes)
        seen.append(outcome)
        assert not outcome.problems, (case.kind, case.body[:300], outcome.execution, outcome.status, outcome.code)

    with bounded_wait():
        check()
    assert len(seen) >= EXAMPLES
    # The sample really covers refusals and admitted turns alike.
    assert {o.case.expect for o in seen} >= {"refuse", "accept"}
    assert any(o.status == "escalate" and o.code == "budget_exhausted" for o in seen)


# Inputs the volume run once flagged (a valid-by-oracle turn refused): now oracle and contract agree,
# through the real ASL, in both directions.
FOUND = [
    ({"message": "\x82\U0009e297Í"}, "refuse"),
    ({"message": "¹\x90y"}, "refuse"),
    ({"message": "ñ\x9böQùç1"}, "refuse"),
    ({"locale": "en_GB", "message": "What is the deductible?"}, "accept"),
]


@pytest.mark.parametrize("change, expect", FOUND)
def test_cases_the_volume_run_found(stack, fuzz_machine, writes, change, expect):
    import json
    import uuid

    from agent_harness.fuzz import Case, contract_verdict

    data = {"thread_id": f"fz-{uuid.uuid4().hex[:12]}", "turn_id": f"fz-{uuid.uuid4().hex[:12]}",
            "user_id": "u-1001", "tenant_id": "sepehr", "roles": ["user"], "message": "سلام"} | change
    assert contract_verdict(data) == expect
    outcome = run_case(stack, fuzz_machine, Case(json.dumps(data), expect, "found"), writes)
    assert not outcome.problems
    if expect == "refuse":
        assert (outcome.status, outcome.code, outcome.writes) == ("refused", "invalid_input", 0)
    else:
        assert (outcome.status, outcome.code) == ("escalate", "budget_exhausted")


@pytest.mark.parametrize("depth", [60, 495, 1000, 1450])
def test_deeply_nested_input_is_refused_not_failed(stack, fuzz_machine, writes, depth):
    # Found by the volume run: from about 495 levels the local stack's interpreter failed the
    # execution (RecursionError) instead of letting LoadMemory refuse it.
    from agent_harness.fuzz import Case, _deep_text

    outcome = run_case(stack, fuzz_machine, Case(str(_deep_text(depth)), "refuse", "shape"), writes)
    assert (outcome.execution, outcome.status, outcome.code, outcome.writes) == ("SUCCEEDED", "refused", "invalid_input", 0)


def test_deeply_nested_input_under_hypothesis(stack, fuzz_machine, writes):
    # Hypothesis lowers the recursion limit while an example runs (the volume run's 3 failures).
    from agent_harness.fuzz import Case, _deep_text
    from hypothesis import strategies as st

    @settings(max_examples=4, derandomize=True, database=None, deadline=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck))
    @given(depth=st.sampled_from([700, 1000, 1300, 1450]))
    def check(depth):
        outcome = run_case(stack, fuzz_machine, Case(str(_deep_text(depth)), "refuse", "shape"), writes)
        assert (outcome.execution, outcome.status) == ("SUCCEEDED", "refused"), depth

    with bounded_wait():
        check()
