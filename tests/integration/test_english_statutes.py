"""English questions on real Persian statute excerpts (tests/data/statutes) through the whole graph on
the local stack: in scope though the corpus is Persian, the passages found offered in English, the
picked one quoted in Persian framed in English, and handed off when the excerpts do not speak of it."""

from __future__ import annotations

from pathlib import Path

import pytest

pytestmark = pytest.mark.stack
TENANT = "probe-statutes"
STATUTES = Path(__file__).resolve().parents[1] / "data" / "statutes"


@pytest.fixture(scope="module")
def statutes(stack):
    from insurance_search.ingest import ingest_directory

    report = ingest_directory(STATUTES, TENANT, reset=True)
    assert report.files == len(list(STATUTES.glob("*.md")))
    return report


def test_an_english_question_without_an_insurance_word_is_answered_from_the_persian_bylaw(statutes, conversation):
    chat = conversation(tenant=TENANT)
    offer = chat.say("Within how many weeks must the traffic police answer inquiries about driving licences?")
    assert offer["status"] == "clarify" and offer["language"] == "en", offer
    assert "your case?" in offer["message"]
    bylaw = [n for n, o in enumerate(offer["options"], 1) if o["file_id"] == "claims-bylaw-excerpt"]
    assert bylaw, offer["options"]
    reply = chat.say(str(bylaw[0]))
    assert reply["status"] == "answer", reply
    assert reply["language"] == "en"
    assert [c["chunk_id"] for c in reply["citations"]] == [offer["options"][bylaw[0] - 1]["chunk_id"]]
    assert reply["message"].startswith("According to «")
    assert "(quoted from the Persian source)" in reply["message"]
    assert "ظرف دو هفته پاسخ دهد" in reply["message"], reply["message"]


def test_an_english_question_the_excerpts_do_not_answer_is_handed_off(statutes, conversation):
    reply = conversation(tenant=TENANT).say("Does my insurer pay for earthquake damage to my house?")
    assert reply["status"] == "escalate", reply
    assert reply["language"] == "en"
    assert not reply.get("citations")
