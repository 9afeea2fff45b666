"""`agent eval` end to end on a tiny labelled set (tests/data/eval over tests/data/statutes): real turns on
the local stack in a process of its own, the user's home untouched, report.json as documented, and
report.html rendered by a headless Chromium (Debian's), its chart checked in a screenshot."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from test_operations_page import _chromium

from agent_local.evaluation import report

pytestmark = pytest.mark.stack
DATA = Path(__file__).resolve().parents[1] / "data"
DOCS, QUESTIONS = DATA / "statutes", DATA / "eval" / "questions.json"
EXPECTED_IDS = ["F1", "F2", "F3", "C1", "E1", "U1", "CH1#1", "CH1#2"]
# The chart's colours (agent_local/evaluation/report.py SEGMENTS).
GREEN, RED, BLUE = (0x2E, 0x7D, 0x32), (0xC6, 0x28, 0x28), (0x3F, 0x6F, 0xB5)


def _agent(*args: str, home: Path) -> subprocess.CompletedProcess:
    # Its own process: the local stack's moto backends are process-wide, and the session's stack is in this one.
    env = os.environ | {"AGENT_HOME": str(home)}
    return subprocess.run([sys.executable, "-m", "agent_local.cli", *args], capture_output=True, text=True,
                          timeout=900, env=env)


@pytest.fixture(scope="module")
def evaluated(tmp_path_factory):
    base = tmp_path_factory.mktemp("eval")
    home = base / "user-home"
    done = _agent("eval", str(DOCS), str(QUESTIONS), "--out", str(base / "out"), home=home)
    assert done.returncode == 0, done.stderr[-3000:]
    return done, base / "out", home


def test_every_question_turn_is_a_record_with_its_reply_and_verdict(evaluated):
    _, out, _ = evaluated
    data = json.loads((out / "report.json").read_text(encoding="utf-8"))
    records = data["records"]
    assert [r["id"] for r in records] == EXPECTED_IDS
    assert [r["kind"] for r in records] == ["formal", "formal", "formal", "colloquial", "english", "unanswerable",
                                            "chain-first", "follow-up"]
    for record in records:
        assert set(record["reply"]) == {"status", "message", "citations", "reason"}
        assert record["verdict"] in ({"answered", "declined"} if record["kind"] == "unanswerable"
                                     else {"correct", "wrong", "declined"})
        assert record["llm_calls"] >= 1 and record["latency_ms"] > 0
    by_id = {r["id"]: r for r in records}
    assert by_id["CH1#1"]["thread_id"] == by_id["CH1#2"]["thread_id"] != by_id["F1"]["thread_id"]
    # Without a model only a question pinned to a provision by its number is answered; the others get
    # the passages found to choose from (a single-turn evaluation counts that as declined).
    assert by_id["F3"]["verdict"] == "correct", by_id["F3"]["reply"]
    assert by_id["E1"]["verdict"] == "declined" and by_id["E1"]["reply"]["status"] == "clarify"
    assert by_id["U1"]["verdict"] == "declined" and by_id["U1"]["reply"]["status"] == "escalate"
    answered = [r for r in records if r["reply"]["status"] == "answer"]
    assert [r["id"] for r in answered] == ["F3"]
    assert all(r["passages"] and r["passages"][0]["text"] for r in answered)
    # Every answer went through Verify: its confidence and support are there for the sweep.
    assert all(r["draft"]["support"] is not None and 0 < r["draft"]["confidence"] <= 1 for r in answered)
    # Where the passages offered hold the answer, the next turn picks that passage by its number: its
    # reply quotes the pinned provision. Never within a chain, and never for an unanswerable question.
    picked = [r for r in records if r.get("pick")]
    assert [r["id"] for r in picked] == [r["id"] for r in records if r["offers_answer"] and "#" not in r["id"]]
    assert picked and all(r["pick"]["verdict"] == "correct" and r["pick"]["reply"]["status"] == "answer"
                          for r in picked), [r["pick"] for r in picked]
    assert all(str(r["pick"]["option"]) in {str(o["option"]) for o in r["offered"]} for r in picked)
    summary = data["summary"]["all"]
    assert summary["picked"] == len(picked) == summary["picked_correct"] and summary["picked_wrong"] == 0
    assert summary["replies"] == 8 and summary["unanswerable"] == 1
    assert summary["answerable_correct"] == sum(r["verdict"] == "correct" for r in records)
    assert data["summary"]["fit"]["replies"] + data["summary"]["report"]["replies"] == 8
    assert data["meta"]["ingest"]["files"] == 3 and data["meta"]["provider"] == "offline"


def test_the_page_lists_the_declined_answerable_questions_with_their_reason(evaluated):
    _, out, _ = evaluated
    records = json.loads((out / "report.json").read_text(encoding="utf-8"))["records"]
    page = (out / "report.html").read_text(encoding="utf-8")
    declined = [r for r in records if r["verdict"] == "declined" and r["kind"] != "unanswerable"]
    assert f"Declined answerable questions ({len(declined)})</h2>" in page
    for record in declined:
        assert f'<div class="case declined" id="{record["id"]}">' in page
    assert '<div class="case declined" id="U1">' not in page


def test_the_run_leaves_the_users_home_alone_and_prints_the_tables(evaluated):
    done, out, home = evaluated
    assert not home.exists()  # neither the store, nor the tables, nor the log of AGENT_HOME
    assert "formal" in done.stdout and "unanswerable" in done.stdout and "p95" in done.stdout
    assert "FIT half" in done.stdout and "REPORT half" in done.stdout
    assert str(out / "report.html") in done.stdout


def test_a_malformed_question_file_is_named_without_a_traceback(tmp_path):
    bad = tmp_path / "questions.json"
    bad.write_text(json.dumps([{"id": "X1", "kind": "chain", "turns": []}]), encoding="utf-8")
    done = _agent("eval", str(DOCS), str(bad), "--out", str(tmp_path / "out"), home=tmp_path / "home")
    assert done.returncode == 2
    assert "item 1 (id 'X1')" in done.stderr and "a chain needs turns" in done.stderr
    assert "Traceback" not in done.stderr and not (tmp_path / "out").exists()


def test_an_unknown_template_parameter_is_refused_before_anything_runs(tmp_path):
    done = _agent("eval", str(DOCS), str(QUESTIONS), "--out", str(tmp_path / "out"),
                  "--parameter-overrides", "MinConfidance=0.7", home=tmp_path / "home")
    assert done.returncode == 2 and "MinConfidance is not a parameter of template.yaml" in done.stderr
    assert not (tmp_path / "out").exists()


def test_template_parameters_reach_the_graph_and_the_sweep(tmp_path):
    items = [q for q in json.loads(QUESTIONS.read_text(encoding="utf-8")) if q["id"] in ("F1", "C1")]
    subset = tmp_path / "questions.json"
    subset.write_text(json.dumps(items, ensure_ascii=False), encoding="utf-8")
    done = _agent("eval", str(DOCS), str(subset), "--out", str(tmp_path / "out"),
                  "--parameter-overrides", "MinConfidence=0.9", home=tmp_path / "home")
    assert done.returncode == 0, done.stderr[-3000:]
    data = json.loads((tmp_path / "out" / "report.json").read_text(encoding="utf-8"))
    assert data["meta"]["parameters"] == {"MinConfidence": "0.9"}
    assert data["sweep"]["configured"]["min_confidence"] == 0.9
    for record in data["records"]:
        if record["draft"] and record["draft"]["confidence"] < 0.9:
            assert record["reply"]["reason"] == "low_confidence", record
        if record["reply"]["status"] == "answer":
            assert record["draft"]["confidence"] >= 0.9


def test_the_page_renders_its_chart_in_a_browser(evaluated, tmp_path):
    from PIL import Image

    _, out, _ = evaluated
    shot = tmp_path / "report.png"
    done = _chromium(tmp_path, (out / "report.html").as_uri(), f"--screenshot={shot}", "--window-size=1200,1800")
    if done.returncode < 0:
        pytest.skip(f"headless chromium was killed by signal {-done.returncode} three times")
    assert done.returncode == 0 and shot.exists(), done.stderr[-2000:]
    image = Image.open(shot).convert("RGB")
    assert image.size == (1200, 1800)
    colours = {colour: count for count, colour in image.getcolors(1200 * 1800)}
    records = json.loads((out / "report.json").read_text(encoding="utf-8"))["records"]
    swatch = 12 * 12  # each colour's square in the legend
    for colour, segment in ((GREEN, "correct"), (RED, "wrong"), (BLUE, "escalate")):
        # The bars are drawn in whole pixels: each kind's segment is its share of the bar's width.
        area = swatch + report.BAR_HEIGHT * sum(
            round(report.BAR_WIDTH * sum(report.segment_of(r) == segment for r in records if r["kind"] == kind)
                  / sum(r["kind"] == kind for r in records))
            for kind in dict.fromkeys(r["kind"] for r in records))
        # Text in the same colour (a figure marked good or bad) adds a little; a missing bar takes thousands.
        assert area <= colours.get(colour, 0) <= area * 1.05 + 800, (segment, area, colours.get(colour, 0))
