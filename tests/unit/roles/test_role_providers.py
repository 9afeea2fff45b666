"""ROLE_PROVIDERS sends each role to its own provider: parsed and refused at start, resolved per role,
and only the providers actually used are checked."""

from __future__ import annotations

import pytest
from insurance_agent.config import ModelSettings, model_settings, parse_role_providers
from insurance_agent.errors import ConfigurationError
from insurance_agent.roles import base
from insurance_agent.roles.base import check_model_settings, get_provider, role_problems, serving, word_analysis

OPENAI = {"OPENAI_BASE_URL": "http://127.0.0.1:8731/v1", "SMALL_MODEL_ID": "small", "MAIN_MODEL_ID": "main"}


def test_a_map_is_parsed_with_blanks_ignored_and_unlisted_roles_on_the_default():
    assert parse_role_providers(" grade:openai , generate:openai,verify:bedrock ") == {
        "grade": "openai", "generate": "openai", "verify": "bedrock"}
    assert parse_role_providers("") == {} and parse_role_providers("  ") == {}
    settings = model_settings({"MODEL_PROVIDER": "offline", "ROLE_PROVIDERS": "grade:openai,generate:openai"})
    assert settings.role_providers == {"grade": "openai", "generate": "openai"}
    assert [settings.provider_for(role) for role in ("triage", "grade", "generate", None)] == [
        "offline", "openai", "openai", "offline"]
    assert settings.providers_used() == ["offline", "openai"]
    assert settings.providers_used(("triage", "verify")) == ["offline"]


@pytest.mark.parametrize(("text", "message"), [
    ("grade", "item 'grade' is not role:provider"),
    ("grade:", "item 'grade:' is not role:provider"),
    ("grade:openai,,verify:offline", "item '' is not role:provider"),
    ("router:openai", "unknown role 'router'"),
    ("grade:openai,grade:offline", "lists the role 'grade' twice"),
])
def test_a_malformed_map_is_a_configuration_error_naming_the_problem(text, message):
    with pytest.raises(ConfigurationError, match=message):
        parse_role_providers(text)
    # Where the settings are read, the error also names the variable and the template parameter.
    with pytest.raises(ConfigurationError) as caught:
        model_settings({"ROLE_PROVIDERS": text})
    assert message in str(caught.value) and "RoleProviders" in str(caught.value)


def test_a_role_sent_to_an_unknown_provider_fails_every_functions_check():
    settings = model_settings({"MODEL_PROVIDER": "offline", "ROLE_PROVIDERS": "grade:gemini"})
    for role in ("grade", "triage"):  # not only the grade function's: the whole deployment is wrong
        with serving(role), pytest.raises(ConfigurationError, match="sends grade to an unknown provider 'gemini'"):
            check_model_settings(settings, {})


def test_each_role_gets_its_own_provider_and_roles_on_one_provider_share_it(monkeypatch):
    from insurance_agent.config import get_settings

    monkeypatch.setenv("MODEL_PROVIDER", "offline")
    monkeypatch.setenv("ROLE_PROVIDERS", "grade:openai,generate:openai")
    for name, value in OPENAI.items():
        monkeypatch.setenv(name, value)
    get_settings.cache_clear()
    get_provider.cache_clear()
    try:
        assert get_provider("generate").name == "openai" and get_provider("triage").name == "offline"
        assert get_provider("grade") is get_provider("generate")
        # Without a role named, the running node's role decides (lambda_entry.node_handler sets it).
        assert get_provider().name == "offline"
        with serving("grade"):
            assert get_provider() is get_provider("generate")
            assert word_analysis() is base.provider_class("openai").terms
        assert word_analysis() is base.provider_class("offline").terms
    finally:
        get_settings.cache_clear()
        get_provider.cache_clear()


def test_only_the_providers_in_use_are_checked(monkeypatch):
    for name in ("OPENAI_BASE_URL", "OPENAI_MODEL", "SMALL_MODEL_ID", "MAIN_MODEL_ID"):
        monkeypatch.delenv(name, raising=False)  # the settings read the process environment too
    mixed = ModelSettings(provider="offline", role_providers={"generate": "openai"})
    # Nothing of the openai server is set: every role but generate runs, generate's check names it.
    assert role_problems(mixed, {}, ("triage", "grade")) == {}
    (provider, problems), = role_problems(mixed, {}, ("generate",)).items()
    assert provider == "openai" and {p.variable for p in problems} >= {"OPENAI_BASE_URL"}
    # Outside a node (the agent commands' check): every role's provider.
    with pytest.raises(ConfigurationError, match="model provider 'openai' is not configured: OPENAI_BASE_URL"):
        check_model_settings(mixed, {})
    # A model function's cold start checks only its own role's provider.
    with serving("triage"):
        check_model_settings(mixed, {})
    with serving("generate"), pytest.raises(ConfigurationError, match="'openai'"):
        check_model_settings(mixed, {})
    check_model_settings(model_settings(OPENAI | {"ROLE_PROVIDERS": "generate:openai"}), OPENAI)
