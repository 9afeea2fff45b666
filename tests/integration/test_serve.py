"""`agent serve`: a backend's own boto3 client runs turns against the local endpoints, in another process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import boto3
import pytest
from botocore.config import Config

pytestmark = pytest.mark.stack


@pytest.fixture
def served(tmp_path):
    env = os.environ | {"AGENT_HOME": str(tmp_path), "AGENT_QDRANT_PATH": str(tmp_path / "qdrant")}
    agent = Path(sys.executable).parent / "agent"
    process = subprocess.Popen([str(agent), "--home", str(tmp_path), "serve", "--port", "0"], stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL, text=True, env=env)
    try:
        line = process.stdout.readline()
        assert line, "agent serve printed nothing"
        yield json.loads(line)
    finally:
        process.terminate()
        process.wait(timeout=30)


def test_backend_client_runs_turns_with_start_sync_execution(served):
    client = boto3.client("stepfunctions", endpoint_url=served["endpoint_url"], region_name="us-east-1",
                          aws_access_key_id="x", aws_secret_access_key="x",
                          config=Config(inject_host_prefix=False, read_timeout=300, retries={"max_attempts": 0}))
    turn = {"thread_id": "srv-1", "turn_id": "srv-turn-1", "user_id": "u-1", "tenant_id": "sepehr",
            "roles": ["user"], "domain": None, "message": "سلام، وقت بخیر"}
    response = client.start_sync_execution(stateMachineArn=served["state_machine_arn"], input=json.dumps(turn))
    assert response["status"] == "SUCCEEDED"
    reply = json.loads(response["output"])
    assert reply["status"] == "answer" and reply["turn_id"] == "srv-turn-1"
    # The thread is now the backend's user's: another user is refused through the same endpoint.
    intruder = turn | {"turn_id": "srv-turn-2", "user_id": "u-2"}
    other = json.loads(client.start_sync_execution(stateMachineArn=served["state_machine_arn"],
                                                   input=json.dumps(intruder))["output"])
    assert other["status"] == "refused" and other["error"] == "thread_not_owned"


def test_the_turns_page_is_on_the_stacks_own_port_and_stray_requests_get_a_json_error(served):
    import urllib.error
    import urllib.request

    endpoint = served["endpoint_url"]
    assert served["ui"] == f"{endpoint}/ui"
    page = urllib.request.urlopen(served["ui"], timeout=30).read().decode()
    assert '<script src="/ui/graph.js">' in page
    assert json.loads(urllib.request.urlopen(f"{endpoint}/ui/api/turns", timeout=30).read()) == []

    def refused(request):
        with pytest.raises(urllib.error.HTTPError) as caught:
            urllib.request.urlopen(request, timeout=30)
        return caught.value.code, json.loads(caught.value.read())

    # An unsigned POST used to be answered by moto's catch-all: an S3 bucket listing.
    code, body = refused(urllib.request.Request(f"{endpoint}/", data=b"", method="POST"))
    assert code == 404 and body["error"] == "NotFound" and "not a signed AWS API call" in body["message"]
    assert "/ui" in body["message"] and "/agent/v1/..." in body["message"]
    s3 = boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1", aws_access_key_id="x",
                      aws_secret_access_key="x")
    with pytest.raises(s3.exceptions.ClientError) as caught:
        s3.list_buckets()
    assert caught.value.response["ResponseMetadata"]["HTTPStatusCode"] == 400
    # A signed call of a service the stack serves still reaches it; a browser at / is sent to the page.
    dynamodb = boto3.client("dynamodb", endpoint_url=endpoint, region_name="us-east-1", aws_access_key_id="x",
                            aws_secret_access_key="x")
    assert any(name.endswith("-threads") for name in dynamodb.list_tables()["TableNames"])
    browser = urllib.request.urlopen(urllib.request.Request(f"{endpoint}/", headers={"Accept": "text/html"}), timeout=30)
    assert browser.url == served["ui"]
