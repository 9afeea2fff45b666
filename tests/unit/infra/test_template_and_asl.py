"""template.yaml and the ASL file agree, and both pass their validators."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from agent_local.template import REPO_ROOT, function_folder, load_template, resources_of_type, state_machine

ASL_PATH = REPO_ROOT / "statemachine" / "turn.asl.json"
NODES = ["load_memory", "triage", "contextualize", "account", "retrieve", "grade", "clarify", "generate",
         "verify", "escalate", "write_memory"]
BIN = Path(sys.executable).parent


@pytest.fixture(scope="module")
def template():
    return load_template()


def _substituted(template) -> dict:
    _, sm = state_machine(template)
    text = ASL_PATH.read_text(encoding="utf-8")
    values = {}
    for key, value in sm["Properties"]["DefinitionSubstitutions"].items():
        if "Fn::GetAtt" in value:
            values[key] = f"arn:aws:lambda:us-east-1:123456789012:function:{value['Fn::GetAtt'][0]}"
        elif value["Ref"].endswith(".Alias"):
            values[key] = f"arn:aws:lambda:us-east-1:123456789012:function:{value['Ref'].removesuffix('.Alias')}:live"
        else:
            values[key] = str(template["Parameters"][value["Ref"]]["Default"])
    return json.loads(re.sub(r"\$\{(\w+)\}", lambda m: values[m.group(1)], text))


def test_every_placeholder_is_substituted_and_every_substitution_is_used(template):
    _, sm = state_machine(template)
    placeholders = set(re.findall(r"\$\{(\w+)\}", ASL_PATH.read_text(encoding="utf-8")))
    substitutions = set(sm["Properties"]["DefinitionSubstitutions"])
    assert placeholders == substitutions


def test_every_task_calls_a_function_of_the_template(template):
    functions = resources_of_type(template, "AWS::Serverless::Function")
    asl = _substituted(template)
    called = {s["Resource"].split(":")[6] for s in asl["States"].values() if s["Type"] == "Task"}
    assert called == set(functions)
    assert {s["Resource"].split(":")[7] for s in asl["States"].values() if s["Type"] == "Task"} == {"live"}
    for name, function in functions.items():
        assert (function_folder(name, function) / "app.py").exists(), name


def test_one_function_per_node(template):
    folders = {function_folder(n, f).name for n, f in resources_of_type(template, "AWS::Serverless::Function").items()}
    assert folders == set(NODES)


def test_budgets_are_parameters_not_literals(template):
    _, sm = state_machine(template)
    subs = sm["Properties"]["DefinitionSubstitutions"]
    for budget in ("MaxRetrievalRounds", "MaxClarifications", "MaxRegenerations", "MaxLlmCalls", "MinConfidence"):
        assert subs[budget] == {"Ref": budget}
    defaults = {k: template["Parameters"][k]["Default"] for k in ("MaxRetrievalRounds", "MaxClarifications", "MaxRegenerations", "MaxLlmCalls")}
    assert defaults == {"MaxRetrievalRounds": 2, "MaxClarifications": 2, "MaxRegenerations": 1, "MaxLlmCalls": 8}


def test_every_task_retries_transient_errors_and_catches_everything():
    asl = json.loads(ASL_PATH.read_text(encoding="utf-8"))
    for name, state in asl["States"].items():
        if state["Type"] != "Task":
            continue
        retried = {e for r in state["Retry"] for e in r["ErrorEquals"]}
        assert {"TransientError", "Lambda.ServiceException", "Lambda.TooManyRequestsException"} <= retried, name
        assert state["Catch"][-1]["ErrorEquals"] == ["States.ALL"], name
        # LoadMemory's state is still the raw input when it fails: it is shaped first (WrapLoadFailure).
        target = {"Escalate": "EscalateFallback", "LoadMemory": "WrapLoadFailure"}.get(name, "RecordSystemError")
        assert state["Catch"][-1]["Next"] == target
        # A model node's guardrail refusal is a hand-off of a restricted topic, caught before the rest.
        refused = [c for c in state["Catch"] if c["ErrorEquals"] == ["ModelRefusedError"]]
        model_node = name in {"Triage", "Contextualize", "Grade", "Clarify", "Generate", "Verify"}
        assert len(refused) == int(model_node) and (not refused or state["Catch"][0] is refused[0]), name
        # Output that still fails its schema after the correction has its own reason, before States.ALL.
        unusable = [c for c in state["Catch"] if c["ErrorEquals"] == ["ModelOutputError"]]
        assert len(unusable) == int(model_node) and (not unusable or state["Catch"][1] is unusable[0]), name
        assert not unusable or unusable[0]["Next"] == "RecordModelOutputError"
    assert asl["States"]["RecordModelRefusal"]["Next"] == "SetRestrictedIntent"
    assert asl["States"]["RecordModelOutputError"]["Next"] == "SetModelOutput"
    assert asl["States"]["SetModelOutput"]["Result"] == "model_output"
    assert asl["States"]["SetModelOutput"]["Next"] == "Escalate"


def test_state_machine_is_express_logged_and_traced(template):
    _, sm = state_machine(template)
    props = sm["Properties"]
    assert props["Type"] == "EXPRESS"
    assert props["Logging"]["Level"] == "ALL" and props["Logging"]["IncludeExecutionData"] is True
    assert props["Tracing"]["Enabled"] is True


def test_tables_have_ttl_pitr_and_encryption(template):
    tables = resources_of_type(template, "AWS::DynamoDB::Table")
    assert tables
    for name, table in tables.items():
        props = table["Properties"]
        assert props["BillingMode"] == "PAY_PER_REQUEST", name
        assert props["PointInTimeRecoverySpecification"]["PointInTimeRecoveryEnabled"] is True, name
        assert props["SSESpecification"]["SSEEnabled"] is True, name
    assert tables["TurnsTable"]["Properties"]["TimeToLiveSpecification"]["Enabled"] is True


def test_only_model_nodes_may_invoke_bedrock_and_only_state_nodes_get_tables(template):
    small = {"TriageFunction", "ContextualizeFunction", "GradeFunction", "VerifyFunction"}
    main = {"ClarifyFunction", "GenerateFunction"}
    for name, function in resources_of_type(template, "AWS::Serverless::Function").items():
        policies = json.dumps(function["Properties"].get("Policies", []))
        assert "bedrock:" not in policies, name  # only through the model's own managed policy
        assert ("SmallModelInvokePolicy" in policies) == (name in small), name
        assert ("MainModelInvokePolicy" in policies) == (name in main), name
        touches_threads = "ThreadsTable" in policies
        assert touches_threads == (name in {"LoadMemoryFunction", "EscalateFunction", "WriteMemoryFunction"}), name


def test_statelint_accepts_the_substituted_definition(template, tmp_path):
    target = tmp_path / "turn.asl.json"
    target.write_text(json.dumps(_substituted(template)), encoding="utf-8")
    result = subprocess.run([str(BIN / "statelint"), "--ignore=FLOAT", str(target)], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def test_statelint_catches_a_broken_edge(template, tmp_path):
    broken = _substituted(template)
    broken["States"]["Grade"]["Next"] = "NoSuchState"
    target = tmp_path / "broken.asl.json"
    target.write_text(json.dumps(broken), encoding="utf-8")
    result = subprocess.run([str(BIN / "statelint"), "--ignore=FLOAT", str(target)], capture_output=True, text=True)
    assert result.returncode != 0


def test_cfn_lint_passes():
    result = subprocess.run([str(BIN / "cfn-lint"), str(REPO_ROOT / "template.yaml")], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def test_sam_validate_lint_passes():
    sam = str(BIN / "sam")
    env = os.environ | {"SAM_CLI_TELEMETRY": "0", "AWS_DEFAULT_REGION": "us-east-1"}
    result = subprocess.run([sam, "validate", "--lint", "--template", str(REPO_ROOT / "template.yaml")],
                            capture_output=True, text=True, env=env, cwd=REPO_ROOT)
    assert result.returncode == 0, result.stdout + result.stderr


def test_model_policies_grant_the_configured_models_only_through_their_profile(template):
    for kind in ("Small", "Main"):
        policy = template["Resources"][f"{kind}ModelInvokePolicy"]
        assert policy["Condition"] == f"{kind}RolesOnBedrock"
        text = json.dumps(policy["Properties"]["PolicyDocument"])
        assert f"${{{kind}ModelId}}" in text and "foundation-model/*" not in text and '"*"' not in text
        routed = policy["Properties"]["PolicyDocument"]["Statement"][1]["Fn::If"][1]
        # Every Region the profile routes to, but only for requests made through that profile.
        assert routed["Resource"][0]["Fn::Sub"].startswith("arn:${AWS::Partition}:bedrock:*::foundation-model/")
        assert "bedrock:InferenceProfileArn" in routed["Condition"]["StringEquals"]
    env = template["Globals"]["Function"]["Environment"]["Variables"]
    assert env["SMALL_MODEL_ID"]["Fn::If"][2]["Fn::If"][1] == {"Fn::Sub": "${InferenceProfileScope}.${SmallModelId}"}


def test_every_function_and_the_state_machine_publish_an_alias_that_the_graph_calls(template):
    assert template["Globals"]["Function"]["AutoPublishAlias"] == "live"
    _, sm = state_machine(template)
    assert sm["Properties"]["AutoPublishAlias"] == "live"
    functions = resources_of_type(template, "AWS::Serverless::Function")
    targets = {value["Ref"] for value in sm["Properties"]["DefinitionSubstitutions"].values()
               if isinstance(value, dict) and str(value.get("Ref", "")).endswith(".Alias")}
    assert targets == {f"{name}.Alias" for name in functions}
    assert template["Outputs"]["TurnStateMachineAliasArn"]["Value"] == {"Ref": "TurnStateMachineAliaslive"}


def test_every_task_retries_lambdas_transient_errors_with_jitter():
    definition = json.loads(ASL_PATH.read_text(encoding="utf-8"))
    tasks = {name: state for name, state in definition["States"].items() if state["Type"] == "Task"}
    assert len(tasks) == 11
    for name, task in tasks.items():
        (retry,) = task["Retry"]
        assert "Lambda.ClientExecutionTimeoutException" in retry["ErrorEquals"], name
        assert retry["JitterStrategy"] == "FULL", name


def test_the_openai_provider_gets_its_layer_its_model_names_and_only_its_secret(template):
    from agent_local.template import parameter_defaults, resolve

    values = parameter_defaults(template) | {"ModelProvider": "openai", "OpenAISmallModel": "qwen-small",
                                             "OpenAIMainModel": "qwen-main", "OpenAIBaseUrl": "https://llm.internal/v1",
                                             "OpenAIApiKeySecretArn": "arn:aws:secretsmanager:eu-central-1:1:secret:k"}
    env = template["Globals"]["Function"]["Environment"]["Variables"]
    assert resolve(template, values, env["SMALL_MODEL_ID"]) == "qwen-small"
    assert resolve(template, values, env["MAIN_MODEL_ID"]) == "qwen-main"
    assert resolve(template, values, env["OPENAI_BASE_URL"]) == "https://llm.internal/v1"
    assert resolve(template, values, env["OPENAI_API_KEY_SECRET"]).endswith(":secret:k")
    bedrock = parameter_defaults(template)
    assert resolve(template, bedrock, env["OPENAI_BASE_URL"]) is None  # nothing of it with Bedrock
    assert resolve(template, bedrock | {"OpenAIApiKeySecretArn": "arn:x"}, env["OPENAI_API_KEY_SECRET"]) is None
    functions = resources_of_type(template, "AWS::Serverless::Function")
    model_zips = [name for name, f in functions.items() if len(f["Properties"].get("Layers", [])) == 2]
    assert len(model_zips) == 5
    for name in model_zips:
        layers = [resolve(template, values, entry) for entry in functions[name]["Properties"]["Layers"]]
        assert layers == ["CoreLayer", "OpenAILayer"], name
        policies = json.dumps(functions[name]["Properties"]["Policies"])
        assert f'"{name.removesuffix("Function")}OpenAIKey"' in policies and "OpenAIApiKeySecretArn" in policies, name


# The roles of each model function (one per node) and the model size each calls.
ROLE_FUNCTIONS = {"TriageFunction": "Small", "ContextualizeFunction": "Small", "GradeFunction": "Small",
                  "ClarifyFunction": "Main", "GenerateFunction": "Main", "VerifyFunction": "Small"}


def _function_setup(template, values, name):
    """What one model function gets with `values`: its model layer, model id, server, policies."""
    from agent_local.template import holds, resolve

    props = template["Resources"][name]["Properties"]
    env = template["Globals"]["Function"]["Environment"]["Variables"] | props["Environment"]["Variables"]
    size = ROLE_FUNCTIONS[name]
    policies = [resolve(template, values, entry) for entry in props["Policies"] if "Fn::If" in entry]
    role = name.removesuffix("Function")
    return {
        "layers": [resolve(template, values, entry) for entry in props.get("Layers", [])][1:],
        "model": resolve(template, values, env[f"{size.upper()}_MODEL_ID"]),
        "server": resolve(template, values, env["OPENAI_BASE_URL"]),
        "invoke": f"{size}ModelInvokePolicy" in policies,
        "key": holds(template, values, f"{role}OpenAIKey") and "OpenAIApiKeySecretArn" in json.dumps(props["Policies"]),
    }


def test_each_model_function_follows_its_roles_provider_in_a_mixed_map(template):
    from agent_local.template import holds, parameter_defaults

    values = parameter_defaults(template) | {
        "ModelProvider": "bedrock", "RoleProviders": "grade:openai,generate:openai,verify:offline",
        "OpenAISmallModel": "qwen-small", "OpenAIMainModel": "qwen-main", "OpenAIBaseUrl": "https://llm.internal/v1",
        "OpenAIApiKeySecretArn": "arn:aws:secretsmanager:eu-central-1:1:secret:k"}
    haiku, sonnet = "global.anthropic.claude-haiku-4-5-20251001-v1:0", "global.anthropic.claude-sonnet-4-6"
    bedrock = {"model": None, "server": None, "invoke": True, "key": False}
    openai = {"server": "https://llm.internal/v1", "invoke": False, "key": True}
    expected = {
        "TriageFunction": {"layers": []} | bedrock | {"model": haiku},  # an image: it ships every provider
        "ContextualizeFunction": {"layers": ["ModelLayer"]} | bedrock | {"model": haiku},
        "GradeFunction": {"layers": ["OpenAILayer"], "model": "qwen-small"} | openai,
        "ClarifyFunction": {"layers": ["ModelLayer"]} | bedrock | {"model": sonnet},
        "GenerateFunction": {"layers": ["OpenAILayer"], "model": "qwen-main"} | openai,
        # The offline provider calls no model: no model id, no server, no policy.
        "VerifyFunction": {"layers": ["OfflineLayer"], "model": None, "server": None, "invoke": False, "key": False},
    }
    assert {name: _function_setup(template, values, name) for name in ROLE_FUNCTIONS} == expected
    # Both model policies exist (bedrock serves small and main roles); with every small role elsewhere, none of it.
    assert holds(template, values, "SmallRolesOnBedrock") and holds(template, values, "MainRolesOnBedrock")
    elsewhere = values | {"RoleProviders": "triage:offline,contextualize:openai,grade:openai,verify:offline"}
    assert not holds(template, elsewhere, "SmallRolesOnBedrock") and holds(template, elsewhere, "MainRolesOnBedrock")


@pytest.mark.parametrize("provider", ["bedrock", "openai", "offline"])
def test_without_a_map_every_role_is_on_model_provider(template, provider):
    from agent_local.template import holds, parameter_defaults

    values = parameter_defaults(template) | {"ModelProvider": provider}
    for name in ROLE_FUNCTIONS:
        role = name.removesuffix("Function")
        assert holds(template, values, f"{role}OnOpenAI") == (provider == "openai"), name
        assert holds(template, values, f"{role}OnBedrock") == (provider == "bedrock"), name
    # A role listed for the default provider is the same as a role not listed.
    listed = values | {"RoleProviders": f"generate:{provider}"}
    assert _function_setup(template, listed, "GenerateFunction") == _function_setup(template, values, "GenerateFunction")


@pytest.mark.parametrize(("value", "valid"), [
    ("", True), ("grade:openai", True), ("triage:offline,generate:bedrock,verify:openai", True),
    ("grade:openai,", False), ("grade=openai", False), ("router:openai", False), ("grade:gemini", False),
    (" grade:openai", False),
])
def test_the_role_providers_parameter_admits_only_the_map_syntax(template, value, valid):
    from agent_local.template import validate_overrides

    if valid:
        assert validate_overrides(template, {"RoleProviders": value}) == {"RoleProviders": value}
    else:
        with pytest.raises(ValueError, match="RoleProviders.*does not match"):
            validate_overrides(template, {"RoleProviders": value})
