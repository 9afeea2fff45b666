"""Turn parts: a record written before the parts were typed still loads, and a write stores the same JSON."""

from __future__ import annotations

import json

import pytest
from insurance_agent.models.parts import Draft, DraftLog, GradeDetail, TurnParts, VerifyDetail
from insurance_agent.models.roles import GenerateResult, GradeVerdict
from insurance_agent.models.scope import Scope
from insurance_agent.models.turn import Status, TurnReply
from insurance_agent.store import dynamo, turns

NOW = 1_800_000_000

CHUNK = {"chunk_id": "body-3", "file_id": "body", "title": "بیمه بدنه", "domain": "auto", "product": None,
         "chunk_index": 3, "language": "fa", "audience": ["user"], "tenant_id": "sepehr", "text": "فرانشیز ۱۰ درصد",
         "heading": None, "flags": [], "score": 0.8125, "expanded_from": ["body-2"]}
RESULT = {"answer": "فرانشیز ۱۰ درصد است [body-3]", "claims": [{"text": "فرانشیز ۱۰ درصد", "chunk_ids": ["body-3"]}],
          "citations": ["body-3"], "answered": True, "confidence": 0.9, "calculations": []}

# Each attribute exactly as the code before the typed parts wrote it (dicts dumped by dynamo.dumps).
OLD_PARTS = {
    "history": [{"message": "قیمتش چقدره؟", "reply": "کدام بیمه؟", "status": "clarify", "query": "قیمت بیمه",
                 "language": "fa", "options": [{"label": "بیمه بدنه", "file_id": "body", "title": "بیمه بدنه",
                                                "domain": "auto"}],
                 "scope": {}, "documents": []}],
    "profile": {"vehicle": ["car"], "preferred_language": "fa"},
    "query": "فرانشیز بیمه بدنه",
    "scope": {"file_id": "body", "domain": "auto"},
    "chunks": [CHUNK],
    "account_chunks": [],
    "grade": {"verdict": "sufficient", "relevance": [{"chunk_id": "body-3", "relevant": True, "score": 1.0}]},
    "options": [],
    "draft": {"result": RESULT, "violations": []},
    "drafts": [{"answered": True, "rejected_by": ["numbers"]}, {"answered": True, "rejected_by": []}],
    "verify": {"grounded": False, "unsupported": ["فرانشیز ۲۰ درصد"], "violations": []},
    "feedback": ["فرانشیز ۲۰ درصد"],
    "reply": {"status": "answer", "message": "فرانشیز ۱۰ درصد است", "language": "fa", "citations": [], "options": [],
              "reason": None, "handoff_context": None, "error": None, "field": None, "problem": None,
              "turn_id": "turn-1", "trace": {"path": ["LoadMemory"], "llm_calls": 2, "retrieval_rounds": 1,
                                             "model_invocations": 0}},
}


@pytest.fixture
def record(monkeypatch):
    """A fake turns table: get_item answers `item`, update_item records what it was asked to set."""
    item: dict = {"turn_id": "turn-1", "thread_id": "t-1", "expires_at": NOW + 60}
    written: dict = {}

    class Table:
        def update_item(self, **request):
            names, values = request["ExpressionAttributeNames"], request["ExpressionAttributeValues"]
            for placeholder, name in names.items():
                if placeholder.startswith("#p"):
                    written[name] = values[":" + placeholder[1:]]

    monkeypatch.setattr(dynamo, "now", lambda: NOW)
    monkeypatch.setattr(dynamo, "get_item", lambda table, key: item if key == {"turn_id": "turn-1"} else None)
    monkeypatch.setattr(dynamo, "table", lambda name: Table())
    return item, written


def test_the_part_names_are_the_fields_of_the_model():
    assert turns.PARTS == tuple(TurnParts.model_fields)
    assert set(turns.PARTS) == set(OLD_PARTS)


def test_a_record_written_before_the_parts_were_typed_loads_as_models(record):
    item, _ = record
    item.update({name: dynamo.dumps(value) for name, value in OLD_PARTS.items()})
    parts = turns.load_parts("turn-1", "t-1", "the message")
    assert parts.query == "فرانشیز بیمه بدنه"
    assert parts.scope == Scope(file_id=["body"], domain=["auto"]) and parts.scope.first_domain == "auto"
    assert parts.grade == GradeDetail(verdict=GradeVerdict.SUFFICIENT, relevance=parts.grade.relevance)
    assert parts.grade.relevance[0].chunk_id == "body-3"
    assert parts.draft.result == GenerateResult.model_validate(RESULT) and parts.draft.violations == []
    assert [d.rejected_by for d in parts.drafts.root] == [["numbers"], []]
    assert parts.verify == VerifyDetail(grounded=False, unsupported=["فرانشیز ۲۰ درصد"])
    assert parts.reply.status == Status.ANSWER and parts.reply.trace.llm_calls == 2
    assert parts.chunks[0].score == 0.8125 and parts.history[0].options[0].file_id == "body"
    assert parts.profile == {"vehicle": ["car"], "preferred_language": "fa"}


def test_an_old_record_with_empty_and_absent_parts_takes_the_defaults(record):
    item, _ = record
    item.update({"scope": "{}", "drafts": "[]", "grade": "{}", "reply": "null"})
    parts = turns.load_parts("turn-1", "t-1", "the message")
    assert parts.query == "the message"
    assert parts.scope == Scope() and parts.drafts == DraftLog() and len(parts.drafts) == 0
    assert parts.grade is parts.draft is parts.verify is parts.reply is None


def test_models_are_stored_as_the_json_the_old_code_wrote(record):
    _, written = record
    loaded = TurnParts.of(OLD_PARTS, "m")
    turns.put_parts("turn-1", "t-1", **{name: getattr(loaded, name) for name in turns.PARTS})
    for name in ("scope", "draft", "drafts", "verify", "reply", "profile", "feedback"):
        assert written[name] == dynamo.dumps(OLD_PARTS[name]), name
    # Fields added since are the only difference: the passages grade found the question pinned to,
    # and where a chunk's own text is in its expanded window.
    assert json.loads(written["grade"]) == {**OLD_PARTS["grade"], "pinned": []}
    assert json.loads(written["chunks"]) == [{**chunk, "own_span": []} for chunk in OLD_PARTS["chunks"]]
    # the same data (user text masked); an option now says whether it is one passage (`chunk_id`)
    assert json.loads(written["history"]) == [
        {**turn, "options": [{**option, "chunk_id": None} for option in turn["options"]]}
        for turn in OLD_PARTS["history"]]


def test_a_part_of_the_wrong_type_is_refused_before_any_write(record):
    _, written = record
    with pytest.raises(TypeError, match="grade"):
        turns.put_parts("turn-1", "t-1", grade={"verdict": "maybe"})
    with pytest.raises(ValueError, match="unknown turn parts"):
        turns.put_parts("turn-1", "t-1", grades=GradeDetail(verdict=GradeVerdict.SUFFICIENT))
    assert written == {}


def test_the_draft_log_adds_drafts_and_lets_verify_reject_the_latest():
    log = DraftLog()
    log.reject_latest("verify")  # nothing drafted yet: nothing to reject
    log.add(True, ["numbers"])
    log.add(True, [])
    log.reject_latest("verify")
    assert log.model_dump() == [{"answered": True, "rejected_by": ["numbers"]},
                                {"answered": True, "rejected_by": ["verify"]}]


def test_a_stored_draft_and_reply_round_trip_through_their_models(record):
    item, written = record
    draft = Draft(result=GenerateResult.model_validate(RESULT), violations=["numbers: 20 is in no cited chunk"])
    reply = TurnReply(status=Status.CLARIFY, message="کدام بیمه؟", turn_id="turn-1")
    turns.put_parts("turn-1", "t-1", draft=draft, reply=reply, scope=Scope(file_id="body"))
    item.update(written)
    parts = turns.load_parts("turn-1", "t-1", "m")
    assert parts.draft == draft and parts.reply == reply
    assert written["scope"] == '{"file_id":"body"}' and parts.scope.file_id == ["body"]

