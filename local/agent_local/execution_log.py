"""Execution log events in the shape Step Functions writes to CloudWatch Logs (level ALL, with
execution data), and where to read them from.

On AWS an EXPRESS state machine has no execution-history API: the only record of a turn's path is
its log group, one JSON object per event:

    {"id": "4", "type": "TaskStateEntered", "details": {"name": "LoadMemory", "input": "...",
     "inputDetails": {"truncated": false}}, "previous_event_id": "3",
     "event_timestamp": "1713959670680", "execution_arn": "arn:aws:states:...", "redrive_count": "0"}

The local stack converts moto's execution history into exactly these objects after every execution
and appends them to `$AGENT_HOME/logs/executions/<UTC day>.jsonl`, so one reader (`agent_local.trace`)
serves a laptop and a deployed stack's log group. Personal data in free text is masked before a line
is written (`mask_text`).
"""

from __future__ import annotations

import datetime as dt
import fcntl
import json
import os
import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from insurance_agent.policy.pii import find_pii

# GetExecutionHistory puts an event's details under one `<kind>EventDetails` key; CloudWatch Logs
# puts the same body under `details`.
_DETAILS_SUFFIX = "EventDetails"
# Strings under these keys are identifiers or graph vocabulary, never a person's words.
_NOT_TEXT_KEYS = {
    "thread_id", "turn_id", "user_id", "tenant_id", "execution_id", "chunk_id", "file_id", "domain", "product",
    "roles", "status", "reason", "route", "error", "language", "locale", "grade", "name", "resource", "roleArn",
    "type", "Error", "errorType", "intent", "kind", "audience", "path", "title", "id", "execution_arn",
    "stateMachineArn", "executionArn",
}
# A clause ends at sentence punctuation followed by space; a phone or card number never spans one.
_CLAUSE_SPLIT = re.compile(r"(?<=[.!?؟؛;،,\n])\s+")


def mask_text(text: str) -> str:
    """`text` with every clause that holds personal data (policy.pii detectors) replaced by a marker.

    Linear in the text (the detectors are), so any length is scanned, a refused 250 KB input too.
    """
    if not text or not find_pii(text):
        return text
    clauses = _CLAUSE_SPLIT.split(text)
    masked = [f"[masked {'/'.join(find_pii(c))}]" if find_pii(c) else c for c in clauses]
    out = " ".join(masked)
    # A detector may match across clauses (an address written over two): then nothing is kept.
    return out if not find_pii(out) else f"[masked {'/'.join(find_pii(text))}]"


def _mask_value(value: Any, key: str = "") -> Any:
    if isinstance(value, str):
        return value if key in _NOT_TEXT_KEYS else mask_text(value)
    if isinstance(value, dict):
        return {k: _mask_value(v, k) for k, v in value.items()}
    if isinstance(value, list):
        return [_mask_value(v, key) for v in value]
    return value


def _mask_json_string(text: str) -> str:
    try:
        data = json.loads(text)
    except (TypeError, ValueError):
        return mask_text(text)
    return json.dumps(_mask_value(data), ensure_ascii=False, separators=(",", ":"))


def mask_details(details: dict[str, Any]) -> dict[str, Any]:
    """Mask the execution data (input, output, cause) of one event's details."""
    out = dict(details)
    for key in ("input", "output", "cause"):
        if isinstance(out.get(key), str):
            out[key] = _mask_json_string(out[key])
    return out


def _millis(timestamp: Any) -> int:
    if isinstance(timestamp, str):
        timestamp = dt.datetime.fromisoformat(timestamp.replace("Z", "+00:00"))
    if isinstance(timestamp, dt.datetime):
        if timestamp.tzinfo is None:
            timestamp = timestamp.replace(tzinfo=dt.timezone.utc)
        return int(round(timestamp.timestamp() * 1000))
    return int(timestamp)


def history_to_log_events(history: Iterable[dict[str, Any]], execution_arn: str) -> list[dict[str, Any]]:
    """GetExecutionHistory events -> the CloudWatch Logs objects AWS writes for the same execution."""
    out = []
    for event in history:
        details = next((v for k, v in event.items() if k.endswith(_DETAILS_SUFFIX)), None)
        record: dict[str, Any] = {"id": str(event["id"]), "type": event["type"]}
        if details:
            record["details"] = mask_details(details)
        record |= {
            "previous_event_id": str(event.get("previousEventId", 0)),
            "event_timestamp": str(_millis(event["timestamp"])),
            "execution_arn": execution_arn,
            "redrive_count": "0",
        }
        out.append(record)
    return out


# -- where events live ---------------------------------------------------------------------------
class LocalExecutionLog:
    """`$AGENT_HOME/logs/executions/<YYYY-MM-DD>.jsonl`: one CloudWatch-shaped event per line."""

    def __init__(self, home: Path | str) -> None:
        self.folder = Path(home) / "logs" / "executions"

    def append(self, events: list[dict[str, Any]]) -> Path:
        """Append one execution's events durably (flushed and fsynced) and atomically per execution."""
        self.folder.mkdir(parents=True, exist_ok=True)
        day = dt.datetime.fromtimestamp(int(events[0]["event_timestamp"]) / 1000, dt.timezone.utc).date()
        path = self.folder / f"{day.isoformat()}.jsonl"
        # A lone surrogate (invalid input that was refused) becomes its JSON escape, so the line stays valid.
        block = "".join(json.dumps(e, ensure_ascii=False) + "\n" for e in events).encode("utf-8", "backslashreplace")
        with path.open("ab") as handle:
            # Other local processes may append at the same time: one execution's lines stay together.
            fcntl.flock(handle, fcntl.LOCK_EX)
            try:
                handle.write(block)
                handle.flush()
                os.fsync(handle.fileno())
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)
        return path

    def events(self, pattern: str | None = None, *, days: int | None = None) -> Iterator[dict[str, Any]]:
        """Events of the newest `days` files (all when None), oldest first; with `pattern`, only lines
        that contain it (as a CloudWatch quoted-term filter would). A torn or foreign line is skipped."""
        if not self.folder.is_dir():
            return
        files = sorted(self.folder.glob("*.jsonl"))
        if days is not None:
            files = files[-days:]
        for path in files:
            with path.open(encoding="utf-8", errors="replace") as handle:
                for line in handle:
                    if pattern and pattern not in line:
                        continue
                    try:
                        event = json.loads(line)
                    except ValueError:
                        continue
                    if isinstance(event, dict) and "execution_arn" in event and "type" in event:
                        yield event


class CloudWatchExecutionLog:
    """A deployed state machine's log group, read with boto3 CloudWatch Logs (filter_log_events)."""

    def __init__(self, logs_client: Any, log_group: str, *, hours: float = 24.0) -> None:
        self.client = logs_client
        self.log_group = log_group
        self.hours = hours

    def events(self, pattern: str | None = None) -> Iterator[dict[str, Any]]:
        """Events of the last `hours`; with `pattern`, only those that contain it (narrowed
        server-side by a quoted-term filter pattern)."""
        start = int((dt.datetime.now(dt.timezone.utc) - dt.timedelta(hours=self.hours)).timestamp() * 1000)
        kwargs: dict[str, Any] = {"logGroupName": self.log_group, "startTime": start}
        if pattern:
            kwargs["filterPattern"] = '"' + pattern.replace('"', "") + '"'
        for page in self.client.get_paginator("filter_log_events").paginate(**kwargs):
            for item in page.get("events", []):
                try:
                    event = json.loads(item["message"])
                except ValueError:
                    continue
                if isinstance(event, dict) and "execution_arn" in event and "type" in event:
                    yield event


def log_group_of_stack(stack_name: str, cloudformation: Any) -> str:
    """The turn state machine's log group in a deployed stack (the template's TurnStateMachineLogGroup)."""
    paginator = cloudformation.get_paginator("list_stack_resources")
    for page in paginator.paginate(StackName=stack_name):
        for resource in page["StackResourceSummaries"]:
            if resource["LogicalResourceId"] == "TurnStateMachineLogGroup":
                return resource["PhysicalResourceId"]
    raise LookupError(f"stack {stack_name} has no TurnStateMachineLogGroup resource")


def state_machine_of_stack(stack_name: str, cloudformation: Any) -> str | None:
    """The turn state machine's ARN from the stack outputs (None when absent)."""
    stacks = cloudformation.describe_stacks(StackName=stack_name)["Stacks"]
    for output in stacks[0].get("Outputs", []) if stacks else []:
        if output["OutputKey"] == "TurnStateMachineArn":
            return output["OutputValue"]
    return None
