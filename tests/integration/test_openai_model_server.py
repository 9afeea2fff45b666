"""Whole conversations through the graph on a real language model: ModelProvider=openai against the
server of `make model-up` (llama.cpp's server with SmolLM2-135M-Instruct).

A model this small is usually wrong; the graph must turn that into hand-offs, never into wrong
answers, and no execution may fail. Skipped when no server is up (`make model-up`; CI starts one).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
SERVER_ENV = REPO_ROOT / ".model" / "server.env"
STATUSES = {"answer", "clarify", "escalate", "refused"}


def _server() -> tuple[str, str] | None:
    values = dict(line.split("=", 1) for line in SERVER_ENV.read_text().split()) if SERVER_ENV.exists() else {}
    base_url = os.environ.get("OPENAI_BASE_URL") or values.get("OPENAI_BASE_URL")
    if not base_url:
        return None
    try:
        with urllib.request.urlopen(f"{base_url}/models", timeout=3) as response:
            model = json.load(response)["data"][0]["id"]
    except OSError:
        return None
    return base_url, model


@pytest.fixture(scope="module")
def model_server():
    found = _server()
    if found is None:
        pytest.skip("no OpenAI-compatible model server is up (make model-up)")
    return found


def _persian(text: str) -> bool:
    return sum("\u0600" <= ch <= "\u06ff" for ch in text) > sum(ch.isascii() and ch.isalpha() for ch in text)


@pytest.mark.stack
def test_conversations_on_a_real_model_end_in_grounded_answers_or_hand_offs(model_server, corpus, agent_home, tmp_path):
    base_url, model = model_server
    home = tmp_path / "home"
    shutil.copytree(agent_home / "qdrant", home / "qdrant")
    (home / "qdrant" / ".lock").unlink(missing_ok=True)  # the session's store, copied for this process
    scripts = [
        {"user_id": "u-1001", "tenant_id": "sepehr",
         "turns": ["سلام", "دوره انتظار زایمان در بیمه تکمیلی درمان چقدر است؟", "برای همسرم چطور؟"]},
        {"user_id": "u-1002", "tenant_id": "sepehr", "turns": ["How long is the childbirth waiting period?"]},
        {"user_id": "u-1003", "tenant_id": "sepehr", "turns": ["فرانشیز بیمه بدنه چند درصد است؟"]},
    ]
    script = tmp_path / "conversations.json"
    script.write_text(json.dumps(scripts, ensure_ascii=False), encoding="utf-8")
    env = os.environ | {"AGENT_HOME": str(home), "MODEL_PROVIDER": "openai", "OPENAI_BASE_URL": base_url,
                        "SMALL_MODEL_ID": model, "MAIN_MODEL_ID": model, "OPENAI_STRUCTURED_OUTPUT": "function_calling",
                        "MODEL_TIMEOUT_SECONDS": "60", "MODEL_MAX_OUTPUT_TOKENS": "512", "HF_HUB_OFFLINE": "1"}
    env.pop("AGENT_QDRANT_PATH", None)
    result = subprocess.run([sys.executable, "-m", "agent_local.cli", "converse", str(script)], env=env,
                            capture_output=True, text=True, timeout=1500)
    assert result.returncode == 0, result.stderr[-3000:]
    replies = [json.loads(line) for line in result.stdout.splitlines() if line.startswith("{")]
    assert len(replies) == 5
    turns = [turn for s in scripts for turn in s["turns"]]
    for message, reply in zip(turns, replies, strict=True):
        assert reply["status"] in STATUSES, reply
        assert reply["trace"]["llm_calls"] <= 8, reply  # the ASL's budget holds whatever the model does
        if reply["status"] == "answer" and reply["trace"]["retrieval_rounds"]:
            # A knowledge answer cites what retrieval returned (the guards), in the customer's language.
            assert reply["citations"], reply
            assert _persian(reply["message"]) == _persian(message), reply
    assert all(r["trace"]["llm_calls"] > 0 for r in replies if r["status"] != "refused")  # the model was asked
    print(json.dumps([{k: r.get(k) for k in ("status", "reason")} | {"llm_calls": r["trace"]["llm_calls"]}
                      for r in replies]))


def test_every_role_gets_a_schema_valid_answer_or_a_typed_failure_from_a_real_model(model_server):
    from insurance_agent.config import ModelSettings, Settings
    from insurance_agent.errors import ModelOutputError, TransientError
    from insurance_agent.models.chunks import RetrievedChunk
    from insurance_agent.models.roles import (
        Claim,
        ContextualizeRequest,
        GenerateRequest,
        GradeRequest,
        Intent,
        TriageRequest,
        VerifyRequest,
    )
    from insurance_agent.policy.guards import check_draft
    from insurance_llm.openai import OpenAIProvider

    base_url, model = model_server
    settings = Settings(models=ModelSettings(provider="openai", small_model_id=model, main_model_id=model,
                                             openai_base_url=base_url, openai_structured_output="function_calling",
                                             timeout_seconds=60, max_output_tokens=512))
    provider = OpenAIProvider(settings=settings)
    question = "دوره انتظار زایمان در بیمه تکمیلی درمان چقدر است؟"
    chunk = RetrievedChunk(chunk_id="health#3", file_id="health", title="بیمه تکمیلی درمان", tenant_id="t",
                           score=1.0, text="دوره انتظار زایمان ۲۷۰ روز از تاریخ شروع بیمه‌نامه است.")
    calls = [
        lambda: provider.triage(TriageRequest(message=question)),
        lambda: provider.contextualize(ContextualizeRequest(message=question, language="fa")),
        lambda: provider.grade(GradeRequest(query=question, chunks=[chunk])),
        lambda: provider.generate(GenerateRequest(route=Intent.KNOWLEDGE, message=question, query=question,
                                                  chunks=[chunk])),
        lambda: provider.verify(VerifyRequest(answer="۲۷۰ روز", claims=[Claim(text="۲۷۰ روز", chunk_ids=["health#3"])],
                                              chunks=[chunk], question=question)),
    ]
    results = []
    for call in calls:
        try:
            results.append(call())
        except (ModelOutputError, TransientError) as error:  # the graph hands these turns to a person
            results.append(error)
    assert sum(not isinstance(r, Exception) for r in results) >= 3, results
    draft = results[3]
    if not isinstance(draft, Exception) and draft.answered:
        # Whatever the model wrote, a draft citing no retrieved chunk or stating another figure is stopped.
        violations = check_draft(draft, [chunk], calculator_results=draft.calculations, language="fa")
        assert violations or (set(draft.citations) <= {"health#3"} and draft.citations), draft


@pytest.mark.stack
def test_a_quote_pick_from_a_real_model_is_a_sentence_of_the_evidence_or_no_answer(model_server):
    from insurance_agent.config import ModelSettings, Settings
    from insurance_agent.models.chunks import RetrievedChunk
    from insurance_agent.models.roles import GenerateRequest, Intent
    from insurance_agent.policy.guards import check_draft
    from insurance_agent.quotes import strip_frame
    from insurance_llm.openai import OpenAIProvider

    base_url, model = model_server
    settings = Settings(models=ModelSettings(provider="openai", small_model_id=model, main_model_id=model,
                                             openai_base_url=base_url, openai_structured_output="function_calling",
                                             timeout_seconds=60, answer_format="quote"))
    sentences = ["دوره انتظار زایمان ۲۷۰ روز از تاریخ شروع بیمه‌نامه است.",
                 "هزینه عینک تا سقف ۵٬۰۰۰٬۰۰۰ ریال پرداخت می‌شود."]
    chunk = RetrievedChunk(chunk_id="health#3", file_id="health", title="بیمه تکمیلی درمان", tenant_id="t",
                           score=1.0, text=" ".join(sentences))
    question = "دوره انتظار زایمان در بیمه تکمیلی درمان چقدر است؟"
    draft = OpenAIProvider(settings=settings).generate(
        GenerateRequest(route=Intent.KNOWLEDGE, message=question, query=question, chunks=[chunk]))
    # The grammar holds the pick to the offered ids: whatever the model picks is quoted whole, or nothing is.
    if draft.answered:
        assert strip_frame(draft.answer, [chunk.title]) in sentences and draft.citations == ["health#3"], draft
        assert check_draft(draft, [chunk], language="fa") == []
    else:
        assert draft.answer == "" and draft.claims == []
