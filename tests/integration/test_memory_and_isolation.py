"""Thread state under concurrency, long-term memory, and tenant/role isolation through the graph."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor

import pytest

from insurance_agent.store import profiles, threads

pytestmark = pytest.mark.stack


def test_two_turns_racing_on_one_thread_both_land(conversation):
    chat = conversation()
    chat.say("سلام")
    payloads = [chat.payload("دوره انتظار زایمان در بیمه تکمیلی درمان چقدر است؟"),
                chat.payload("فرانشیز بیمه بدنه خودرو چقدر است؟")]
    with ThreadPoolExecutor(max_workers=2) as pool:
        replies = list(pool.map(chat.stack.run_turn, payloads))
    assert all(r["status"] == "clarify" for r in replies), replies  # each offered its passages
    record = threads.get_thread(chat.thread_id)
    assert {p["turn_id"] for p in payloads} <= set(record.turn_ids)
    assert len(record.turns) == 3 and record.version == 3


def test_answers_teach_memory_without_personal_data(conversation, stack):
    chat = conversation(user="u-mem-1")
    reply = chat.say("من بیمه تکمیلی درمان دارم. دوره انتظار زایمان برای همسرم چقدر است؟")
    assert reply["status"] == "clarify", reply
    profile = profiles.get_profile("sepehr", "u-mem-1").public()
    assert profile["products"] == ["supplementary_health"]
    assert "spouse" in profile["family"]
    # The store is the second line of defence: a sensitive value never lands, whatever asks.
    profiles.remember("sepehr", "u-mem-1", "turn-pii", {"notes": ["کد ملی 0499370899", "09121234567"]}, "fa")
    stored = json.dumps(profiles.get_profile("sepehr", "u-mem-1").public())
    assert "0499370899" not in stored and "09121234567" not in stored
    # The profile is scoped to the tenant: the same user id elsewhere has nothing.
    assert profiles.get_profile("kavir", "u-mem-1").public() == {}


def test_memory_reaches_the_handoff_context(conversation):
    chat = conversation(user="u-mem-2")
    # (Asked about the car-body deductible instead, the sample corpus once answered that third-party
    # insurance has none; the local generate now hands that turn off, and the thread with it.)
    chat.say("من بیمه شخص ثالث دارم. فرانشیز بیمه شخص ثالث چقدر است؟")
    reply = chat.say("می‌خواهم با یک کارشناس صحبت کنم")
    assert reply["status"] == "escalate"
    assert reply["handoff_context"]["user_profile"].get("products") == ["third_party"]
    assert "شخص ثالث" in reply["handoff_context"]["conversation_summary"]


def test_memory_cli_prints_the_profile(tmp_path):
    """`agent memory` in its own process, reading the local stack's persisted tables."""
    import subprocess
    import sys
    from pathlib import Path

    facts = json.dumps({"family": ["children"], "products": ["travel"]})
    item = {"user_key": {"S": "sepehr#u-mem-cli"}, "facts": {"S": facts}, "version": {"N": "1"},
            "applied_turns": {"L": [{"S": "turn-x"}]}, "preferred_language": {"S": "en"}}
    (tmp_path / "dynamodb.json").write_text(json.dumps({"ProfilesTable": [item]}), encoding="utf-8")
    agent = Path(sys.executable).parent / "agent"
    result = subprocess.run([str(agent), "--home", str(tmp_path), "memory", "--user", "u-mem-cli", "--tenant", "sepehr"],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == {"family": ["children"], "products": ["travel"], "preferred_language": "en"}
    other = subprocess.run([str(agent), "--home", str(tmp_path), "memory", "--user", "u-mem-cli", "--tenant", "kavir"],
                           capture_output=True, text=True, timeout=120)
    assert json.loads(other.stdout) == {}


def test_tenant_isolation_through_the_graph(conversation):
    # kavir's distinctive product is never cited to a sepehr user, even when asked by name.
    reply = conversation(tenant="sepehr").say("طرح ویژه کویر-۹۰۴ چیست؟")
    assert all(not c["file_id"].startswith("kavir") for c in reply.get("citations", []))
    assert all(not (o["file_id"] or "").startswith("kavir") for o in reply.get("options") or [])
    chat = conversation(tenant="kavir", user="u-2001")
    own = chat.ask("طرح ویژه کویر-۹۰۴ چیست؟")
    assert own["status"] == "answer", own
    assert all(o["file_id"].startswith("kavir") for o in chat.offered["options"])
    assert own["citations"] and all(c["file_id"].startswith("kavir") for c in own["citations"])


def test_a_passage_of_another_tenant_cannot_be_picked_into_a_search(stack):
    from insurance_search.search import search

    theirs = search("طرح ویژه کویر-۹۰۴", tenant_id="kavir", roles=["user"])[0]
    # the pick's scope narrows a search; it never widens one past the tenant and audience filter
    assert search("طرح ویژه کویر-۹۰۴", tenant_id="sepehr", roles=["user"], scope={"chunk_id": theirs.chunk_id}) == []
    mine = search("طرح ویژه کویر-۹۰۴", tenant_id="kavir", roles=["user"], scope={"chunk_id": theirs.chunk_id})
    assert [hit.chunk_id for hit in mine] == [theirs.chunk_id]


def test_officer_only_document_never_reaches_a_user(conversation):
    question = "سقف اختیار تأیید خسارت کارشناس ارشد خسارت چقدر است؟"
    user = conversation(roles=["user"]).say(question)
    assert "SEP-INT-7731" not in json.dumps(user, ensure_ascii=False)
    assert all(c["file_id"] != "sepehr-internal-claims-guideline" for c in user.get("citations", []))
    assert all(o["file_id"] != "sepehr-internal-claims-guideline" for o in user.get("options") or [])
    chat = conversation(roles=["officer"], user="officer-1")
    officer = chat.ask(question)
    assert "sepehr-internal-claims-guideline" in {c["file_id"] for c in officer.get("citations", [])}, officer
