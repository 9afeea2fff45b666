"""One Logger, Tracer and Metrics for the whole service (module level: created once per cold start).

Service name, namespace, log level and sampling come from the POWERTOOLS_* environment variables
that template.yaml sets. The local stack sends logs to a file so that CLI output stays clean.
"""

from __future__ import annotations

import logging
import os
import sys
import warnings

from aws_lambda_powertools import Logger, Metrics, Tracer


def _log_handler() -> logging.Handler | None:
    target = os.environ.get("AGENT_LOG_FILE")
    if target:
        return logging.FileHandler(target, encoding="utf-8")
    if os.environ.get("AGENT_LOG_STDERR"):
        return logging.StreamHandler(sys.stderr)
    return None  # Lambda: Powertools' default stdout handler, which CloudWatch collects


# Nodes that only move data publish no metric of their own; that is expected, not worth a warning.
warnings.filterwarnings("ignore", message="No application metrics to publish")

logger = Logger(logger_handler=_log_handler())
tracer = Tracer()
metrics = Metrics()
