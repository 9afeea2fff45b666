"""The provider check before a command must not make the service's logger write to stdout."""

from __future__ import annotations

import json
import subprocess
import sys

PROBE = """
import sys
from agent_local import cli
args = cli.build_parser().parse_args(["--home", sys.argv[1], "converse", "missing.json"])
cli._check_model_settings(args)
from insurance_agent.observability import logger
logger.info("probe line")
print("handlers", [type(h).__name__ for h in logger._logger.handlers])
"""


def test_the_check_leaves_the_logger_on_the_homes_log_file(tmp_path):
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "MODEL_PROVIDER": "bedrock", "SMALL_MODEL_ID": "s",
           "MAIN_MODEL_ID": "m", "BEDROCK_REGION": "us-east-1", "AWS_DEFAULT_REGION": "us-east-1"}
    done = subprocess.run([sys.executable, "-c", PROBE, str(tmp_path / "home")], env=env, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    out = done.stdout.splitlines()
    assert out == [line for line in out if not line.startswith("{")]  # no JSON log record on stdout
    assert out[-1] == "handlers " + json.dumps(["FileHandler"]).replace('"', "'")
    assert "probe line" in (tmp_path / "home" / "logs" / "agent.log").read_text(encoding="utf-8")
