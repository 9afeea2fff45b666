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
