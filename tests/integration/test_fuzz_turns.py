"""A sample of the fuzz suite (benchmarks/fuzz_turns.py runs 10,000): generated turn inputs through
StartSyncExecution must never crash the execution, never end in system_error, never write for a
refused input, and every input the contract forbids must be refused as invalid_input."""

from __future__ import annotations

import pytest
from agent_local.fuzz import WriteCounter, bounded_wait, fuzz_state_machine, run_case, turn_inputs
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
