"""Shared fixtures: one embedded local stack per test session, with the sample corpus ingested."""

from __future__ import annotations

import os
import uuid
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
os.environ.setdefault("HF_HUB_OFFLINE", "1")


@pytest.fixture(scope="session")
def agent_home(tmp_path_factory) -> Path:
    home = tmp_path_factory.mktemp("agent-home")
    os.environ["AGENT_HOME"] = str(home)
    os.environ["AGENT_QDRANT_PATH"] = str(home / "qdrant")
    return home


@pytest.fixture(scope="session")
def corpus(agent_home):
    """The sample corpus of both tenants in the embedded Qdrant store."""
    from insurance_agent.config import get_settings
    from insurance_search.ingest import ingest_directory

    get_settings.cache_clear()
    reports = {
        tenant: ingest_directory(REPO_ROOT / "samples" / "corpus" / tenant, tenant, reset=True)
        for tenant in ("sepehr", "kavir")
    }
    return reports


@pytest.fixture(scope="session")
def stack(agent_home, corpus):
    import json

    from agent_local.stack import LocalStack
    from insurance_agent.store.accounts import DynamoAccountsSource, PolicyRecord

    with LocalStack(agent_home, fast_retries=True, persist=False) as local:
        records = json.loads((REPO_ROOT / "samples" / "accounts.json").read_text(encoding="utf-8"))
        DynamoAccountsSource().load([PolicyRecord.model_validate(r) for r in records])
        yield local


class Conversation:
    """One thread driven through StartSyncExecution, as the backend would."""

    def __init__(self, stack, *, tenant="sepehr", user="u-1001", roles=("user",), domain=None, arn=None):
        self.stack = stack
        self.thread_id = f"t-{uuid.uuid4().hex[:12]}"
        self.tenant, self.user, self.roles, self.domain, self.arn = tenant, user, list(roles), domain, arn
        self.responses: list[dict] = []

    def payload(self, message, **overrides):
        data = {"thread_id": self.thread_id, "turn_id": f"turn-{uuid.uuid4().hex}", "user_id": self.user,
                "tenant_id": self.tenant, "roles": self.roles, "domain": self.domain, "message": message}
        return data | overrides

    def say(self, message, **overrides) -> dict:
        import json

        response = self.stack.run_turn_raw(self.payload(message, **overrides), arn=self.arn)
        self.responses.append(response)
        assert response["status"] == "SUCCEEDED", response
        return json.loads(response["output"])

    def ask(self, message, pick="1", **overrides) -> dict:
        """A knowledge question as the offline provider answers one: it cannot tell which retrieved
        passage answers, so it offers them; the user picks one (`pick`) and is shown that passage.
        Returns the reply to the pick; the offer is `self.offered`."""
        self.offered = self.say(message, **overrides)
        options = self.offered.get("options") or []
        assert self.offered["status"] == "clarify" and options and all(o["chunk_id"] for o in options), self.offered
        return self.say(pick, **overrides)


@pytest.fixture
def conversation(stack):
    def make(**kwargs) -> Conversation:
        return Conversation(stack, **kwargs)

    return make


@pytest.fixture(autouse=True)
def _yaml_safe_loader_as_it_was():
    """SAM CLI's YAML parser (the template and tier tests read template.yaml through it) registers its
    constructors on yaml.SafeLoader itself: mappings become OrderedDicts, which safe_dump refuses, so
    every later test in the process would read YAML differently."""
    import yaml

    constructors = dict(yaml.SafeLoader.yaml_constructors)
    multi = dict(yaml.SafeLoader.yaml_multi_constructors)
    yield
    yaml.SafeLoader.yaml_constructors = constructors
    yaml.SafeLoader.yaml_multi_constructors = multi
