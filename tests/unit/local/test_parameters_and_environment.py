"""Documented environment settings win over the template's defaults; --parameter-overrides win over both."""

from __future__ import annotations

import os

import pytest
from agent_local import stack as stack_module
from agent_local.stack import LocalStack
from agent_local.template import load_template, parse_overrides, validate_overrides


@pytest.fixture
def environment(monkeypatch):
    """A private os.environ for _set_environment, so that the session's stack keeps its own."""
    from insurance_agent.config import get_settings
    from insurance_agent.store import dynamo

    private = dict(os.environ)
    for name in ("AGENT_TOPIC_SCOPE", "VERIFY_MIN_SUPPORT", "AGENT_QDRANT_URL", "AGENT_QDRANT_PATH", "MODEL_PROVIDER",
                 "AGENT_TOP_K", "THREADS_TABLE", "AGENT_EMBEDDING_STORE"):
        private.pop(name, None)
    monkeypatch.setattr(os, "environ", private)
    monkeypatch.setattr(stack_module, "_set_by_stack", {})
    yield private
    monkeypatch.undo()
    get_settings.cache_clear()
    dynamo.resource.cache_clear()


def configure(home, **kwargs):
    stack = LocalStack(home, **kwargs)
    stack.port = 1  # _set_environment only writes the endpoint; nothing listens in these tests
    stack._set_environment()
    from insurance_agent.config import get_settings

    return get_settings()


def test_template_defaults_apply_when_nothing_is_set(environment, tmp_path):
    settings = configure(tmp_path)
    assert settings.policy.topic_scope == "insurance" and settings.policy.verify_min_support == 1.0
    assert settings.retrieval.qdrant_url is None and settings.retrieval.qdrant_path == str(tmp_path / "qdrant")
    assert settings.models.provider == "offline" and settings.tables.threads == "agent-local-threads"


def test_documented_settings_win_over_template_defaults(environment, tmp_path):
    environment.update({"AGENT_TOPIC_SCOPE": "corpus", "VERIFY_MIN_SUPPORT": "0.75", "AGENT_TOP_K": "9",
                        "AGENT_QDRANT_URL": "http://127.0.0.1:6333", "THREADS_TABLE": "someone-elses"})
    settings = configure(tmp_path)
    assert settings.policy.topic_scope == "corpus"
    assert settings.policy.verify_min_support == 0.75
    assert settings.retrieval.top_k == 9
    assert settings.retrieval.qdrant_url == "http://127.0.0.1:6333" and settings.retrieval.qdrant_path is None
    assert settings.tables.threads == "agent-local-threads"  # the stack's own tables are not settings


def test_parameter_overrides_win_over_environment(environment, tmp_path):
    environment.update({"AGENT_TOPIC_SCOPE": "corpus", "VERIFY_MIN_SUPPORT": "0.75"})
    settings = configure(tmp_path, parameters={"TopicScope": "insurance", "TopK": "3"})
    assert settings.policy.topic_scope == "insurance" and settings.retrieval.top_k == 3
    assert settings.policy.verify_min_support == 0.75


def test_a_previous_stack_value_is_not_taken_for_a_user_setting(environment, tmp_path):
    assert configure(tmp_path, parameters={"VerifyMinSupport": "0.5"}).policy.verify_min_support == 0.5
    # The next stack of the same process starts from the template again, and from its own home.
    settings = configure(tmp_path / "other")
    assert settings.policy.verify_min_support == 1.0
    assert settings.retrieval.qdrant_path == str(tmp_path / "other" / "qdrant")


def test_parameter_overrides_parse_both_sam_forms():
    assert parse_overrides(["TopicScope=corpus", "ParameterKey=TopK,ParameterValue=4", "QdrantUrl="]) == {
        "TopicScope": "corpus", "TopK": "4", "QdrantUrl": ""}
    with pytest.raises(ValueError, match="'TopicScope' is not Key=Value"):
        parse_overrides(["TopicScope"])


@pytest.mark.parametrize(("overrides", "message"), [
    ({"TopicScop": "corpus"}, "TopicScop is not a parameter of template.yaml"),
    ({"TopicScope": "everything"}, "TopicScope='everything' is not allowed (allowed: insurance, corpus)"),
    ({"MinConfidence": "high"}, "does not match"),
    ({"TopK": "many"}, "TopK must be a number"),
    ({"MaxRetrievalRounds": "0"}, "MaxRetrievalRounds must be at least 1"),
])
def test_parameter_overrides_are_checked_against_the_template(overrides, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        validate_overrides(load_template(), overrides)


def test_budget_overrides_reach_the_state_machine_definition(tmp_path):
    def definition(**kwargs) -> str:
        stack = LocalStack(tmp_path, **kwargs)
        stack.function_names = {logical: f"agent-{logical}" for logical in
                                stack_module.resources_of_type(stack.template, "AWS::Serverless::Function")}
        return stack.definition()

    assert "\"max_llm_calls.$\": \"States.StringToJson('8')\"" in definition()
    assert "\"max_llm_calls.$\": \"States.StringToJson('5')\"" in definition(parameters={"MaxLlmCalls": "5"})


def test_conditional_values_resolve_as_cloudformation_would(environment, tmp_path):
    # SMALL_MODEL_ID is `!If [UsesInferenceProfile, !Sub "${InferenceProfileScope}.${SmallModelId}", ...]`.
    settings = configure(tmp_path, parameters={"ModelProvider": "bedrock", "InferenceProfileScope": "eu"})
    assert settings.models.small_model_id == "eu.anthropic.claude-haiku-4-5-20251001-v1:0"
    assert settings.models.main_model_id == "eu.anthropic.claude-sonnet-4-6"
    settings = configure(tmp_path, parameters={"ModelProvider": "bedrock", "InferenceProfileScope": "none"})
    assert settings.models.small_model_id == "anthropic.claude-haiku-4-5-20251001-v1:0"
    # An `AWS::NoValue` branch sets nothing (no Bedrock endpoint of the local runs on AWS's defaults).
    assert "AWS_ENDPOINT_URL_BEDROCK_RUNTIME" not in environment
    configure(tmp_path, parameters={"LocalBedrockEndpointUrl": "http://127.0.0.1:4567"})
    assert environment["AWS_ENDPOINT_URL_BEDROCK_RUNTIME"] == "http://127.0.0.1:4567"


def test_an_override_of_a_parameter_a_computed_value_uses_wins_over_the_environment(environment, tmp_path):
    environment["SMALL_MODEL_ID"] = "user.chosen-model"
    assert configure(tmp_path).models.small_model_id == "user.chosen-model"
    settings = configure(tmp_path, parameters={"InferenceProfileScope": "us"})
    assert settings.models.small_model_id == "us.anthropic.claude-haiku-4-5-20251001-v1:0"


def test_an_override_never_blanks_a_setting_the_user_exported(environment, tmp_path):
    # The openai model names default to empty in the template: switching the provider must keep the user's.
    environment.update({"SMALL_MODEL_ID": "qwen-small", "MAIN_MODEL_ID": "qwen-main",
                        "OPENAI_BASE_URL": "http://127.0.0.1:8080/v1"})
    settings = configure(tmp_path, parameters={"ModelProvider": "openai"})
    assert settings.models.provider == "openai"
    assert (settings.models.small_model_id, settings.models.main_model_id) == ("qwen-small", "qwen-main")
    assert settings.models.openai_base_url == "http://127.0.0.1:8080/v1"
    # A value the template gives wins as before; so does a parameter the user overrides to empty.
    assert configure(tmp_path, parameters={"ModelProvider": "openai", "OpenAISmallModel": "served"}
                     ).models.small_model_id == "served"
    environment["AGENT_QDRANT_URL"] = "http://127.0.0.1:6333"
    assert configure(tmp_path, parameters={"QdrantUrl": ""}).retrieval.qdrant_url is None


def test_the_exemplar_store_is_the_homes_unless_set_and_empty_switches_it_off(environment, tmp_path):
    configure(tmp_path / "one")
    assert environment["AGENT_EMBEDDING_STORE"] == str(tmp_path / "one" / "cache" / "exemplar_embeddings.npz")
    configure(tmp_path / "two")  # a later stack of the same process: its own home's
    assert environment["AGENT_EMBEDDING_STORE"] == str(tmp_path / "two" / "cache" / "exemplar_embeddings.npz")
    environment["AGENT_EMBEDDING_STORE"] = ""
    configure(tmp_path / "three")
    assert environment["AGENT_EMBEDDING_STORE"] == ""
    environment["AGENT_EMBEDDING_STORE"] = str(tmp_path / "mine.npz")
    configure(tmp_path / "four")
    assert environment["AGENT_EMBEDDING_STORE"] == str(tmp_path / "mine.npz")


def test_a_role_map_gives_the_handlers_each_roles_settings(environment, tmp_path):
    settings = configure(tmp_path, parameters={
        "RoleProviders": "grade:openai,generate:openai", "OpenAIBaseUrl": "http://127.0.0.1:8080/v1",
        "OpenAISmallModel": "qwen-small", "OpenAIMainModel": "qwen-main"})
    models = settings.models
    assert models.provider == "offline" and models.role_providers == {"grade": "openai", "generate": "openai"}
    # Only the openai roles name a model or a server: the offline ones leave the variables to them.
    assert (models.small_model_id, models.main_model_id) == ("qwen-small", "qwen-main")
    assert models.openai_base_url == "http://127.0.0.1:8080/v1"
    assert environment["ROLE_PROVIDERS"] == "grade:openai,generate:openai"


def test_roles_on_two_model_services_cannot_share_the_one_process(environment, tmp_path):
    # Triage's Bedrock model id and grade's served model are both SMALL_MODEL_ID: one process has one.
    with pytest.raises(stack_module.StackError, match="need different values of SMALL_MODEL_ID"):
        configure(tmp_path, parameters={"ModelProvider": "bedrock", "RoleProviders": "grade:openai",
                                        "OpenAISmallModel": "qwen-small"})
    # The main roles on openai and the small ones on Bedrock do not collide.
    models = configure(tmp_path, parameters={
        "ModelProvider": "bedrock", "RoleProviders": "clarify:openai,generate:openai",
        "OpenAIMainModel": "qwen-main", "OpenAIBaseUrl": "http://127.0.0.1:8080/v1"}).models
    assert (models.small_model_id, models.main_model_id) == ("global.anthropic.claude-haiku-4-5-20251001-v1:0",
                                                             "qwen-main")
    assert models.provider_for("generate") == "openai" and models.provider_for("verify") == "bedrock"


def test_the_agent_check_names_each_provider_in_use_with_its_roles(environment, tmp_path):
    from agent_local.preflight import model_settings_problem

    for name in ("OPENAI_BASE_URL", "SMALL_MODEL_ID", "MAIN_MODEL_ID", "ROLE_PROVIDERS"):
        environment.pop(name, None)
    problem = model_settings_problem(tmp_path, {"RoleProviders": "generate:openai"})
    assert problem.startswith("model provider 'openai' (serving generate) is not configured, so no turn was run:")
    assert "OPENAI_BASE_URL is not set" in problem and "--parameter-overrides OpenAIBaseUrl=VALUE" in problem
    assert "'local'" not in problem  # the offline roles need nothing
    assert model_settings_problem(tmp_path, {"RoleProviders": "generate:openai", "OpenAIBaseUrl": "http://h:1/v1",
                                             "OpenAIMainModel": "m"}) is None
    refused = model_settings_problem(tmp_path, {"ModelProvider": "bedrock", "RoleProviders": "grade:openai"})
    assert "need different values of SMALL_MODEL_ID" in refused and refused.endswith("no turn was run")
    # A repeated role passes the parameter's pattern; the settings refuse it before any turn.
    repeated = model_settings_problem(tmp_path, {"RoleProviders": "grade:openai,grade:offline"})
    assert "lists the role 'grade' twice" in repeated and repeated.endswith("no turn was run")
