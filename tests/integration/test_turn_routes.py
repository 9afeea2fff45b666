"""Every route and escalation trigger of the graph, through the real ASL on the local stack."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.stack

NO_RETRIEVAL = {"Retrieve", "Grade", "Contextualize"}

ROUTES = [
    # (case id, message, expected status, expected reason, language)
    # A knowledge question: the offline provider offers the passages it found (it cannot read them).
    ("fa-knowledge", "دوره انتظار زایمان در بیمه تکمیلی درمان چقدر است؟", "clarify", None, "fa"),
    ("en-knowledge", "What is the deductible of the health insurance for foreign residents?", "clarify", None, "en"),
    ("fa-chitchat", "سلام، وقت بخیر", "answer", None, "fa"),
    ("en-out-of-scope", "Who won the football match last night?", "answer", None, "en"),
    ("fa-handoff", "می‌خواهم با یک کارشناس صحبت کنم", "escalate", "user_requested", "fa"),
    ("en-handoff", "Can I talk to a human agent please?", "escalate", "user_requested", "en"),
    ("fa-cancellation", "می‌خواهم بیمه‌نامه‌ام را لغو کنم", "escalate", "restricted_intent", "fa"),
    ("en-complaint", "I want to file a complaint about how my claim was handled", "escalate", "restricted_intent", "en"),
    ("fa-legal", "از شرکت شما به دادگاه شکایت می‌کنم و وکیل گرفته‌ام", "escalate", "restricted_intent", "fa"),
    ("fa-frustration", "اصلا جواب سوالم رو ندادی، خسته شدم", "escalate", "frustration", "fa"),
    ("en-frustration", "This is useless, you are not helping at all", "escalate", "frustration", "en"),
]


@pytest.mark.parametrize("case,message,status,reason,language", ROUTES, ids=[r[0] for r in ROUTES])
def test_route(conversation, case, message, status, reason, language):
    chat = conversation()
    reply = chat.say(message)
    assert reply["status"] == status, reply
    assert reply.get("reason") == reason
    assert reply["language"] == language
    path = reply["trace"]["path"]
    assert path[0] == "LoadMemory"
    if status == "escalate":
        assert path[-1] == "Escalate"
        assert reply["handoff_context"]["conversation_summary"]
    if case.endswith(("chitchat", "out-of-scope")):
        assert not NO_RETRIEVAL & set(path), path
        assert reply["citations"] == []
        assert reply["trace"]["retrieval_rounds"] == 0
    if case.endswith("knowledge"):
        assert reply["citations"] == [] and {"Retrieve", "Grade", "Clarify"} <= set(path)
        offered = reply["options"][0]
        assert offered["chunk_id"] and offered["label"].startswith(offered["title"])
        # the user's pick is answered with that passage, and cites it alone
        picked = chat.say("1")
        assert picked["status"] == "answer" and picked["language"] == language, picked
        assert [c["chunk_id"] for c in picked["citations"]] == [offered["chunk_id"]]
        assert {"Retrieve", "Grade", "Generate", "Verify", "WriteMemory"} <= set(picked["trace"]["path"])


def test_persian_answer_cites_the_right_document(conversation):
    chat = conversation()
    reply = chat.ask("دوره انتظار زایمان در بیمه تکمیلی درمان چقدر است؟")
    assert chat.offered["options"][0]["file_id"] == "sepehr-supplementary-health"
    assert {c["file_id"] for c in reply["citations"]} == {"sepehr-supplementary-health"}
    assert "۲۷۰ روز" in reply["message"]  # the picked passage is the waiting-period table


def test_english_answer_is_in_english_and_cites_english_document(conversation):
    chat = conversation()
    reply = chat.ask("What is the deductible of the health insurance for foreign residents?")
    assert reply["language"] == "en" and chat.offered["language"] == "en"
    assert "your case?" in chat.offered["message"]
    assert "sepehr-expat-health" in {c["file_id"] for c in reply["citations"]}


def test_escalation_latches_the_thread(conversation):
    chat = conversation()
    assert chat.say("می‌خواهم با یک کارشناس صحبت کنم")["status"] == "escalate"
    after = chat.say("دوره انتظار زایمان چقدر است؟")
    assert after["status"] == "refused"
    assert after["error"] == "thread_handed_off"
    assert after["trace"]["path"] == ["LoadMemory"]
    assert after["trace"]["llm_calls"] == 0


def test_vague_question_gets_grounded_clarification(conversation, stack):
    chat = conversation()
    reply = chat.say("حق بیمه چقدر است؟")
    assert reply["status"] == "clarify", reply
    options = reply["options"]
    assert 2 <= len(options) <= 4
    assert len({o["file_id"] for o in options}) == len(options)
    # Every option is a document of this tenant that really exists in the store.
    from insurance_search.search import search

    for option in options:
        hits = search(option["title"], tenant_id="sepehr", roles=["user"], scope={"file_id": option["file_id"]})
        assert hits and all(h.file_id == option["file_id"] for h in hits)


def test_picking_an_option_answers_from_that_document(conversation):
    chat = conversation()
    first = chat.say("حق بیمه چقدر است؟")
    assert first["status"] == "clarify"
    picked = first["options"][1]
    reply = chat.say("2")
    assert reply["status"] == "answer", reply
    assert [c["chunk_id"] for c in reply["citations"]] == [picked["chunk_id"]]
    assert {c["file_id"] for c in reply["citations"]} == {picked["file_id"]}


def test_clarifications_that_do_not_converge_escalate(conversation):
    chat = conversation()
    assert chat.say("حق بیمه چقدر است؟")["status"] == "clarify"
    assert chat.say("هزینه بیمه چقدر می‌شود؟")["status"] == "clarify"
    third = chat.say("قیمت حق بیمه چنده؟")
    assert third["status"] == "escalate"
    assert third["reason"] == "budget_exhausted"


def test_uncovered_question_escalates_without_repeating_the_same_search(conversation):
    # No word of the question has a synonym or rendering to try: a second round would search the
    # same terms again, so the graph escalates after the first.
    reply = conversation().say("آیا بیمه حیوانات خانگی برای سگ و گربه دارید؟")
    assert reply["status"] == "escalate", reply
    assert reply["reason"] == "insufficient_retrieval"
    assert reply["trace"]["retrieval_rounds"] == 1
    assert reply["trace"]["path"].count("Retrieve") == 1


def test_a_second_retrieval_round_searches_a_different_query(conversation):
    # «هزینه» has synonyms the first round did not search with: the second round is broader.
    from insurance_agent.store import turns

    chat = conversation()
    reply = chat.say("هزینه بیمه حیوانات خانگی مثل سگ و گربه چقدر است؟")
    assert reply["status"] == "escalate" and reply["reason"] == "insufficient_retrieval", reply
    assert reply["trace"]["retrieval_rounds"] == 2
    assert reply["trace"]["path"].count("Retrieve") == 2
    query = turns.get_parts(reply["turn_id"], chat.thread_id)["query"]
    assert "حق بیمه" in query and "چقدر" not in query


def test_follow_up_is_resolved_against_history(conversation):
    chat = conversation()
    first = chat.ask("پوشش بیمه تکمیلی درمان برای بیمه‌شده چیست؟")
    assert first["status"] == "answer", first
    follow = chat.say("برای همسرم چطور؟")
    assert follow["status"] == "clarify", follow
    spouse = [n for n, o in enumerate(follow["options"], 1) if "همسر" in o["label"]]
    assert spouse and follow["options"][spouse[0] - 1]["file_id"] == "sepehr-supplementary-health", follow
    picked = chat.say(str(spouse[0]))
    assert "sepehr-supplementary-health" in {c["file_id"] for c in picked["citations"]}
    assert "همسر" in picked["message"]


def test_account_question_uses_only_the_users_own_policies(conversation):
    mine = conversation(user="u-1001").say("بیمه‌نامه شخص ثالث من کی تمام می‌شود؟")
    assert mine["status"] == "answer", mine
    assert "Account" in mine["trace"]["path"]
    cited = [c["chunk_id"] for c in mine["citations"] if c["chunk_id"].startswith("account:")]
    assert cited, mine
    other = conversation(user="u-1002").say("بیمه‌نامه شخص ثالث من کی تمام می‌شود؟")
    assert not any(c["chunk_id"] in cited for c in other.get("citations", []))


def test_an_account_question_without_policies_on_record_is_searched_as_a_knowledge_question(conversation):
    from insurance_agent.store import turns

    # u-1999 holds no policy in the accounts table: nothing of their own to look up, so the English
    # question is rewritten (translated) before its search instead of being searched as typed.
    chat = conversation(user="u-1999")
    reply = chat.say("When does my third-party insurance policy expire?")
    path = reply["trace"]["path"]
    assert path.index("Account") < path.index("Contextualize") < path.index("Retrieve"), path
    query = turns.get_parts(reply["turn_id"], chat.thread_id)["query"]
    assert "شخص ثالث" in query, query
    assert not turns.get_parts(reply["turn_id"], chat.thread_id).get("account_chunks")
    # a user with policies keeps the account path: their records are the evidence
    mine = conversation(user="u-1001").say("When does my third-party insurance policy expire?")
    assert mine["trace"]["path"][:4] == ["LoadMemory", "Triage", "Account", "Retrieve"], mine["trace"]["path"]


def test_asking_for_ones_own_premium_is_answered_from_ones_own_policies(conversation):
    # Product documents that each mention premiums cover the question far less than the user's own
    # records do: they are not readings to choose between, so no clarifying question is asked.
    reply = conversation(user="u-1001").say("حق بیمه‌ام امسال چقدر شد؟")
    assert reply["status"] == "answer", reply
    assert reply["citations"] and all(c["chunk_id"].startswith("account:") for c in reply["citations"]), reply
    assert "حق بیمه" in reply["message"]
