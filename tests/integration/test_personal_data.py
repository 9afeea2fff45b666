"""Personal data is masked in everything the service stores; only the hand-off's last message is raw."""

from __future__ import annotations

import json
import time

import pytest

pytestmark = pytest.mark.stack

PII = {
    "national_code": "0499370899",
    "mobile": "09121234567",
    "card": "6037-9975-9940-8185",
    "sheba": "IR062960000000100324200001",
    "email": "ali.rezaei@example.com",
}


def _raw_items(stack, logical, key):
    from insurance_agent.store import dynamo

    return dynamo.get_item(stack.table_names[logical], key)


def test_nothing_stored_holds_raw_personal_data(conversation, stack):
    from insurance_agent.policy.pii import find_pii

    answered, handed = conversation(), conversation()
    first = answered.payload(f"فرانشیز بیمه بدنه چقدر است؟ کد ملی من {PII['national_code']} و موبایلم "
                             f"{PII['mobile']} است")
    answered.stack.run_turn(first)
    history = answered.payload("برای خسارت دوم چطور؟")  # the first turn is now in this one's history
    answered.stack.run_turn(history)
    second = handed.payload(f"کارت {PII['card']} و شبا {PII['sheba']} و ایمیل {PII['email']}؛ "
                            "لطفاً با یک کارشناس صحبت کنم")
    reply = handed.stack.run_turn(second)
    assert reply["status"] == "escalate"
    # The person taking over gets the last message as sent, and nothing else raw.
    context = reply["handoff_context"]
    assert context["last_message"] == second["message"]
    assert not find_pii(context["conversation_summary"]) and not find_pii(context["rewritten_query"])

    stored = []
    for chat in (answered, handed):
        thread = _raw_items(stack, "ThreadsTable", {"thread_id": chat.thread_id})
        assert thread is not None
        stored.append(json.dumps(thread, ensure_ascii=False, default=str))
    records = [_raw_items(stack, "TurnsTable", {"turn_id": p["turn_id"]}) for p in (first, history, second)]
    assert records[0] is not None and records[2] is not None
    for item in records:
        # (a follow-up refused on a thread the first turn handed off writes no record)
        stored += [item[name] for name in ("history", "query", "reply") if item and name in item]
    text = "\n".join(stored)
    for kind, value in PII.items():
        assert value not in text, kind
    assert "[national_code]" in text and "[phone]" in text and "[card]" in text and "[iban]" in text

    # Threads expire (TTL attribute) ThreadRetentionDays after their last turn.
    days = int(stack.parameters["ThreadRetentionDays"])
    assert abs(int(thread["expires_at"]) - (time.time() + days * 86400)) < 600


def test_replayed_escalation_returns_the_masked_copy(conversation):
    chat = conversation()
    payload = chat.payload(f"موبایلم {PII['mobile']} است، لطفاً با یک کارشناس صحبت کنم")
    first = chat.stack.run_turn(payload)
    assert first["handoff_context"]["last_message"] == payload["message"]
    replay = chat.stack.run_turn(payload)
    assert replay["status"] == "escalate" and PII["mobile"] not in json.dumps(replay, ensure_ascii=False)
