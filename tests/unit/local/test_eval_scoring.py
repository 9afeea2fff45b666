"""`agent eval`'s scoring rule, halves, summaries and threshold sweep, and its question file's checks."""

from __future__ import annotations

import json

import pytest

from agent_local.evaluation.questions import QuestionFileError, load_questions
from agent_local.evaluation.scoring import (
    half_of,
    judge,
    percentile,
    rejections,
    score_text,
    summaries,
    sweep,
)

LAW = ["tp-claims-bylaw-art30"]


def test_reply_and_phrase_are_normalised_alike():
    # Arabic yeh/kaf, Persian digits, a ZWNJ, a soft hyphen, a direction mark and a run of spaces.
    assert score_text("بيمه\u200cنامه   ظرف ۱۵ روز\u00ad\u200f كامل") == "بیمه نامه ظرف 15 روز کامل"


@pytest.mark.parametrize("stand_in", ["\u200f", "\u200e", "\u00ad", "\u200d", "\u200f\u200f"])
def test_a_mark_inside_a_word_reads_as_the_half_space(stand_in):
    # The source's «می RLM شود» is the reply's «می ZWNJ شود»: one word, so one verdict.
    assert score_text(f"پرداخت نمی{stand_in}شود") == score_text("پرداخت نمی\u200cشود") == "پرداخت نمی شود"
    assert judge("formal", LAW, [f"نمی{stand_in}شود"], "answer", "خسارت پرداخت نمی\u200cشود.", LAW) == "correct"


@pytest.mark.parametrize(
    ("status", "message", "cited", "verdict"),
    [
        ("answer", "ظرف پانزده روز كاري", LAW, "correct"),  # Arabic kaf in the reply, Persian in the phrase
        ("answer", "ظرف پانزده روز کاری", ["another-bylaw"], "wrong"),  # the phrase from the wrong document
        ("answer", "سه ماه", LAW, "wrong"),  # the right document, not the fact asked
        ("answer", "ظرف پانزده روز کاری", [], "declined"),  # no citation: not an answer from the documents
        ("escalate", "", [], "declined"),
        ("clarify", "ظرف پانزده روز کاری", LAW, "declined"),
    ],
)
def test_an_answerable_turn_is_correct_only_with_the_phrase_and_an_expected_citation(status, message, cited, verdict):
    assert judge("colloquial", LAW, ["ظرف پانزده روز کاری"], status, message, cited) == verdict


def test_an_unanswerable_question_is_answered_only_with_citations():
    assert judge("unanswerable", [], [], "answer", "هر چیزی", ["any"]) == "answered"
    assert judge("unanswerable", [], [], "answer", "سلام", []) == "declined"
    assert judge("unanswerable", [], [], "escalate", "", []) == "declined"


def test_the_halves_follow_the_first_byte_of_the_ids_sha256():
    # sha256("F01")[0] is even, sha256("U11")[0] odd: the split the development set's figures use.
    assert half_of("F01") == "fit" and half_of("U11") == "report"
    assert {half_of(f"Q{n}") for n in range(20)} == {"fit", "report"}


def test_percentile_is_nearest_rank():
    assert percentile([], 50) is None
    assert percentile([400, 100, 300, 200], 50) == 200
    assert percentile([400, 100, 300, 200], 95) == 400


def _record(rid, kind, verdict, *, status="answer", reason=None, half="fit", calls=4, ms=1000, draft=None):
    return {"id": rid, "kind": kind, "half": half, "verdict": verdict, "llm_calls": calls, "latency_ms": ms,
            "reply": {"status": status, "message": "", "citations": [], "reason": reason}, "draft": draft}


def test_summaries_count_answered_unanswerable_questions_as_wrong_answers_and_split_the_halves():
    records = [
        _record("F1", "formal", "correct"),
        _record("F2", "formal", "wrong", half="report"),
        _record("C1", "colloquial", "declined", status="escalate", reason="low_confidence", calls=3, ms=3000),
        _record("U1", "unanswerable", "answered", half="report"),
        _record("U2", "unanswerable", "declined", status="escalate", reason="insufficient_retrieval"),
        _record("C2", "colloquial", "declined", status="refused") | {"refusal": "thread_handed_off"},
    ]
    s = summaries(records)
    total = s["all"]
    assert (total["replies"], total["answerable"], total["answerable_correct"]) == (6, 4, 1)
    assert total["wrong"] == 2 and total["wrong_share"] == 0.3333
    assert (total["unanswerable_answered"], total["unanswerable"]) == (1, 2)
    assert list(total["by_kind"]) == ["formal", "colloquial", "unanswerable"]
    assert total["by_kind"]["colloquial"]["reasons"] == {"low_confidence": 1, "refused: thread_handed_off": 1}
    assert total["by_kind"]["unanswerable"]["wrong"] == 1
    assert total["llm_calls_per_turn"] == 3.83 and total["latency_p50_ms"] == 1000
    assert s["fit"]["replies"] == 4 and s["report"]["replies"] == 2 and s["report"]["wrong"] == 2


def test_summaries_count_answered_drafts_and_the_guards_that_rejected_them():
    records = [
        _record("A", "formal", "correct") | {"drafts": [
            {"answered": True, "rejected_by": ["citations", "numbers"]}, {"answered": True, "rejected_by": []}]},
        _record("B", "formal", "declined", status="escalate") | {"drafts": [
            {"answered": True, "rejected_by": ["verify"]}, {"answered": False, "rejected_by": []}]},
        _record("C", "colloquial", "declined", status="escalate"),  # handed over before any draft
    ]
    total = summaries(records)["all"]
    assert total["drafts"] == 3  # an abstention is no draft
    assert total["rejected_by"] == {"citations": 1, "numbers": 1, "verify": 1}
    assert total["by_kind"]["colloquial"]["drafts"] == 0 and total["by_kind"]["colloquial"]["rejected_by"] == {}
    assert rejections(total) == "citations 1, numbers 1, verify 1 of 3" and rejections({"drafts": 0}) == "-"


def _draft(confidence, support, verdict, eligible=True):
    return {"confidence": confidence, "support": support, "verdict": verdict, "guards_passed": True,
            "eligible": eligible}


def test_the_sweep_counts_eligible_drafts_at_or_above_both_thresholds():
    records = [
        _record("A", "formal", "correct", draft=_draft(0.9, 1.0, "correct")),
        _record("B", "formal", "wrong", draft=_draft(0.6, 1.0, "wrong")),
        # Verified but below the configured support: a lower VerifyMinSupport would have answered it.
        _record("C", "formal", "declined", status="escalate", draft=_draft(0.9, 0.5, "correct")),
        # Met both thresholds and still did not answer: no threshold changes that.
        _record("D", "formal", "declined", status="escalate", draft=_draft(0.9, 1.0, "wrong", eligible=False)),
        # Escalated for low confidence before Verify: its support is unknown.
        _record("E", "formal", "declined", status="escalate", draft=_draft(0.2, None, "correct")),
    ]
    result = sweep(records, 0.5, 1.0)
    assert result["drafts"] == 4 and result["unverified_drafts"] == 1
    by_confidence = {p["min_confidence"]: (p["correct"], p["wrong"]) for p in result["confidence"]}
    assert by_confidence[0.5] == (1, 1)  # the configured setting: what the run answered
    assert by_confidence[0.7] == (1, 0)  # a stricter MinConfidence stops the wrong answer
    assert by_confidence[1.0] == (0, 0)
    by_support = {p["min_support"]: (p["correct"], p["wrong"]) for p in result["support"]}
    assert by_support[0.5] == (2, 1) and by_support[0.6] == (1, 1)
    cell = result["grid"][[p[0]["min_confidence"] for p in result["grid"]].index(0.7)]
    assert {p["min_support"]: p["correct"] for p in cell}[0.5] == 2


def _write(tmp_path, items):
    path = tmp_path / "questions.json"
    path.write_text(json.dumps(items, ensure_ascii=False), encoding="utf-8")
    return path


def test_the_development_sets_format_is_read_with_chains_as_ordered_categories(tmp_path):
    path = _write(tmp_path, [
        {"id": "F01", "kind": "formal", "question": "q", "file_ids": ["a"], "must_contain": ["p"], "span": "s"},
        {"id": "U01", "kind": "unanswerable", "lang": "fa", "question": "q", "why_not_answerable": "w"},
        {"id": "CH1", "kind": "chain", "turns": [
            {"kind": "colloquial", "question": "q1", "file_ids": ["a"], "must_contain": ["p1"]},
            {"kind": "followup", "question": "q2", "file_ids": ["a"], "must_contain": ["p2"]},
        ]},
    ])
    questions = load_questions(path)
    assert questions.turn_count == 4
    assert [c for c, _ in questions.items[2].questions()] == ["chain-first", "follow-up"]
    assert [i.id for i in questions.half("report").items] == ["CH1"]  # sha256: F01, U01 even; CH1 odd


@pytest.mark.parametrize(
    ("items", "message"),
    [
        ([{"id": "F1", "kind": "formal", "question": "q", "file_ids": ["a"]}], "item 1 (id 'F1'): an answerable"),
        ([{"id": "U1", "kind": "unanswerable", "question": "ok"}, {"id": "CH1", "kind": "chain"}],
         "item 2 (id 'CH1'): a chain needs turns"),
        ([{"id": "CH1", "kind": "chain", "turns": [{"question": "q", "file_ids": ["a"], "must_contain": ["p"]},
                                                   {"question": "q2"}]}], "item 1 (id 'CH1'): turn 2:"),
        ([{"id": "U1", "kind": "unanswerable", "question": "a"}, {"id": "U1", "kind": "unanswerable",
                                                                   "question": "b"}], "used by an earlier item"),
        ([{"kind": "unanswerable", "question": "a"}], "item 1: id: Field required"),
        ([{"id": "U1", "kind": "unanswerable", "question": " "}], "question is missing or empty"),
        ({"id": "U1"}, "expected a non-empty JSON list"),
    ],
)
def test_a_malformed_question_file_names_the_item_and_the_problem(tmp_path, items, message):
    with pytest.raises(QuestionFileError) as raised:
        load_questions(_write(tmp_path, items))
    assert message in str(raised.value)
    assert str(tmp_path / "questions.json") in str(raised.value)


def test_a_file_that_is_not_json_says_where(tmp_path):
    path = tmp_path / "questions.json"
    path.write_text('[{"id": "F1",,}]', encoding="utf-8")
    with pytest.raises(QuestionFileError, match="not JSON \\(line 1, column 14"):
        load_questions(path)
