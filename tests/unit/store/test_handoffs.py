"""A pending hand-off applies only to a thread that does not record it yet (never re-latches)."""

from __future__ import annotations

from insurance_agent.store.handoffs import PendingHandoff
from insurance_agent.store.threads import ThreadRecord

PENDING = PendingHandoff(thread_id="t-1", tenant_id="sepehr", user_id="u-1", turn_id="turn-9", reason="system_error",
                         message="m", reply="r", at=1_000)


def _thread(**fields):
    return ThreadRecord(thread_id="t-1", tenant_id="sepehr", user_id="u-1", **fields)


def test_applies_to_a_missing_thread_and_to_one_that_does_not_record_it():
    assert PENDING.applies_to(None)
    assert PENDING.applies_to(_thread(turn_ids=["turn-1"], updated_at=990))
    # Another turn committed after the marker (a concurrent turn): the user was still told of it.
    assert PENDING.applies_to(_thread(turn_ids=["turn-1", "turn-10"], updated_at=1_005))


def test_never_applies_once_the_thread_records_it():
    assert not PENDING.applies_to(_thread(status="handed_off", updated_at=900))
    assert not PENDING.applies_to(_thread(turn_ids=["turn-9"], updated_at=1_000))
