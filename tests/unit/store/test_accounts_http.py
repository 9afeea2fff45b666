"""The HTTP accounts source against a real HTTP server on loopback (the backend's API shape)."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from insurance_agent.errors import TransientError
from insurance_agent.store.accounts import (
    AccountsSourceError,
    HttpAccountsSource,
    PolicyRecord,
    mask_policy_number,
    policy_evidence,
)

POLICIES = {
    ("sepehr", "u-1"): [{"policy_number": "SEP-TP-1403-0012345", "product": "third_party", "title": "شخص ثالث",
                         "end_date": "2026-03-20", "tenant_id": "sepehr", "user_id": "u-1"},
                        # A record for someone else, as a buggy backend might return it.
                        {"policy_number": "SEP-CB-1403-0099999", "product": "car_body", "title": "بدنه",
                         "tenant_id": "sepehr", "user_id": "u-2"}],
}


class Backend(BaseHTTPRequestHandler):
    behaviour: dict = {}
    seen: list = []

    def log_message(self, *args):  # keep test output clean
        pass

    def do_GET(self):  # noqa: N802 - http.server API
        Backend.seen.append((self.path, self.headers.get("Authorization")))
        mode = Backend.behaviour.get("mode", "ok")
        if mode == "flaky" and len(Backend.seen) == 1 or mode == "down":
            self.send_response(503)
            self.end_headers()
            return
        if mode == "slow":
            time.sleep(1.5)
        if mode == "garbage":
            self.send_response(200)
            self.end_headers()
            self.wfile.write(b"<html>oops</html>")
            return
        parts = self.path.strip("/").split("/")
        key = (parts[1], parts[3])
        if key not in POLICIES:
            self.send_response(404)
            self.end_headers()
            return
        body = json.dumps({"policies": POLICIES[key]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(body)


class QuietServer(ThreadingHTTPServer):
    def handle_error(self, request, client_address):
        pass  # the timeout test's client hangs up on purpose; the broken pipe is expected


@pytest.fixture
def backend():
    server = QuietServer(("127.0.0.1", 0), Backend)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    Backend.behaviour, Backend.seen = {}, []
    yield f"http://127.0.0.1:{server.server_address[1]}", Backend
    server.shutdown()


def test_returns_only_the_asked_users_policies(backend):
    url, state = backend
    records = HttpAccountsSource(url, token="t0k").policies("sepehr", "u-1")
    assert [r.policy_number for r in records] == ["SEP-TP-1403-0012345"]
    assert state.seen == [("/tenants/sepehr/users/u-1/policies", "Bearer t0k")]


def test_unknown_user_has_no_policies(backend):
    url, _ = backend
    assert HttpAccountsSource(url).policies("sepehr", "nobody") == []


def test_identity_is_escaped_into_the_path(backend):
    url, state = backend
    HttpAccountsSource(url).policies("sepehr", "../admin")
    assert state.seen[0][0] == "/tenants/sepehr/users/..%2Fadmin/policies"


def test_server_errors_are_retried_then_typed(backend):
    url, state = backend
    state.behaviour["mode"] = "flaky"
    assert len(HttpAccountsSource(url, attempts=3).policies("sepehr", "u-1")) == 1
    assert len(state.seen) == 2
    state.behaviour["mode"], state.seen[:] = "down", []
    with pytest.raises(TransientError):
        HttpAccountsSource(url, attempts=2).policies("sepehr", "u-1")
    assert len(state.seen) == 2


def test_timeouts_are_transient(backend):
    url, state = backend
    state.behaviour["mode"] = "slow"
    with pytest.raises(TransientError):
        HttpAccountsSource(url, timeout=0.3, attempts=1).policies("sepehr", "u-1")


def test_malformed_answer_is_a_typed_error(backend):
    url, state = backend
    state.behaviour["mode"] = "garbage"
    with pytest.raises(AccountsSourceError):
        HttpAccountsSource(url).policies("sepehr", "u-1")


def test_unreachable_backend_is_transient():
    with pytest.raises(TransientError):
        HttpAccountsSource("http://127.0.0.1:9", timeout=0.2, attempts=1).policies("sepehr", "u-1")


def test_evidence_masks_policy_numbers():
    assert mask_policy_number("SEP-TP-1403-0012345") == "SEP" + "*" * 12 + "2345"
    record = PolicyRecord(tenant_id="sepehr", user_id="u-1", policy_number="SEP-TP-1403-0012345",
                          product="third_party", title="شخص ثالث", end_date="2026-03-20")
    (chunk,) = policy_evidence([record])
    assert "0012345" not in chunk.text and chunk.chunk_id.startswith("account:")
    assert "2026-03-20" in chunk.text
