"""What the local stack's HTTP front answers before moto: its own routes, signed calls of the services
it serves, and a JSON error for everything else (moto's catch-all would answer as S3)."""

from __future__ import annotations

import io
import json

import pytest

from agent_local.stack import CONTROL_HEADER, SERVED_SERVICES, _StackApp, signed_service

SCOPE = "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20260101/us-east-1/{}/aws4_request, SignedHeaders=host, Signature=0"


class _Stack:
    persist = False
    control_key = "k3y"

    def __init__(self) -> None:
        self.routes = {"/agent/v1/": self._route, "/ui": self._route}

    @staticmethod
    def _route(environ, start_response):
        start_response("200 OK", [])
        return [b"own route"]


def _call(environ):
    seen = {}

    def moto(env, start_response):
        start_response("200 OK", [])
        return [b"moto"]

    def start_response(status, headers):
        seen["status"], seen["headers"] = status, dict(headers)

    body = b"".join(_StackApp(moto, _Stack())(
        {"REQUEST_METHOD": "POST", "PATH_INFO": "/", "wsgi.input": io.BytesIO()} | environ, start_response))
    return seen["status"], seen["headers"], body


@pytest.mark.parametrize(("environ", "service"), [
    ({"HTTP_AUTHORIZATION": SCOPE.format("dynamodb")}, "dynamodb"),
    ({"HTTP_AUTHORIZATION": SCOPE.format("states")}, "states"),
    ({"QUERY_STRING": "X-Amz-Credential=AKID%2F20260101%2Fus-east-1%2Fs3%2Faws4_request&X-Amz-Signature=0"}, "s3"),
    ({"HTTP_AUTHORIZATION": "AWS AKID:signature"}, None),  # SigV2 names no service
    ({}, None),
])
def test_the_service_of_a_request_is_its_credential_scopes(environ, service):
    assert signed_service(environ) == service


def test_signed_calls_of_served_services_and_moto_and_own_paths_pass():
    assert {"dynamodb", "states", "lambda", "iam"} <= SERVED_SERVICES and "s3" not in SERVED_SERVICES
    assert _call({"HTTP_AUTHORIZATION": SCOPE.format("dynamodb")})[2] == b"moto"
    # the stack configures moto through its control API at start, with the stack's key
    assert _call({"PATH_INFO": "/moto-api/config", "HTTP_X_AGENT_STACK_KEY": "k3y"})[2] == b"moto"
    assert _call({"PATH_INFO": "/agent/v1/health", "REQUEST_METHOD": "GET"})[2] == b"own route"
    assert _call({"PATH_INFO": "/ui", "REQUEST_METHOD": "GET"})[2] == b"own route"


def test_an_unsigned_request_is_a_404_and_an_unserved_service_a_400_both_json():
    status, headers, body = _call({})
    assert status == "404 Not Found" and headers["Content-Type"] == "application/json"
    assert "POST / is not a path of the local stack (/agent/v1/..., /ui)" in json.loads(body)["message"]
    status, _, body = _call({"HTTP_AUTHORIZATION": SCOPE.format("s3")})
    assert status == "400 Bad Request" and json.loads(body)["error"] == "ServiceNotServed"
    assert "'s3'" in json.loads(body)["message"]


def test_a_browser_at_the_root_is_sent_to_the_turns_page():
    status, headers, _ = _call({"REQUEST_METHOD": "GET", "HTTP_ACCEPT": "text/html,application/xhtml+xml"})
    assert status == "302 Found" and headers["Location"] == "/ui"
    assert _call({"REQUEST_METHOD": "GET"})[0] == "404 Not Found"  # curl: the JSON error


@pytest.mark.parametrize("key", [None, "", "wrong", "k3y "])
def test_motos_control_api_refuses_a_request_without_the_stacks_key(key):
    """/moto-api/reset would wipe every table: a caller that is not the stack gets the JSON 404."""
    assert CONTROL_HEADER == "X-Agent-Stack-Key"
    environ = {"PATH_INFO": "/moto-api/reset"} | ({} if key is None else {"HTTP_X_AGENT_STACK_KEY": key})
    status, headers, body = _call(environ)
    assert status == "404 Not Found" and body != b"moto" and headers["Content-Type"] == "application/json"
