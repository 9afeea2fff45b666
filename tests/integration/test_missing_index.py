"""A missing chunk collection is a configuration error, not "no answer": through the ASL and the CLI."""

from __future__ import annotations

import pytest
from agent_local import cli
from insurance_search import index

pytestmark = pytest.mark.stack


@pytest.fixture
def missing_collection(stack, monkeypatch):
    monkeypatch.setenv("AGENT_COLLECTION", "never_ingested_chunks")
    index.reset_caches()
    yield
    monkeypatch.undo()
    index.reset_caches()


def test_turn_escalates_system_error_and_publishes_the_configuration_metric(missing_collection, conversation, monkeypatch):
    from insurance_agent.observability import metrics

    published = []
    real = metrics.add_metric
    monkeypatch.setattr(metrics, "add_metric", lambda **kw: (published.append(kw["name"]), real(**kw)))
    reply = conversation().say("فرانشیز بیمه بدنه در خسارت دوم چند درصد است؟")
    assert reply["status"] == "escalate" and reply["reason"] == "system_error"
    # The failed Retrieve's own output is discarded; the path shows the turn got as far as retrieval.
    assert reply["trace"]["path"][-2:] == ["Contextualize", "Escalate"]
    assert "collection" not in reply["message"]  # the fixed message, never the error text
    assert "ConfigurationError" in published


def test_search_cli_exits_non_zero_with_a_clear_message(tmp_path, capsys, monkeypatch):
    for name in ("AGENT_QDRANT_URL", "AGENT_QDRANT_PATH", "AGENT_COLLECTION"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AGENT_HOME", str(tmp_path))
    monkeypatch.setenv("AGENT_LOG_FILE", str(tmp_path / "agent.log"))
    index.reset_caches()
    try:
        code = cli.main(["--home", str(tmp_path), "search", "فرانشیز", "--tenant", "sepehr"])
    finally:
        index.reset_caches()
    out, err = capsys.readouterr()
    assert code == 1 and out == ""
    assert "does not exist" in err and "agent ingest" in err


def test_empty_tenant_is_not_an_error(stack, caplog):
    from insurance_search.search import search

    assert search("فرانشیز", tenant_id="tenant-without-docs", roles=["user"]) == []
    assert any("tenant has no chunks" in r.getMessage() for r in caplog.records)
