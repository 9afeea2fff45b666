"""Settings are read from the environment in one place (insurance_agent/config.py): each field from
the variable template.yaml sets, an empty variable as unset, a malformed value as a ConfigurationError
that names the variable."""

from __future__ import annotations

import pytest

from insurance_agent.config import ModelSettings, RetrievalSettings, Settings, get_settings, model_settings, read
from insurance_agent.errors import ConfigurationError


@pytest.fixture
def fresh(monkeypatch):
    """get_settings() read anew from this test's environment, and again after it."""
    get_settings.cache_clear()
    yield monkeypatch
    get_settings.cache_clear()


def test_each_section_reads_its_variables_and_an_empty_one_is_unset(fresh):
    fresh.setenv("AGENT_TOP_K", "9")
    fresh.setenv("THREADS_TABLE", "prod-threads")
    fresh.setenv("ACCOUNTS_API_TIMEOUT_SECONDS", "1.5")
    fresh.setenv("AGENT_RECENT_TURNS", "4")
    fresh.setenv("AGENT_CORPUS_LANGUAGE", "")
    fresh.setenv("MODEL_PROVIDER", "")
    settings = get_settings()
    assert settings.retrieval.top_k == 9 and settings.tables.threads == "prod-threads"
    assert settings.accounts.timeout_seconds == 1.5 and settings.recent_turns == 4
    assert settings.corpus_language == "fa" and settings.models.provider == "offline"
    assert get_settings() is settings  # once per process


def test_a_server_url_wins_over_the_embedded_store_path(fresh, tmp_path):
    fresh.setenv("AGENT_QDRANT_PATH", str(tmp_path / "store"))
    assert RetrievalSettings().qdrant_path == str(tmp_path / "store")
    fresh.setenv("AGENT_QDRANT_URL", "http://127.0.0.1:6333")
    assert RetrievalSettings().qdrant_path is None
    fresh.delenv("AGENT_QDRANT_URL")
    fresh.delenv("AGENT_QDRANT_PATH")
    fresh.setenv("AGENT_HOME", str(tmp_path / "home"))
    assert RetrievalSettings().qdrant_path == str(tmp_path / "home" / "qdrant")


@pytest.mark.parametrize(("variable", "value", "message"), [
    ("AGENT_TOP_K", "six", "AGENT_TOP_K='six': Input should be a valid integer"),
    ("VERIFY_MIN_SUPPORT", "1.5", "VERIFY_MIN_SUPPORT='1.5': Input should be less than or equal to 1"),
    ("AGENT_TOPIC_SCOPE", "all", "AGENT_TOPIC_SCOPE='all': Input should be 'insurance' or 'corpus'"),
    ("MODEL_MAX_ATTEMPTS", "0", "MODEL_MAX_ATTEMPTS='0' (template parameter ModelMaxAttempts)"),
    ("AGENT_RECENT_TURNS", "many", "AGENT_RECENT_TURNS='many'"),
])
def test_a_malformed_value_fails_the_cold_start_naming_its_variable(fresh, variable, value, message):
    fresh.setenv(variable, value)
    with pytest.raises(ConfigurationError, match="^invalid configuration: ") as caught:
        get_settings()
    assert message in str(caught.value)


def test_a_given_environment_is_read_instead_of_the_process_one(fresh):
    fresh.setenv("MODEL_PROVIDER", "bedrock")
    fresh.setenv("SMALL_MODEL_ID", "from-the-process")
    settings = model_settings({"MODEL_PROVIDER": "openai", "MAIN_MODEL_ID": "main"})
    assert (settings.provider, settings.small_model_id, settings.main_model_id) == ("openai", "", "main")
    assert model_settings().provider == "bedrock"  # the process environment again afterwards


def test_given_values_win_over_the_environment(fresh):
    fresh.setenv("MODEL_PROVIDER", "bedrock")
    fresh.setenv("SMALL_MODEL_ID", "from-the-process")
    settings = ModelSettings(provider="openai")
    assert (settings.provider, settings.small_model_id) == ("openai", "from-the-process")
    assert read(Settings, recent_turns=2).recent_turns == 2
