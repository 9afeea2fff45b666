"""One Logger, Tracer and Metrics for the whole service (module level: created once per cold start).

Service name, namespace, log level and sampling come from the POWERTOOLS_* environment variables
that template.yaml sets. The local stack sends logs to a file so that CLI output stays clean.

Values that vary (an escalation reason, a verdict, a route, a node) are dimensions of one metric,
never part of a metric name: `emit("Escalations", Reason="frustration")`. Each such metric is its
own EMF record so that its dimensions do not spread to the other metrics of the invocation.
"""

from __future__ import annotations

import importlib.util
import json
import logging
import sys
import warnings

from aws_lambda_powertools import Logger, Metrics, Tracer
from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.metrics.base import SingleMetric
from aws_lambda_powertools.metrics.functions import is_metrics_disabled

from insurance_agent.config import ObservabilitySettings, read


SETTINGS = read(ObservabilitySettings)


def _log_handler() -> logging.Handler | None:
    if SETTINGS.log_file:
        return logging.FileHandler(SETTINGS.log_file, encoding="utf-8")
    if SETTINGS.log_stderr:
        return logging.StreamHandler(sys.stderr)
    return None  # Lambda: Powertools' default stdout handler, which CloudWatch collects


# Nodes that only move data publish no metric of their own; that is expected, not worth a warning.
warnings.filterwarnings("ignore", message="No application metrics to publish")

SERVICE = SETTINGS.service
NAMESPACE = SETTINGS.namespace

logger = Logger(service=SERVICE, logger_handler=_log_handler())
# Patch only the clients this service calls through: the AWS SDK, and httpx where Qdrant's client
# is shipped (Retrieve, Triage). X-Ray's patch_all imports and wraps every library it supports that
# it can find, and the model layer carries an httpx no node calls through: each import is a
# measurable share of a cold start (docs/packaging.md).
TRACED_MODULES = ("botocore", "httpx") if importlib.util.find_spec("qdrant_client") else ("botocore",)
tracer = Tracer(service=SERVICE, patch_modules=TRACED_MODULES)
metrics = Metrics(service=SERVICE, namespace=NAMESPACE)


def emit(name: str, value: float = 1, unit: MetricUnit = MetricUnit.Count, **dimensions: str) -> dict | None:
    """Publish one metric with `dimensions` (plus `service`) as its own EMF record; returns the record
    (None when metrics are disabled, as on the local stack)."""
    if is_metrics_disabled():
        return None
    record = SingleMetric(service=SERVICE, namespace=NAMESPACE)
    record.add_metric(name=name, unit=unit, value=value)
    for key, dimension in dimensions.items():
        record.add_dimension(name=key, value=str(dimension) or "none")
    blob = record.serialize_metric_set()
    print(json.dumps(blob, separators=(",", ":")), flush=True)  # EMF: CloudWatch reads stdout
    return blob
