"""The container tier's checks for the openai provider, without containers: which turns must agree,
what the functions are told about the model server, and a tier without a model server."""

from __future__ import annotations

import json
import socket
from types import SimpleNamespace

import pytest
from agent_harness import lambda_tier
from agent_harness.openai_endpoint import OpenAIEndpoint


def _turn(status, reason=None, *, abandoned=False, requests=1):
    calls = [{"tool": "TriageDecision", "abandoned": abandoned and i == 0} for i in range(requests)]
    return {"reply": {"status": status, "reason": reason, "citations": []}, "calls": calls, "execution": "SUCCEEDED",
            "seconds": 1.0, "failures": []}


def test_a_timed_out_request_takes_its_thread_out_of_the_comparison():
    payloads = [{"thread_id": "a", "turn_id": "a-0", "message": "1"}, {"thread_id": "a", "turn_id": "a-1", "message": "2"},
                {"thread_id": "b", "turn_id": "b-0", "message": "3"}]
    reference = [_turn("escalate", "system_error", abandoned=True, requests=2), _turn("refused"),
                 _turn("escalate", "frustration")]
    containers = [_turn("escalate", "restricted_intent"), _turn("escalate", "frustration"),
                  _turn("escalate", "restricted_intent")]
    rows = lambda_tier.compare(payloads, reference, containers)
    assert [row["compared"] for row in rows] == [False, False, True]  # the later turn of thread a too
    assert rows[0]["timed_out"] == [True, False] and rows[0]["requests"] == [2, 1]
    assert rows[2]["in_process"]["reason"] == "frustration" and rows[2]["containers"]["reason"] == "restricted_intent"


def test_a_failed_execution_has_no_outcome():
    payloads = [{"thread_id": "a", "turn_id": "a-0", "message": "1"}]
    failed = {"reply": None, "calls": [], "execution": "FAILED", "seconds": 1.0, "failures": ["States.Runtime: x"]}
    (row,) = lambda_tier.compare(payloads, [_turn("answer")], [failed])
    assert row["containers"] == {"status": None, "reason": None, "error": "FAILED", "citations": []}


def test_the_functions_are_pointed_at_the_relay_on_the_gateway(tmp_path, monkeypatch):
    monkeypatch.setattr(lambda_tier, "STATE", tmp_path)
    options = lambda_tier._sam_local_options(SimpleNamespace(table_names={}), "openai", "served-model")
    overrides = options[options.index("--parameter-overrides") + 1].split()
    relay = f"http://{lambda_tier.GATEWAY}:{lambda_tier.OPENAI_PORT}/v1"
    assert "ModelProvider=openai" in overrides and f"OpenAIBaseUrl={relay}" in overrides
    assert "OpenAISmallModel=served-model" in overrides and "OpenAIStructuredOutput=function_calling" in overrides
    env = json.loads((tmp_path / "sam-env-openai.json").read_text())["Parameters"]
    assert env["OPENAI_BASE_URL"] == relay and env["MAIN_MODEL_ID"] == "served-model"
    # The template's read timeout, as deployed, unless the tier is told another.
    assert env["MODEL_TIMEOUT_SECONDS"] == "12" and "ModelTimeoutSeconds=12" in overrides


def test_the_model_server_is_found_or_the_tier_says_how_to_start_one(monkeypatch, tmp_path):
    monkeypatch.setattr(lambda_tier, "MODEL_SERVER_ENV", tmp_path / "server.env")
    with OpenAIEndpoint([("127.0.0.1", 0)]) as endpoint:
        monkeypatch.setenv("OPENAI_BASE_URL", endpoint.url)
        assert lambda_tier.model_server() == (endpoint.url, "offline-model")
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        monkeypatch.setenv("OPENAI_BASE_URL", f"http://127.0.0.1:{closed.getsockname()[1]}/v1")
        with pytest.raises(lambda_tier.TierError, match="make model-up"):
            lambda_tier.model_server()
    monkeypatch.delenv("OPENAI_BASE_URL")
    with pytest.raises(lambda_tier.TierError, match="make model-up"):
        lambda_tier.model_server()


def test_a_role_map_reaches_the_containers_with_the_one_model_service(tmp_path, monkeypatch):
    monkeypatch.setattr(lambda_tier, "STATE", tmp_path)
    options = lambda_tier._sam_local_options(SimpleNamespace(table_names={}), "offline", "served-model",
                                             "grade:openai,generate:openai")
    overrides = options[options.index("--parameter-overrides") + 1].split()
    assert "ModelProvider=offline" in overrides and "RoleProviders=grade:openai,generate:openai" in overrides
    # The openai roles are pointed at the relay, as with --provider openai.
    assert f"OpenAIBaseUrl=http://{lambda_tier.GATEWAY}:{lambda_tier.OPENAI_PORT}/v1" in overrides
    env = json.loads((tmp_path / "sam-env-offline.json").read_text())["Parameters"]
    assert env["ROLE_PROVIDERS"] == "grade:openai,generate:openai" and env["MAIN_MODEL_ID"] == "served-model"
    # Without a map nothing of the openai server is set for the offline provider.
    options = lambda_tier._sam_local_options(SimpleNamespace(table_names={}), "offline")
    assert "RoleProviders=''" in options[options.index("--parameter-overrides") + 1].split()
    assert "OPENAI_BASE_URL" not in json.loads((tmp_path / "sam-env-offline.json").read_text())["Parameters"]


@pytest.mark.parametrize(("provider", "roles", "service"), [
    ("offline", "", "offline"), ("openai", "", "openai"), ("offline", "grade:openai,verify:openai", "openai"),
    ("bedrock", "verify:offline", "bedrock"), ("openai", "triage:openai", "openai"),
])
def test_the_model_service_of_a_run_is_the_one_language_model_provider(provider, roles, service):
    assert lambda_tier.model_service(provider, roles) == service


@pytest.mark.parametrize(("provider", "roles", "message"), [
    ("bedrock", "grade:openai", "bedrock and openai: the tier serves one model service"),
    ("offline", "grade:openai,grade:bedrock", "lists the role 'grade' twice"),
    ("offline", "grade=openai", "is not role:provider"),
    ("offline", "grade:gemini", "unknown provider 'gemini'"),
])
def test_a_role_map_the_tier_cannot_run_is_refused_before_anything_starts(provider, roles, message):
    with pytest.raises(lambda_tier.TierError, match=message):
        lambda_tier.model_service(provider, roles)


def test_sam_local_gives_each_function_its_roles_layer():
    # SAM CLI's own template reading (the resolver `sam local` uses for Layers), without containers.
    from samcli.lib.providers.sam_function_provider import SamFunctionProvider
    from samcli.lib.providers.sam_stack_provider import SamLocalStackProvider

    parameters = lambda_tier.PARAMETERS | {"RoleProviders": "grade:openai,generate:bedrock"}
    # samconfig.toml turns on the template's Fn::ForEach expansion for every sam command.
    stacks, _ = SamLocalStackProvider.get_stacks(str(lambda_tier.REPO_ROOT / "template.yaml"),
                                                 parameter_overrides=parameters, language_extensions_enabled=True)
    functions = SamFunctionProvider(stacks, ignore_code_extraction_warnings=True)
    layers = {name: [layer.name for layer in functions.get(f"{name}Function").layers]
              for name in ("Contextualize", "Grade", "Clarify", "Generate", "Verify")}
    assert layers == {"Contextualize": ["CoreLayer", "OfflineLayer"], "Grade": ["CoreLayer", "OpenAILayer"],
                      "Clarify": ["CoreLayer", "OfflineLayer"], "Generate": ["CoreLayer", "ModelLayer"],
                      "Verify": ["CoreLayer", "OfflineLayer"]}


def test_the_answer_format_reaches_the_containers_in_a_file_of_its_own(tmp_path, monkeypatch):
    monkeypatch.setattr(lambda_tier, "STATE", tmp_path)
    options = lambda_tier._sam_local_options(SimpleNamespace(table_names={}), "bedrock", answer_format="quote")
    assert "AnswerFormat=quote" in options[options.index("--parameter-overrides") + 1].split()
    assert json.loads((tmp_path / "sam-env-bedrock-quote.json").read_text())["Parameters"]["MODEL_ANSWER_FORMAT"] == "quote"
    options = lambda_tier._sam_local_options(SimpleNamespace(table_names={}), "bedrock")
    assert not any(o.startswith("AnswerFormat=") for o in options[options.index("--parameter-overrides") + 1].split())


def _quote_row(fault: str, status: str, tools: list[str]) -> dict:
    return {"fault": fault, "status": status, "reason": None, "tools": tools, "turn_id": "t-0", "thread_id": "th"}


def test_a_quoted_answer_must_be_a_sentence_of_its_cited_chunk(monkeypatch):
    from insurance_agent.models.chunks import RetrievedChunk
    from insurance_agent.quotes import quote_claim
    from insurance_agent.store import turns

    chunk = RetrievedChunk(chunk_id="health#2", file_id="health", title="بیمه تکمیلی درمان", tenant_id="t", score=1.0,
                           text="دوره انتظار زایمان ۹ ماه است. هزینه عینک پوشش ندارد.")
    quoted = quote_claim(chunk, "دوره انتظار زایمان ۹ ماه است.", "fa")
    written = quoted.model_copy(update={"text": quoted.text.replace("۹ ماه", "شش ماه")})
    parts = {}
    monkeypatch.setattr(turns, "get_parts", lambda turn_id, thread_id: parts)
    for claim, problems in ((quoted, 0), (written, 1)):
        parts.clear()
        parts.update({"chunks": [chunk.model_dump()],
                      "draft": {"result": {"answer": claim.text, "claims": [claim.model_dump()], "answered": True,
                                                      "confidence": 1.0}}})
        assert len(lambda_tier.quote_problems(_quote_row("quote: no fault", "answer", ["QuotedAnswer"]))) == problems
    # A composed draft, or a hand-off where a quote was due, is a problem before any text is read.
    assert lambda_tier.quote_problems(_quote_row("quote: no fault", "escalate", ["QuotedAnswer"]))
    assert lambda_tier.quote_problems(_quote_row("quote: prose instead of a tool call", "escalate", ["GroundedAnswer"]))
    assert not lambda_tier.quote_problems(_quote_row("quote: prose instead of a tool call", "escalate", ["QuotedAnswer"]))
