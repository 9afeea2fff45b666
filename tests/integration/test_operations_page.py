"""The turns page served by `agent serve`, checked in a real headless browser (Debian's Chromium):
the DOM after its script ran, and the pixels of a screenshot."""

from __future__ import annotations

import json
import shutil
import subprocess
import urllib.request
from pathlib import Path

import pytest
from conftest import Conversation  # module-scoped fixtures cannot use the `conversation` fixture
from agent_local import moto_patches
from agent_local.ui import UiServer

pytestmark = pytest.mark.stack

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
KNOWLEDGE = "دوره انتظار زایمان در بیمه تکمیلی درمان چقدر است؟"
# User input that is markup, with personal data: the list shows it as text, masked.
MARKUP = "شماره من 09121234567 است. <img src=x onerror=alert(1)> <b>فرانشیز</b> بدنه چقدر است؟"
# The page's colours (ui/graph.js): a state on the path, a failed one, one not visited.
GREEN, RED, GREY = (0x2E, 0x7D, 0x32), (0xC6, 0x28, 0x28), (0xEC, 0xEF, 0xF3)


@pytest.fixture(scope="module")
def page(stack, agent_home):
    """Turns (the passages offered for a question; a pick whose Verify node crashes; markup) and the
    page serving the log."""
    offer = Conversation(stack)
    offered = offer.say(KNOWLEDGE)
    name = stack.function_names["VerifyFunction"]
    original = moto_patches.handlers()[name]

    def crash(event, context):
        raise RuntimeError("verifier crashed")

    moto_patches.register_handler(name, crash)
    try:
        failed = Conversation(stack)
        assert failed.say(KNOWLEDGE)["status"] == "clarify"
        crashed = failed.say("۱")  # the pick of a passage is the turn that reaches Verify
    finally:
        moto_patches.register_handler(name, original)
    marked = Conversation(stack)
    markup = marked.say(MARKUP)
    server = UiServer(agent_home).start()
    yield server, {"offer": (offer, offered), "failed": (failed, crashed), "markup": (marked, markup)}
    server.stop()


def _arn(entry):
    chat, reply = entry
    return next(r["executionArn"] for r in chat.responses if json.loads(r["output"])["turn_id"] == reply["turn_id"])


def _chromium(tmp_path: Path, url: str, *extra: str) -> subprocess.CompletedProcess:
    if CHROMIUM is None:
        pytest.skip("chromium is not installed (apt-get install -y chromium)")
    done = None
    # The headless browser itself sometimes dies on a signal (negative return code) on these machines;
    # that says nothing about the page, so such a run is tried again with a fresh profile.
    for attempt in range(3):
        args = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                "--disable-component-update", "--no-first-run", "--disable-extensions", "--hide-scrollbars",
                f"--user-data-dir={tmp_path / f'profile-{attempt}'}", "--force-device-scale-factor=1",
                "--virtual-time-budget=8000", *extra, url]
        done = subprocess.run(args, capture_output=True, text=True, timeout=180)
        if done.returncode >= 0:
            break
    return done


def test_the_api_lists_turns_and_gives_a_graph(page):
    server, turns = page
    base = server.url
    listed = json.loads(urllib.request.urlopen(f"{base}/api/turns", timeout=30).read())
    assert {turns["offer"][1]["turn_id"], turns["failed"][1]["turn_id"]} <= {t["turn_id"] for t in listed}
    graph = json.loads(urllib.request.urlopen(f"{base}/api/graph?execution={_arn(turns['failed'])}", timeout=30).read())
    verify = next(n for n in graph["nodes"] if n["name"] == "Verify")
    assert verify["failed"] and verify["errors"][-1]["error"] == "RuntimeError"
    html = urllib.request.urlopen(server.url, timeout=30).read().decode()
    assert "<script src=\"/ui/graph.js\">" in html and "http" not in html.split("<body>")[1]  # nothing remote


def test_each_listed_turn_has_its_question_and_reply_masked_as_in_the_log(page):
    server, turns = page
    listed = {t["turn_id"]: t for t in json.loads(urllib.request.urlopen(f"{server.url}/api/turns", timeout=30).read())}
    offered = listed[turns["offer"][1]["turn_id"]]
    assert offered["question"] == KNOWLEDGE
    shown = " ".join(turns["offer"][1]["message"].split())
    assert offered["reply"] == (shown if len(shown) <= 280 else shown[:279] + "…")
    marked = listed[turns["markup"][1]["turn_id"]]
    assert marked["question"].startswith("[masked phone] <img src=x") and "09121234567" not in json.dumps(listed)
    assert marked["reply"]
    assert len(marked["question"]) <= 280


def test_the_list_shows_question_and_reply_as_text_not_markup(page, tmp_path):
    server, turns = page
    dom = _chromium(tmp_path, f"{server.url}#{_arn(turns['markup'])}", "--dump-dom")
    if dom.returncode < 0:
        pytest.skip(f"headless chromium was killed by signal {-dom.returncode} three times (--dump-dom)")
    assert dom.returncode == 0, dom.stderr[-2000:]
    html = dom.stdout
    assert '<div class="question" dir="auto">[masked phone] &lt;img src=x onerror=alert(1)&gt; &lt;b&gt;' in html
    assert "<img src" not in html and "<b>فرانشیز" not in html
    assert f'<div class="question" dir="auto">{KNOWLEDGE}</div>' in html
    assert html.count('<div class="reply" dir="auto">') >= 3


def test_the_rendered_graph_marks_the_path_and_the_failure(page, tmp_path):
    server, turns = page
    dom = _chromium(tmp_path, f"{server.url}#{_arn(turns['failed'])}", "--dump-dom")
    if dom.returncode < 0:
        pytest.skip(f"headless chromium was killed by signal {-dom.returncode} three times (--dump-dom)")
    assert dom.returncode == 0, dom.stderr[-2000:]
    html = dom.stdout
    status = dict(__import__("re").findall(r'<g class="node [a-z]+" data-state="(\w+)" data-status="(\w+)"', html))
    path = turns["failed"][1]["trace"]["path"]  # the Lambda nodes that produced the reply
    assert all(status[name] == "visited" for name in path), (path, status)
    assert status["Verify"] == "failed"
    assert status["Clarify"] == "unvisited" and status["Account"] == "unvisited"
    assert "Verify failed: RuntimeError: verifier crashed" in html
    assert html.count('class="edge taken"') >= len(path)


def test_the_screenshot_shows_the_path_in_colour(page, tmp_path):
    from PIL import Image

    server, turns = page
    shot = tmp_path / "answer.png"
    done = _chromium(tmp_path, f"{server.url}#{_arn(turns['offer'])}", f"--screenshot={shot}", "--window-size=1500,1900")
    assert done.returncode == 0 and shot.exists(), done.stderr[-2000:]
    image = Image.open(shot).convert("RGB")
    assert image.size == (1500, 1900)
    # The drawing only: right of the turn list (360 px wide, whose badges share these colours).
    colours = dict((colour, count) for count, colour in image.crop((362, 0, 1500, 1900)).getcolors(1500 * 1900))
    counts = {colour: colours.get(colour, 0) for colour in (GREEN, RED, GREY)}
    node_area = 172 * 36  # a state's box in the drawing (ui/graph.js NODE_W x NODE_H)
    visited = len(turns["offer"][1]["trace"]["path"])
    # Every Lambda node on the path is a green box (Choice and Pass states on it add more) ...
    assert counts[GREEN] > 0.7 * visited * node_area, counts
    # ... the states not taken are grey, and nothing failed in this turn.
    assert counts[GREY] > 10 * node_area and counts[RED] < node_area / 4, counts
