"""`agent eval`'s report.json shape and report.html contents, from records made here (no stack)."""

from __future__ import annotations

import json
import re

from agent_local.evaluation import report
from agent_local.evaluation.runner import EvalRun

META = {"docs": "docs", "questions": "questions.json", "provider": "offline", "parameters": {},
        "min_confidence": 0.5, "min_support": 1.0, "started_at": "2026-01-01T00:00:00+00:00", "seconds": 3.0,
        "ingest": {"files": 2, "chunks": 5}}
PASSAGE = "ماده ۳۶ - مدت مرور زمان دعاوی ناشیه از بیمه دو سال است"


def _record(rid, kind, verdict, status="answer", *, question="q", message="", citations=(), passages=(),
            reason=None, draft=None, half="fit"):
    return {"id": rid, "item": rid.split("#")[0], "half": half, "kind": kind, "thread_id": "t", "turn_id": "u",
            "question": question, "file_ids": ["act"], "must_contain": ["دو سال"],
            "reply": {"status": status, "message": message, "citations": list(citations), "reason": reason},
            "verdict": verdict, "llm_calls": 4, "latency_ms": 1200, "path": [], "passages": list(passages),
            "draft": draft}


def _run():
    cited = {"chunk_id": "act#3", "file_id": "act", "title": "Insurance Act"}
    return EvalRun(meta=META, records=[
        _record("F1", "formal", "correct", message="دو سال", citations=[cited],
                draft={"confidence": 1.0, "support": 1.0, "verdict": "correct", "guards_passed": True, "eligible": True}),
        _record("F2", "formal", "wrong", question="<b>مهلت</b> اعتراض چند روز است؟", message="سه ماه",
                citations=[cited], passages=[cited | {"text": PASSAGE}], half="report",
                draft={"confidence": 0.6, "support": 1.0, "verdict": "wrong", "guards_passed": True, "eligible": True}),
        _record("U1", "unanswerable", "declined", "escalate", reason="insufficient_retrieval"),
        _record("CH1#1", "chain-first", "correct", message="دو سال", citations=[cited]),
        _record("CH1#2", "follow-up", "declined", "clarify"),
    ])


def test_report_json_has_one_record_per_turn_with_the_reply_and_verdict_and_the_summaries(tmp_path):
    data, page = report.write(_run(), tmp_path / "out")
    written = json.loads(data.read_text(encoding="utf-8"))
    assert set(written) == {"meta", "summary", "sweep", "records"}
    assert [r["id"] for r in written["records"]] == ["F1", "F2", "U1", "CH1#1", "CH1#2"]
    for record in written["records"]:
        assert {"id", "kind", "reply", "verdict"} <= set(record)
        assert set(record["reply"]) == {"status", "message", "citations", "reason"}
    assert set(written["summary"]) == {"all", "fit", "report"}
    assert written["summary"]["all"]["wrong"] == 1 and written["summary"]["report"]["wrong"] == 1
    assert written["summary"]["all"]["by_kind"]["unanswerable"]["reasons"] == {"insufficient_retrieval": 1}
    assert written["sweep"]["configured"] == {"min_confidence": 0.5, "min_support": 1.0}
    assert page.is_file()


def test_the_page_is_self_contained_and_shows_each_wrong_answer_with_its_passage():
    page = report.html(_run())
    assert not re.search(r"<script|<link|@import|url\(|src=", page)  # nothing fetched, nothing run
    assert "http://" not in page.replace('xmlns="http://www.w3.org/2000/svg"', "") and "https://" not in page
    wrong = page.split("Wrong answers (1)</h2>")[1]
    assert "&lt;b&gt;مهلت&lt;/b&gt;" in wrong and "<b>مهلت" not in page  # the question, escaped
    assert "سه ماه" in wrong and PASSAGE in wrong and "REPORT half" in wrong
    assert "F1" not in wrong  # a correct answer is not listed


def test_each_kinds_bar_is_split_by_outcome_and_is_exactly_the_full_width():
    page = report.html(_run())
    segments = re.findall(r'data-kind="([^"]+)" data-segment="(\w+)" data-count="(\d+)" x="\d+" y="\d+" '
                          r'width="(\d+)"', page)
    widths: dict[str, int] = {}
    for kind, _, _, width in segments:
        widths[kind] = widths.get(kind, 0) + int(width)
    assert widths == dict.fromkeys(["formal", "chain-first", "follow-up", "unanswerable"], report.BAR_WIDTH)
    formal = {segment: (int(count), int(width)) for kind, segment, count, width in segments if kind == "formal"}
    assert formal == {"correct": (1, 300), "wrong": (1, 300)}
    assert ("unanswerable", "escalate", "1", str(report.BAR_WIDTH)) in segments
    assert ("follow-up", "clarify", "1", str(report.BAR_WIDTH)) in segments


def test_the_sweep_table_marks_the_configured_setting():
    page = report.html(_run())
    configured = re.findall(r'<td class="cfg">(\d+) / <span class="\w*">(\d+)</span>', page)
    assert configured == [("1", "1")]  # the run's own setting: F1's draft correct, F2's wrong
    stricter = re.search(r"<tr><th>0.7</th><td[^>]*>(\d+) / <span[^>]*>(\d+)</span>", page)
    assert stricter.groups() == ("1", "0")  # MinConfidence 0.7 would have stopped F2 (confidence 0.6)


def _declining_run():
    run = _run()
    drafts = [{"answered": True, "rejected_by": ["numbers"]}, {"answered": True, "rejected_by": ["verify"]}]
    run.records.append(_record("F3", "formal", "declined", "escalate", question="سقف <i>تعهد</i> چقدر است؟",
                               message="با همکارم صحبت کنید", reason="ungrounded") | {"drafts": drafts})
    run.records.append(_record("F4", "formal", "declined", "refused") | {"refusal": "thread_handed_off"})
    from agent_local.evaluation.scoring import summaries

    run.summary = summaries(run.records)
    return run


def test_the_page_lists_each_declined_answerable_question_with_its_reason():
    page = report.html(_declining_run())
    assert "Declined answerable questions (3)</h2>" in page
    declined = page.split("Declined answerable questions (3)</h2>")[1]
    cases = dict(re.findall(r'<div class="case declined" id="([^"]+)">.*?<span class="reason">([^<]*)</span>',
                            declined))
    assert cases == {"F3": "escalate: ungrounded", "F4": "refused: thread_handed_off",
                     "CH1#2": "clarify: asked a clarifying question"}
    assert "U1" not in cases  # an unanswerable question declined is right, not a miss
    assert "&lt;i&gt;تعهد&lt;/i&gt;" in declined and "<i>تعهد" not in page  # the question, escaped
    assert "با همکارم صحبت کنید" in declined and "drafts rejected by: numbers, verify" in declined
    assert "expected a citation of act and one of: دو سال" in declined


def test_the_kind_table_names_the_guards_that_rejected_drafts():
    page = report.html(_declining_run())
    assert "<th class=\"l\">drafts rejected, by guard</th>" in page and "drafts: rejected by" not in page
    formal = re.search(r'<tr><td class="l">formal</td>(.*?)</tr>', page).group(1)
    assert "numbers 1, verify 1 of 2" in formal
    unanswerable = re.search(r'<tr><td class="l">unanswerable</td>(.*?)</tr>', page).group(1)
    assert '<td class="l">-</td>' in unanswerable  # no drafts at all: not a count of zero
    from agent_local.evaluation.scoring import rejections

    assert rejections({"drafts": 4, "rejected_by": {}}) == "none of 4"


def test_the_report_says_which_roles_ran_on_another_provider():
    assert "provider offline;" in report._describe(META)
    mixed = META | {"role_providers": {"grade": "openai", "generate": "openai"},
                    "parameters": {"RoleProviders": "grade:openai,generate:openai"}}
    assert "provider offline (grade on openai, generate on openai);" in report._describe(mixed)
