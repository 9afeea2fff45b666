"""A misconfigured model provider is refused before any turn runs.

- The `agent` commands that run turns (converse, chat, serve, eval) check the provider's settings as
  the stack would give them to its handlers, and exit 2 naming what is missing and how to set it,
  before any stack starts or any request reaches the model server.
- Each model function checks them at its cold start (Init): a ConfigurationError is logged there,
  and every invocation then fails at once with it. Through the real ASL the turn is handed to a
  person with the fixed `system_error` reply; the cause is in the execution history, not the reply.

The configuration is the one that used to hand every turn over with the cause visible only in
`agent trace`: the openai provider with a base URL and no model names. The model server is
agent_harness/openai_endpoint.py on loopback, which counts every request it gets.
"""

from __future__ import annotations

import importlib.util
import json
import logging
import time

import pytest
from agent_local import cli, moto_patches
from agent_harness.openai_endpoint import Fault, OpenAIEndpoint
from agent_local.preflight import model_settings_problem
from agent_local.template import REPO_ROOT
from insurance_agent.errors import ConfigurationError
from insurance_agent.models.turn import EscalationReason
from insurance_agent.nodes import messages
from probes import Context, assert_thread_consistent

KNOWLEDGE = "دوره انتظار زایمان در بیمه تکمیلی درمان چقدر است؟"
MODEL_NODES = {"triage": "Triage", "contextualize": "Contextualize", "grade": "Grade", "clarify": "Clarify",
               "generate": "Generate", "verify": "Verify"}


def _cold_start(folder: str):
    """Import a function's app.py afresh, as Lambda's Init does; its handler."""
    spec = importlib.util.spec_from_file_location(f"cold_start_{folder}", REPO_ROOT / "functions" / folder / "app.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.lambda_handler


def _event(folder: str) -> dict:
    return json.loads((REPO_ROOT / "events" / f"{folder}.json").read_text(encoding="utf-8"))


def _reset_caches() -> None:
    from insurance_agent.config import get_settings
    from insurance_agent.roles import base

    get_settings.cache_clear()
    base.get_provider.cache_clear()


@pytest.fixture
def server():
    with OpenAIEndpoint([("127.0.0.1", 0)]) as endpoint:
        yield endpoint


@pytest.fixture
def misconfigured(server):
    """The process environment of a function deployed with ModelProvider=openai, a base URL, no model names."""
    patch = pytest.MonkeyPatch()
    patch.setenv("MODEL_PROVIDER", "openai")
    patch.setenv("OPENAI_BASE_URL", server.url)
    patch.setenv("OPENAI_STRUCTURED_OUTPUT", "function_calling")
    for name in ("SMALL_MODEL_ID", "MAIN_MODEL_ID"):
        patch.delenv(name, raising=False)
    _reset_caches()
    try:
        yield patch
    finally:
        patch.undo()
        _reset_caches()


def _errors(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]


# -- a function's cold start ------------------------------------------------------------------------
@pytest.mark.parametrize("folder", sorted(MODEL_NODES))
def test_a_model_function_logs_the_misconfiguration_at_init_and_fails_every_invocation(
        misconfigured, server, caplog, folder):
    with caplog.at_level(logging.ERROR):
        handler = _cold_start(folder)
    (logged,) = [m for m in _errors(caplog) if "ConfigurationError" in m]
    assert "SMALL_MODEL_ID is not set" in logged and "OpenAISmallModel" in logged
    assert "MAIN_MODEL_ID is not set" in logged and "OpenAIMainModel" in logged
    for _ in range(2):  # the environment is kept: each invocation fails at once, with the same cause
        with pytest.raises(ConfigurationError, match="SMALL_MODEL_ID is not set"):
            handler(_event(folder), Context())
    assert server.calls() == []


def test_the_same_function_configured_starts_without_a_complaint(misconfigured, caplog):
    misconfigured.setenv("SMALL_MODEL_ID", "small-model")
    misconfigured.setenv("MAIN_MODEL_ID", "main-model")
    _reset_caches()
    with caplog.at_level(logging.ERROR):
        _cold_start("generate")
    assert not [m for m in _errors(caplog) if "ConfigurationError" in m]


def test_a_bedrock_function_names_the_empty_model_id_behind_its_inference_profile(caplog):
    patch = pytest.MonkeyPatch()
    patch.setenv("MODEL_PROVIDER", "bedrock")
    patch.setenv("SMALL_MODEL_ID", "global.")  # SmallModelId="" with InferenceProfileScope=global
    patch.setenv("MAIN_MODEL_ID", "global.anthropic.claude-sonnet-4-6")
    patch.setenv("AWS_REGION", "eu-central-1")
    _reset_caches()
    try:
        with caplog.at_level(logging.ERROR):
            handler = _cold_start("triage")
        with pytest.raises(ConfigurationError, match="SmallModelId"):
            handler(_event("triage"), Context())
    finally:
        patch.undo()
        _reset_caches()
    (logged,) = [m for m in _errors(caplog) if "ConfigurationError" in m]
    assert "'global.'" in logged and "MAIN_MODEL_ID" not in logged


@pytest.mark.stack
def test_a_turn_on_misconfigured_functions_is_handed_over_with_the_fixed_reply(stack, conversation, misconfigured,
                                                                                 server):
    originals = {}
    try:
        for folder, state in MODEL_NODES.items():
            name = stack.function_names[f"{state}Function"]
            originals[name] = moto_patches.handlers()[name]
            moto_patches.register_handler(name, _cold_start(folder))  # started with the settings above
        chat = conversation()
        reply = chat.say(KNOWLEDGE)
    finally:
        for name, handler in originals.items():
            moto_patches.register_handler(name, handler)
    assert reply["status"] == "escalate" and reply["reason"] == "system_error", reply
    assert reply["message"] == messages.escalation(EscalationReason.SYSTEM_ERROR, "fa")
    assert reply["trace"]["path"] == ["LoadMemory", "Escalate"] and reply["trace"]["llm_calls"] == 0
    shown = json.dumps(reply, ensure_ascii=False)
    assert "ConfigurationError" not in shown and "MODEL_ID" not in shown and "OpenAI" not in shown
    # Not retried (it would fail the same way); the cause is where an operator reads it.
    history = stack.history(chat.responses[-1]["executionArn"])
    (failed,) = [e for e in history if e["type"] == "LambdaFunctionFailed"]
    details = failed["lambdaFunctionFailedEventDetails"]
    assert details["error"] == "ConfigurationError" and "SMALL_MODEL_ID is not set" in details["cause"]
    assert server.calls() == []
    assert assert_thread_consistent(chat.thread_id).status == "handed_off"


# -- the agent commands that run turns ------------------------------------------------------------
def _commands(tmp_path) -> dict[str, list[str]]:
    script = tmp_path / "conversation.json"
    script.write_text(json.dumps({"user_id": "u-1001", "tenant_id": "sepehr", "turns": [KNOWLEDGE]}),
                      encoding="utf-8")
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("# A\n\nThe waiting period is nine months.\n", encoding="utf-8")
    questions = tmp_path / "questions.json"
    questions.write_text(json.dumps([{"id": "U01", "kind": "unanswerable", "question": "?"}]), encoding="utf-8")
    return {
        "converse": ["converse", str(script)],
        "chat": ["chat", "--tenant", "sepehr", "--user", "u-1001"],
        "serve": ["serve", "--port", "0"],
        "eval": ["eval", str(docs), str(questions), "--out", str(tmp_path / "report")],
    }


@pytest.mark.parametrize("command", ["converse", "chat", "serve", "eval"])
def test_a_command_that_runs_turns_refuses_a_provider_without_model_names(tmp_path, server, capsys, command):
    home = tmp_path / "home"
    argv = ["--home", str(home), *_commands(tmp_path)[command],
            "--parameter-overrides", "ModelProvider=openai", f"OpenAIBaseUrl={server.url}"]
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert "model provider 'openai' is not configured, so no turn was run" in err
    assert "SMALL_MODEL_ID is not set" in err and "--parameter-overrides OpenAISmallModel=" in err
    assert "MAIN_MODEL_ID is not set" in err and "--parameter-overrides OpenAIMainModel=" in err
    assert "OPENAI_BASE_URL" not in err  # the one that is set is not blamed
    # Nothing started: no tables, no execution, no request to the model server.
    assert not (home / "dynamodb.json").exists() and not (home / "logs" / "executions").exists()
    assert not (tmp_path / "report").exists() and server.calls() == []


def test_an_environment_value_the_overrides_replace_is_pointed_out(tmp_path, server, monkeypatch):
    monkeypatch.setenv("SMALL_MODEL_ID", "small-model")
    # Switching the provider keeps the exported model name (the template's own is empty)...
    assert model_settings_problem(tmp_path, {"ModelProvider": "openai", "OpenAIBaseUrl": server.url,
                                             "OpenAIMainModel": "main-model"}) is None
    # ...but a parameter overridden to empty replaces it, and the message says so.
    problem = model_settings_problem(tmp_path, {"ModelProvider": "openai", "OpenAIBaseUrl": server.url,
                                                "OpenAIMainModel": "main-model", "OpenAISmallModel": ""})
    assert "SMALL_MODEL_ID is not set" in problem and "MAIN_MODEL_ID" not in problem
    assert "SMALL_MODEL_ID of the environment is not used" in problem and "OpenAISmallModel" in problem


def test_a_bedrock_stack_without_a_model_id_is_refused_and_a_complete_one_is_not(tmp_path):
    assert cli.main(["--home", str(tmp_path), "converse", "missing.json"]) == 2  # a bad script stops first
    problem = model_settings_problem(tmp_path, {"ModelProvider": "bedrock", "MainModelId": ""})
    assert "MAIN_MODEL_ID names an inference profile scope but no model ('global.')" in problem
    assert "--parameter-overrides MainModelId=" in problem and "SMALL_MODEL_ID" not in problem
    assert model_settings_problem(tmp_path, {"ModelProvider": "bedrock"}) is None
    assert model_settings_problem(tmp_path, {"ModelProvider": "openai", "OpenAIBaseUrl": "http://127.0.0.1:9/v1",
                                             "OpenAISmallModel": "s", "OpenAIMainModel": "m"}) is None
    assert model_settings_problem(tmp_path, {}) is None  # the offline provider needs no settings


# -- what the model server says of the settings, at a function's cold start -------------------------
@pytest.fixture
def in_lambda():
    """A function's environment in the Lambda runtime, the openai provider complete, on a server like
    llama-cpp-python's (HTTP 500 to json_schema, tool calls answered)."""
    patch = pytest.MonkeyPatch()
    with OpenAIEndpoint([("127.0.0.1", 0)], rejects=frozenset({"json_schema"})) as endpoint:
        patch.setenv("AWS_LAMBDA_RUNTIME_API", "127.0.0.1:9001")
        for name, value in {"MODEL_PROVIDER": "openai", "OPENAI_BASE_URL": endpoint.url,
                            "SMALL_MODEL_ID": "small-model", "MAIN_MODEL_ID": "main-model",
                            "OPENAI_STRUCTURED_OUTPUT": "json_schema"}.items():
            patch.setenv(name, value)
        _reset_caches()
        try:
            yield patch, endpoint
        finally:
            patch.undo()
            _reset_caches()


def test_a_function_in_lambda_names_the_structured_output_its_server_rejects(in_lambda, caplog):
    _, server = in_lambda
    with caplog.at_level(logging.ERROR):
        handler = _cold_start("generate")
    (logged,) = [m for m in _errors(caplog) if "ConfigurationError" in m]
    assert f"OPENAI_STRUCTURED_OUTPUT is json_schema, which the server at {server.url} does not accept" in logged
    assert "OpenAIStructuredOutput" in logged and "to function_calling" in logged
    # Generate's own model only; no turn's request.
    assert {call["request"]["model"] for call in server.calls()} == {"main-model"}
    count = len(server.calls())
    with pytest.raises(ConfigurationError, match="does not accept"):
        handler(_event("generate"), Context())
    assert len(server.calls()) == count


def test_a_function_in_lambda_starts_when_its_server_does_not_answer_the_check(in_lambda, caplog):
    patch, server = in_lambda
    server.state.add_fault("*", Fault("slow", 10, 30.0))
    started = time.monotonic()
    with caplog.at_level(logging.ERROR):
        _cold_start("triage")
    # Bounded well inside Lambda's 10 s Init, and a blip is not a misconfiguration.
    assert time.monotonic() - started < 8.0
    assert not [m for m in _errors(caplog) if "ConfigurationError" in m]
    server.state.reset()
    patch.setenv("OPENAI_STRUCTURED_OUTPUT", "function_calling")
    _reset_caches()
    with caplog.at_level(logging.ERROR):
        _cold_start("triage")
    assert not [m for m in _errors(caplog) if "ConfigurationError" in m]
    assert [(c["tool"], c["request"]["model"]) for c in server.calls()] == [("StructuredOutputCheck", "small-model")]


def test_outside_lambda_the_cold_start_asks_the_server_nothing(in_lambda, caplog):
    patch, server = in_lambda
    patch.delenv("AWS_LAMBDA_RUNTIME_API")
    with caplog.at_level(logging.ERROR):
        _cold_start("generate")
    # The local stack runs the functions inside an `agent` command, whose preflight asked already.
    assert not [m for m in _errors(caplog) if "ConfigurationError" in m] and server.calls() == []
