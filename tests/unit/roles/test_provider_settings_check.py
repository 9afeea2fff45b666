"""Each provider checks its own settings before any turn (ModelProvider.check_settings): what is
missing or malformed is named by its environment variable and the template parameter that sets it,
and those names agree with template.yaml."""

from __future__ import annotations

import pytest
from agent_local.template import load_template, parameter_defaults, referenced_parameters, resolve
from insurance_agent.config import ModelSettings, model_settings, parameter, variable
from insurance_agent.errors import ConfigurationError
from insurance_agent.roles import base
from insurance_agent.roles.base import check_model_settings, model_settings_problems
from insurance_llm.bedrock import BedrockProvider
from insurance_llm.openai import OpenAIProvider

REGION = {"AWS_REGION": "eu-central-1"}
OPENAI = {"MODEL_PROVIDER": "openai", "OPENAI_BASE_URL": "http://127.0.0.1:8731/v1", "SMALL_MODEL_ID": "small",
          "MAIN_MODEL_ID": "main"}
BEDROCK = {"MODEL_PROVIDER": "bedrock", "SMALL_MODEL_ID": "global.anthropic.claude-haiku-4-5-20251001-v1:0",
           "MAIN_MODEL_ID": "global.anthropic.claude-sonnet-4-6"} | REGION


def _problems(environ: dict[str, str]) -> dict[str, str]:
    return {p.variable: str(p) for p in model_settings_problems(model_settings(environ), environ)}


def test_a_complete_configuration_has_no_problem():
    assert _problems(OPENAI) == {} and _problems(BEDROCK) == {} and _problems({}) == {}  # {}: the offline provider
    check_model_settings(model_settings(OPENAI), OPENAI)


def test_openai_names_the_missing_model_names_and_their_parameters():
    problems = _problems({"MODEL_PROVIDER": "openai", "OPENAI_BASE_URL": OPENAI["OPENAI_BASE_URL"]})
    assert set(problems) == {"SMALL_MODEL_ID", "MAIN_MODEL_ID"}
    assert "OpenAISmallModel" in problems["SMALL_MODEL_ID"] and "triage" in problems["SMALL_MODEL_ID"]
    assert "OpenAIMainModel" in problems["MAIN_MODEL_ID"] and "generate" in problems["MAIN_MODEL_ID"]
    with pytest.raises(ConfigurationError, match="SMALL_MODEL_ID is not set.*MAIN_MODEL_ID is not set"):
        check_model_settings(model_settings(OPENAI | {"SMALL_MODEL_ID": "", "MAIN_MODEL_ID": ""}), {})


@pytest.mark.parametrize("url", ["", "gpu-box:8000/v1", "ftp://gpu-box/v1", "http:///v1"])
def test_openai_needs_an_http_base_url(url):
    problems = _problems(OPENAI | {"OPENAI_BASE_URL": url})
    assert set(problems) == {"OPENAI_BASE_URL"} and "OpenAIBaseUrl" in problems["OPENAI_BASE_URL"]
    # A URL may carry credentials: the message never repeats it.
    assert not url or url not in problems["OPENAI_BASE_URL"]


def test_a_structured_output_mode_outside_the_two_is_named_where_the_settings_are_read():
    with pytest.raises(ConfigurationError) as caught:
        model_settings(OPENAI | {"OPENAI_STRUCTURED_OUTPUT": "json"})
    message = str(caught.value)
    assert "OPENAI_STRUCTURED_OUTPUT='json'" in message and "OpenAIStructuredOutput" in message
    assert "json_schema" in message and "function_calling" in message


def test_bedrock_names_an_empty_model_id_behind_an_inference_profile_scope():
    problems = _problems(BEDROCK | {"MAIN_MODEL_ID": "global.", "SMALL_MODEL_ID": " "})
    assert set(problems) == {"SMALL_MODEL_ID", "MAIN_MODEL_ID"}
    assert "'global.'" in problems["MAIN_MODEL_ID"] and "MainModelId" in problems["MAIN_MODEL_ID"]
    assert "SmallModelId" in problems["SMALL_MODEL_ID"]


def test_bedrock_needs_a_region_only_where_none_is_configured(monkeypatch, tmp_path):
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "none"))
    monkeypatch.delenv("AWS_DEFAULT_REGION", raising=False)
    monkeypatch.delenv("AWS_PROFILE", raising=False)
    without = {k: v for k, v in BEDROCK.items() if k != "AWS_REGION"}
    assert set(_problems(without)) == {"BEDROCK_REGION"}
    assert _problems(without | {"BEDROCK_REGION": "eu-west-1"}) == {}
    assert _problems(without | {"AWS_DEFAULT_REGION": "eu-west-1"}) == {}


def test_an_unknown_or_unshipped_provider_is_a_configuration_error(monkeypatch):
    with pytest.raises(ConfigurationError, match="unknown model provider"):
        check_model_settings(ModelSettings(provider="gemini"), {})
    monkeypatch.setitem(base.PROVIDERS, "elsewhere", "insurance_llm_not_shipped:Provider")
    with pytest.raises(ConfigurationError, match="cannot be loaded"):
        check_model_settings(ModelSettings(provider="elsewhere"), {})


def test_each_settings_name_is_the_one_template_yaml_sets():
    template = load_template()
    env = template["Globals"]["Function"]["Environment"]["Variables"]
    for field in ModelSettings.model_fields:
        name = variable(field)
        if parameter(field):
            assert parameter(field) in referenced_parameters(template, env[name]), (field, name)
    # The model names: each provider's parameters reach SMALL_MODEL_ID and MAIN_MODEL_ID when it is configured.
    for provider, extra in ((OpenAIProvider, {}), (BedrockProvider, {"InferenceProfileScope": "none"})):
        for field, name in provider.model_parameters.items():
            values = parameter_defaults(template) | extra | {"ModelProvider": provider.name, name: "the-model"}
            assert resolve(template, values, env[variable(field)]) == "the-model", (provider.name, field)


@pytest.mark.parametrize(("roles", "needed"), [
    ("generate:openai,clarify:openai", {"MAIN_MODEL_ID"}),
    ("generate:openai,verify:openai", {"SMALL_MODEL_ID", "MAIN_MODEL_ID"}),
    ("triage:openai,grade:openai", {"SMALL_MODEL_ID"}),
])
def test_a_provider_serving_some_roles_needs_only_the_model_names_of_those_roles(roles, needed):
    # The offline default serves the others: the model names are the openai server's alone.
    environ = {"OPENAI_BASE_URL": OPENAI["OPENAI_BASE_URL"], "ROLE_PROVIDERS": roles}
    problems = _problems(environ)
    assert set(problems) == needed
    if "MAIN_MODEL_ID" in needed:
        assert "OpenAIMainModel" in problems["MAIN_MODEL_ID"] and "generate" in problems["MAIN_MODEL_ID"]
    assert _problems(environ | {"SMALL_MODEL_ID": "small", "MAIN_MODEL_ID": "main"}) == {}
    # Every role on the provider (MODEL_PROVIDER): both names, whatever the map says of some.
    assert set(_problems(environ | {"MODEL_PROVIDER": "openai"})) == {"SMALL_MODEL_ID", "MAIN_MODEL_ID"}
