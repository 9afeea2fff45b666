"""The home lock and the local JSON API, without a stack."""

from __future__ import annotations

import json
import os
from types import SimpleNamespace

import pytest
from agent_local import operations
from agent_local.service import ApiApp, HomeLock, ServiceError, claim, holder, running_service
from werkzeug.test import Client


def test_one_owner_per_home_and_others_wait_then_give_up(tmp_path, capsys):
    owner = HomeLock(tmp_path, "agent ingest")
    assert owner.try_acquire()
    assert holder(tmp_path) == {"pid": os.getpid(), "command": "agent ingest"}
    assert running_service(tmp_path) is None  # an owner without an endpoint serves nothing
    with pytest.raises(ServiceError, match=r"still in use by `agent ingest` \(pid \d+\)"):
        claim(tmp_path, "agent search", wait_seconds=0.5)
    assert "waiting for `agent ingest`" in capsys.readouterr().err
    owner.release()
    second = claim(tmp_path, "agent search", wait_seconds=0.5)
    assert isinstance(second, HomeLock) and holder(tmp_path)["command"] == "agent search"
    second.release()
    assert holder(tmp_path) is None


def test_a_dead_owners_endpoint_is_not_used(tmp_path):
    (tmp_path / "agent.lock").write_text(json.dumps({"pid": 2**22 + 12345, "command": "agent serve",
                                                    "endpoint_url": "http://127.0.0.1:9", "state_machine_arn": "x"}))
    assert running_service(tmp_path) is None
    route = claim(tmp_path, "agent chat", wait_seconds=0.5)  # no process holds the flock: this one owns it
    assert isinstance(route, HomeLock)
    route.release()


@pytest.fixture
def api(tmp_path, monkeypatch):
    saved = []
    stack = SimpleNamespace(home=tmp_path, state_machine_arn="arn:x", persist=True, save=lambda: saved.append(1),
                            wait_for_warm_up=lambda: saved.append("waited"))
    monkeypatch.setitem(operations.OPERATIONS, "memory", lambda tenant, user: {"profile": {"tenant": tenant}})
    return Client(ApiApp(stack)), saved


def test_api_runs_operations_and_saves(api):
    client, saved = api
    health = client.get("/agent/v1/health").json
    assert health == {"pid": os.getpid(), "home": health["home"], "state_machine_arn": "arn:x"}
    assert saved == []  # health answers at once, during the warm-up too
    answer = client.post("/agent/v1/memory", json={"tenant": "t", "user": "u"})
    # an operation waits for the warm-up before it opens the store or loads an encoder
    assert answer.status_code == 200 and answer.json == {"profile": {"tenant": "t"}} and saved == ["waited", 1]


def test_api_rejects_bad_requests_with_a_message(api):
    client, saved = api
    assert client.post("/agent/v1/nothing", json={}).status_code == 404
    assert client.get("/agent/v1/memory").status_code == 404
    wrong = client.post("/agent/v1/memory", json={"tenant": "t"})
    assert wrong.status_code == 400 and "user" in wrong.json["error"]
    not_object = client.post("/agent/v1/memory", json=[1])
    assert not_object.status_code == 400 and not_object.json["error"] == "the request body must be a JSON object"
    assert 1 not in saved  # nothing was saved
