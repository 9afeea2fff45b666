"""The warm-up loads what a first turn needs while the prompt is shown: a turn sent meanwhile waits
for it (nothing is loaded twice), a failing step leaves the turns working, and the exemplar vectors
it stores in the home are read by the next process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from agent_local import moto_patches

pytestmark = pytest.mark.stack

AGENT = str(Path(sys.executable).parent / "agent")
QUESTION = "فرانشیز بیمه بدنه خودرو چقدر است؟"


def test_a_turn_sent_during_the_warm_up_waits_for_it_and_nothing_is_loaded_twice(stack, conversation, monkeypatch):
    from insurance_search import embeddings

    builders: list[str] = []
    build = embeddings.SparseEncoder.__init__

    def slow_build(self) -> None:
        builders.append(threading.current_thread().name)
        time.sleep(2)  # long enough for the turn below to need the encoder while it loads
        build(self)

    monkeypatch.setattr(embeddings.SparseEncoder, "__init__", slow_build)
    embeddings._sparse_encoder.cache_clear()
    warming = stack.warm_up(tenant="sepehr")
    reply = conversation().say(QUESTION)
    warming.join(timeout=30)
    assert builders == ["local-stack-warm-up"]
    assert reply["status"] == "clarify" and reply["options"]  # retrieval ran: the passages it found
    assert "sparse encoder" in stack.warm_up_seconds


def test_a_failing_warm_up_step_is_skipped_and_turns_still_run(stack, conversation, monkeypatch):
    from insurance_search import embeddings

    def broken() -> None:
        raise OSError("the model file cannot be read")

    monkeypatch.setattr(embeddings, "dense_encoder", broken)  # the warm-up's name only; retrieval keeps its own
    stack.warm_up(tenant="sepehr").join(timeout=60)
    assert "dense encoder" not in stack.warm_up_seconds
    assert {"model provider", "exemplar store", "sparse encoder", "corpus scope"} <= stack.warm_up_seconds.keys()
    assert conversation().say(QUESTION)["status"] == "clarify"
    assert (stack.home / "cache" / "exemplar_embeddings.npz").is_file()  # the next process reads it


def test_warm_up_can_be_switched_off(stack, monkeypatch):
    monkeypatch.setenv("AGENT_WARM_UP", "0")
    assert stack.warm_up() is None


def test_executions_run_the_program_the_warm_up_parsed(stack, conversation, monkeypatch):
    from moto.stepfunctions.parser.asl.parse.asl_parser import AmazonStateLanguageParser

    moto_patches._programs.clear()
    moto_patches.program(stack.definition())

    def parse_again(definition: str):
        raise AssertionError("the execution parsed its definition again")

    monkeypatch.setattr(AmazonStateLanguageParser, "parse", staticmethod(parse_again))
    assert conversation().say("سلام")["status"] == "answer"


def test_chat_answers_when_a_warm_up_step_fails_and_logs_the_failure(tmp_path):
    """In-process `agent chat` on a home of its own: the exemplar store cannot be written there."""
    home = tmp_path / "home"
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the store's folder should be", encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENT_") and k not in {
        "AWS_ENDPOINT_URL", "THREADS_TABLE", "TURNS_TABLE", "PROFILES_TABLE", "ACCOUNTS_TABLE"}}
    env |= {"AGENT_HOME": str(home), "HF_HUB_OFFLINE": "1", "AGENT_EMBEDDING_STORE": str(blocker / "store.npz")}
    chat = subprocess.run([AGENT, "--home", str(home), "chat", "--tenant", "sepehr", "--user", "u-1"],
                          input="سلام\n/quit\n", capture_output=True, text=True, env=env, timeout=300)
    assert chat.returncode == 0, chat.stderr
    assert "Traceback" not in chat.stderr and "answer" in chat.stdout
    records = [json.loads(line) for line in (home / "logs" / "agent.log").read_text(encoding="utf-8").splitlines()
               if '"warm-up' in line]
    failed = [r for r in records if r["message"] == "warm-up step failed"]
    assert [r["step"] for r in failed] == ["exemplar store"]
    done = next(r for r in records if r["message"] == "warm-up done")
    assert done["failed"] == ["exemplar store"] and "model provider" in done["steps"]
