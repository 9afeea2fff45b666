"""The one reader of execution log events (CloudWatch Logs shape, see execution_log): which turns ran,
and for one turn the graph of the ASL with the path taken, each state's duration and retries, the
route decisions of Choice states, and the error and cause where a Task failed.

The same functions serve `agent trace` (text), the local page (JSON for the SVG) and a deployed
stack's log group; nothing here knows where the events came from.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from agent_local.template import REPO_ROOT, load_template, state_machine

_ENTERED = re.compile(r"^(\w+?)StateEntered$")
_EXITED = re.compile(r"^(\w+?)StateExited$")
_SCHEDULED = {"LambdaFunctionScheduled", "TaskScheduled", "ActivityScheduled"}
_FAILED = {
    "LambdaFunctionFailed", "LambdaFunctionTimedOut", "LambdaFunctionStartFailed", "LambdaFunctionScheduleFailed",
    "TaskFailed", "TaskTimedOut", "TaskStartFailed", "TaskSubmitFailed", "ActivityFailed", "ActivityTimedOut",
}
_EXECUTION_END = {
    "ExecutionSucceeded": "SUCCEEDED", "ExecutionFailed": "FAILED",
    "ExecutionTimedOut": "TIMED_OUT", "ExecutionAborted": "ABORTED",
}


class TraceError(LookupError):
    """No execution matches what was asked for."""


# -- the ASL definition ----------------------------------------------------------------------------
def local_definition() -> dict[str, Any]:
    """The ASL file of this repository (substitutions do not change the graph's shape)."""
    _, resource = state_machine(load_template())
    return json.loads((REPO_ROOT / resource["Properties"]["DefinitionUri"]).read_text(encoding="utf-8"))


@dataclass
class Edge:
    source: str
    target: str
    kind: str  # next | choice | default | catch
    label: str = ""


def edges_of(definition: dict[str, Any]) -> list[Edge]:
    out: list[Edge] = []
    for name, state in definition["States"].items():
        if state.get("Next"):
            out.append(Edge(name, state["Next"], "next"))
        for rule in state.get("Choices", []):
            out.append(Edge(name, rule["Next"], "choice", describe_rule(rule)))
        if state.get("Default"):
            out.append(Edge(name, state["Default"], "default", "default"))
        for catch in state.get("Catch", []):
            out.append(Edge(name, catch["Next"], "catch", "catch " + ",".join(catch.get("ErrorEquals", []))))
    return out


# -- Choice rules: described, and evaluated against the state's input --------------------------------
_MISSING = object()


def _path(data: Any, path: str) -> Any:
    if path == "$":
        return data
    value = data
    for part in path.removeprefix("$.").split("."):
        if not isinstance(value, dict) or part not in value:
            return _MISSING
        value = value[part]
    return value


_COMPARISONS = {
    "Equals": lambda a, b: a == b, "LessThan": lambda a, b: a < b, "GreaterThan": lambda a, b: a > b,
    "LessThanEquals": lambda a, b: a <= b, "GreaterThanEquals": lambda a, b: a >= b,
}
_SYMBOLS = {"Equals": "==", "LessThan": "<", "GreaterThan": ">", "LessThanEquals": "<=", "GreaterThanEquals": ">="}
_KIND = re.compile(r"^(String|Numeric|Boolean|Timestamp)(Equals|LessThan|GreaterThan|LessThanEquals|GreaterThanEquals)(Path)?$")


def describe_rule(rule: dict[str, Any]) -> str:
    if "And" in rule:
        return " and ".join(f"({describe_rule(r)})" for r in rule["And"])
    if "Or" in rule:
        return " or ".join(f"({describe_rule(r)})" for r in rule["Or"])
    if "Not" in rule:
        return f"not ({describe_rule(rule['Not'])})"
    variable = rule.get("Variable", "?")
    for key, value in rule.items():
        if key in ("Variable", "Next"):
            continue
        match = _KIND.match(key)
        if match:
            operand = value if match.group(3) else json.dumps(value, ensure_ascii=False)
            return f"{variable} {_SYMBOLS[match.group(2)]} {operand}"
        if key == "IsPresent":
            return f"{variable} {'is present' if value else 'is absent'}"
        if key == "IsNull":
            return f"{variable} {'is null' if value else 'is not null'}"
        return f"{variable} {key} {value}"
    return variable


def evaluate_rule(rule: dict[str, Any], data: Any) -> bool | None:
    """Whether `rule` matches `data`; None when an operator is not one this reader knows."""
    if "And" in rule:
        results = [evaluate_rule(r, data) for r in rule["And"]]
        return None if None in results else all(results)
    if "Or" in rule:
        results = [evaluate_rule(r, data) for r in rule["Or"]]
        return True if True in results else (None if None in results else False)
    if "Not" in rule:
        inner = evaluate_rule(rule["Not"], data)
        return None if inner is None else not inner
    value = _path(data, rule.get("Variable", "$"))
    for key, operand in rule.items():
        if key in ("Variable", "Next"):
            continue
        if key == "IsPresent":
            return (value is not _MISSING) == operand
        if key == "IsNull":
            return (value is None) == operand
        match = _KIND.match(key)
        if not match:
            return None
        if match.group(3):
            operand = _path(data, operand)
        kind = match.group(1)
        expected = {"String": str, "Numeric": (int, float), "Boolean": bool, "Timestamp": str}[kind]
        if value is _MISSING or operand is _MISSING or not isinstance(value, expected):
            return False
        if kind == "Numeric" and isinstance(value, bool):
            return False
        try:
            return _COMPARISONS[match.group(2)](value, operand)
        except TypeError:
            return False
    return None


# -- one execution from its events ----------------------------------------------------------------------
@dataclass
class StateVisit:
    name: str
    type: str
    entered_ms: int
    exited_ms: int | None = None
    attempts: int = 0
    errors: list[dict[str, str]] = field(default_factory=list)
    next: str | None = None
    decision: str | None = None  # Choice: the rule that matched, or "default"
    input: Any = None
    output: Any = None

    @property
    def retries(self) -> int:
        return max(self.attempts - 1, 0)

    @property
    def failed(self) -> bool:
        """The Task's last attempt failed (its Catch, if any, took over)."""
        return bool(self.errors) and len(self.errors) >= self.attempts

    def duration_ms(self, until: int | None) -> int | None:
        end = self.exited_ms if self.exited_ms is not None else until
        return None if end is None else max(end - self.entered_ms, 0)


@dataclass
class ExecutionTrace:
    execution_arn: str
    status: str = "RUNNING"
    start_ms: int = 0
    end_ms: int | None = None
    input: Any = None
    output: Any = None
    error: str | None = None
    cause: str | None = None
    visits: list[StateVisit] = field(default_factory=list)

    def _input_field(self, key: str) -> str:
        return str(self.input.get(key, "")) if isinstance(self.input, dict) else ""

    @property
    def turn_id(self) -> str:
        return self._input_field("turn_id")

    @property
    def thread_id(self) -> str:
        return self._input_field("thread_id")

    @property
    def tenant_id(self) -> str:
        return self._input_field("tenant_id")

    @property
    def reply(self) -> dict[str, Any]:
        return self.output if isinstance(self.output, dict) else {}

    @property
    def duration_ms(self) -> int | None:
        return None if self.end_ms is None else self.end_ms - self.start_ms

    def summary(self) -> dict[str, Any]:
        reply = self.reply
        return {
            "execution_arn": self.execution_arn, "turn_id": self.turn_id, "thread_id": self.thread_id,
            "tenant_id": self.tenant_id, "status": self.status, "start_ms": self.start_ms,
            "duration_ms": self.duration_ms, "reply_status": reply.get("status"), "reason": reply.get("reason"),
            "states": len(self.visits), "failed_states": [v.name for v in self.visits if v.errors],
        }


def _json(text: Any) -> Any:
    if not isinstance(text, str):
        return text
    try:
        return json.loads(text)
    except ValueError:
        return text


def parse_execution(events: Iterable[dict[str, Any]], definition: dict[str, Any] | None = None) -> ExecutionTrace:
    """Fold one execution's events (any order) into the states it visited."""
    ordered = sorted(events, key=lambda e: int(e["id"]))
    if not ordered:
        raise TraceError("no events")
    trace = ExecutionTrace(execution_arn=ordered[0]["execution_arn"])
    trace.start_ms = int(ordered[0]["event_timestamp"])
    current: StateVisit | None = None
    for event in ordered:
        kind, details = event["type"], event.get("details") or {}
        at = int(event["event_timestamp"])
        entered, exited = _ENTERED.match(kind), _EXITED.match(kind)
        if kind == "ExecutionStarted":
            trace.start_ms, trace.input = at, _json(details.get("input"))
        elif entered:
            if current is not None and current.next is None:
                current.next = details.get("name")
            current = StateVisit(name=details.get("name", "?"), type=entered.group(1), entered_ms=at,
                                 input=_json(details.get("input")))
            trace.visits.append(current)
        elif exited and current is not None:
            current.exited_ms, current.output = at, _json(details.get("output"))
        elif kind in _SCHEDULED and current is not None:
            current.attempts += 1
        elif kind in _FAILED and current is not None:
            current.errors.append({"error": str(details.get("error", kind)), "cause": str(details.get("cause", ""))})
        elif kind in _EXECUTION_END:
            trace.status, trace.end_ms = _EXECUTION_END[kind], at
            trace.output = _json(details.get("output"))
            trace.error, trace.cause = details.get("error"), details.get("cause")
    if definition:
        _decide_choices(trace, definition)
    return trace


def _decide_choices(trace: ExecutionTrace, definition: dict[str, Any]) -> None:
    for visit in trace.visits:
        state = definition["States"].get(visit.name, {})
        if visit.type != "Choice" or visit.next is None:
            continue
        rules = state.get("Choices", [])
        if isinstance(visit.input, dict):
            # The first matching rule wins, as in the interpreter.
            matched = next((r for r in rules if evaluate_rule(r, visit.input)), None)
            if matched is not None and matched.get("Next") == visit.next:
                visit.decision = describe_rule(matched)
                continue
            if matched is None and state.get("Default") == visit.next:
                visit.decision = "default"
                continue
        # No execution data (or an operator this reader does not evaluate): name the rule by its target.
        candidates = [r for r in rules if r.get("Next") == visit.next]
        if candidates:
            visit.decision = " | ".join(describe_rule(r) for r in candidates)
        else:
            visit.decision = "default"


def group_executions(events: Iterable[dict[str, Any]], definition: dict[str, Any] | None = None) -> list[ExecutionTrace]:
    """Every execution in `events`, newest first."""
    by_arn: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for event in events:
        by_arn[event["execution_arn"]].append(event)
    traces = [parse_execution(items, definition) for items in by_arn.values()]
    return sorted(traces, key=lambda t: t.start_ms, reverse=True)


def _arn_key(arn: str) -> str:
    # Locally the ARN reads `:execution:`; an EXPRESS execution on AWS reads `:express:`.
    return re.sub(r":(execution|express):", ":", arn)


def find_executions(source: Any, key: str, definition: dict[str, Any] | None = None) -> list[ExecutionTrace]:
    """Executions whose ARN, execution name, turn_id or thread_id is `key` (oldest first).

    `source.events(pattern)` yields the events whose text contains `pattern` (a local file or a
    CloudWatch quoted-term filter); the match is then checked on the parsed fields.
    """
    key = key.strip()
    if not key:
        raise TraceError("give a turn_id, thread_id or execution ARN")
    # An ARN is searched by what follows its `:execution:` / `:express:` part, which both spellings share.
    pattern = re.split(r":(?:execution|express):", key, maxsplit=1)[-1] if key.startswith("arn:") else key
    candidates = group_executions(source.events(pattern), None)
    matched = [
        t.execution_arn for t in candidates
        if key in (t.turn_id, t.thread_id) or _arn_key(t.execution_arn) == _arn_key(key)
        or t.execution_arn.rsplit(":", 2)[-1] == key or t.execution_arn.endswith(":" + key)
    ]
    if not matched:
        raise TraceError(f"no execution with turn_id, thread_id or ARN {key!r} in the log")
    traces = [parse_execution([e for e in source.events(arn) if e["execution_arn"] == arn], definition)
              for arn in dict.fromkeys(matched)]
    return sorted(traces, key=lambda t: t.start_ms)


# -- text ----------------------------------------------------------------------------------------------
def _ms(value: int | None) -> str:
    if value is None:
        return "-"
    return f"{value} ms" if value < 1000 else f"{value / 1000:.2f} s"


def _first_line(cause: str, limit: int = 160) -> str:
    """The readable part of an error cause: a Lambda error's message (its type is shown beside it)."""
    data = _json(cause)
    if isinstance(data, dict) and ("errorMessage" in data or "errorType" in data):
        text = str(data.get("errorMessage") or data.get("errorType"))
    else:
        text = str(cause)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def render_text(trace: ExecutionTrace, definition: dict[str, Any]) -> str:
    """The execution as text: a header, the path with durations/retries/decisions/errors, then every
    state of the ASL with the edges it has, the taken ones marked."""
    lines = [
        f"execution {trace.execution_arn}",
        f"  turn {trace.turn_id or '-'}  thread {trace.thread_id or '-'}  tenant {trace.tenant_id or '-'}  "
        f"status {trace.status}  duration {_ms(trace.duration_ms)}",
    ]
    reply = trace.reply
    if reply:
        extra = f" ({reply.get('reason') or reply.get('error')})" if reply.get("reason") or reply.get("error") else ""
        lines.append(f"  reply {reply.get('status')}{extra}")
    if trace.error:
        lines.append(f"  error {trace.error}: {_first_line(trace.cause or '')}")
    lines.append("")
    lines.append("path taken:")
    width = max((len(v.name) for v in trace.visits), default=10)
    for number, visit in enumerate(trace.visits, 1):
        until = trace.visits[number].entered_ms if number < len(trace.visits) else trace.end_ms
        row = f"  {number:>3}. {visit.name:<{width}}  {visit.type:<6} {_ms(visit.duration_ms(until)):>9}"
        if visit.retries:
            row += f"  retries {visit.retries}"
        if visit.decision:
            row += f"  -> {visit.next} [{visit.decision}]"
        lines.append(row)
        for error in visit.errors:
            lines.append(f"{'':>9}{'FAILED' if visit.failed and error is visit.errors[-1] else 'retried'} "
                         f"{error['error']}: {_first_line(error['cause'])}")
        if visit.failed and visit.next:
            lines.append(f"{'':>9}caught -> {visit.next}")
    lines.append("")
    lines.append("graph (* visited, . not visited; => edge taken):")
    visited = {v.name for v in trace.visits}
    taken = {(v.name, v.next) for v in trace.visits if v.next}
    out_edges: dict[str, list[Edge]] = defaultdict(list)
    for edge in edges_of(definition):
        out_edges[edge.source].append(edge)
    for name in order_states(definition):
        state = definition["States"][name]
        mark = "*" if name in visited else "."
        lines.append(f"  {mark} {name} ({state['Type']}){'  end' if state.get('End') else ''}")
        for edge in out_edges.get(name, []):
            arrow = "=>" if (name, edge.target) in taken else "->"
            label = f" [{edge.label}]" if edge.label else ""
            lines.append(f"      {arrow} {edge.target}{label}")
    return "\n".join(lines)


def render_list(traces: list[ExecutionTrace]) -> str:
    rows = []
    for trace in traces:
        reply = trace.reply
        outcome = reply.get("status") or trace.status
        if reply.get("reason") or reply.get("error"):
            outcome += f" ({reply.get('reason') or reply.get('error')})"
        failed = [v.name for v in trace.visits if v.failed]
        retried = [v.name for v in trace.visits if v.retries]
        notes = (f"  failed: {','.join(failed)}" if failed else "") + (f"  retried: {','.join(retried)}" if retried else "")
        rows.append(f"{trace.turn_id or '-':<40} {trace.thread_id or '-':<24} {outcome:<32} "
                    f"{_ms(trace.duration_ms):>9}  {trace.execution_arn}{notes}")
    return "\n".join(rows)


# -- layout for the page -----------------------------------------------------------------------------
def order_states(definition: dict[str, Any]) -> list[str]:
    """States in breadth-first order from StartAt over the normal edges; states reached only by a
    Catch (the error path) come last."""
    seen: list[str] = []
    queue = [definition["StartAt"]]
    targets: dict[str, list[str]] = defaultdict(list)
    for edge in edges_of(definition):
        if edge.kind != "catch":
            targets[edge.source].append(edge.target)
    while queue:
        name = queue.pop(0)
        if name in seen or name not in definition["States"]:
            continue
        seen.append(name)
        queue.extend(targets[name])
    rest = [n for n in definition["States"] if n not in seen]
    return seen + order_states({"StartAt": rest[0], "States": {n: definition["States"][n] for n in rest}}) if rest else seen


def layout(definition: dict[str, Any]) -> dict[str, dict[str, float]]:
    """Layered drawing coordinates: rank = longest path from StartAt ignoring loop edges (and catch
    edges, which would pull every Task's target to the bottom), order within a rank by barycentre."""
    states = definition["States"]
    # Depth-first over the main route first (Next, then a Choice's Default) so that the edges marked
    # as loops are the ones that really go back (another retrieval round, a regeneration).
    priority = {"next": 0, "default": 1, "choice": 2}
    edges = sorted((e for e in edges_of(definition) if e.kind != "catch"), key=lambda e: priority[e.kind])
    targets: dict[str, list[str]] = defaultdict(list)
    for edge in edges:
        targets[edge.source].append(edge.target)
    # Loop edges are the ones that return to a state on the current depth-first path.
    back: set[tuple[str, str]] = set()
    state_of: dict[str, int] = {}

    def visit(name: str) -> None:
        state_of[name] = 1
        for target in targets[name]:
            if state_of.get(target) == 1:
                back.add((name, target))
            elif target not in state_of:
                visit(target)
        state_of[name] = 2

    visit(definition["StartAt"])
    for name in states:
        if name not in state_of:
            visit(name)
    forward = [(e.source, e.target) for e in edges if (e.source, e.target) not in back]
    # Catch targets that nothing else reaches still need a rank: below their deepest source.
    forward += [(e.source, e.target) for e in edges_of(definition) if e.kind == "catch"
                and not any(t == e.target for _, t in forward)]
    rank = {definition["StartAt"]: 0}
    order = order_states(definition)
    for _ in range(len(states)):
        changed = False
        for source, target in forward:
            if source in rank and rank.get(target, -1) < rank[source] + 1:
                rank[target] = rank[source] + 1
                changed = True
        if not changed:
            break
    for name in order:
        rank.setdefault(name, 0)
    layers: dict[int, list[str]] = defaultdict(list)
    for name in order:
        layers[rank[name]].append(name)
    parents: dict[str, list[str]] = defaultdict(list)
    for source, target in forward:
        parents[target].append(source)
    position = {name: float(i) for r in layers.values() for i, name in enumerate(r)}
    for _ in range(4):
        for r in sorted(layers):
            if r == 0:
                continue
            layers[r].sort(key=lambda n: sum(position[p] for p in parents[n]) / len(parents[n]) if parents[n] else position[n])
            for i, name in enumerate(layers[r]):
                position[name] = float(i)
    widest = max(len(names) for names in layers.values())
    coords = {}
    for r, names in layers.items():
        offset = (widest - len(names)) / 2
        for i, name in enumerate(names):
            coords[name] = {"x": offset + i, "y": float(r)}
    return coords


def graph_json(trace: ExecutionTrace, definition: dict[str, Any]) -> dict[str, Any]:
    """What the page draws: every state with its place and what happened there, every edge."""
    coords = layout(definition)
    by_name: dict[str, list[tuple[int, StateVisit]]] = defaultdict(list)
    for index, visit in enumerate(trace.visits):
        by_name[visit.name].append((index, visit))
    nodes = []
    for name, state in definition["States"].items():
        visits = by_name.get(name, [])
        total = 0
        for index, visit in visits:
            until = trace.visits[index + 1].entered_ms if index + 1 < len(trace.visits) else trace.end_ms
            total += visit.duration_ms(until) or 0
        errors = [e for _, v in visits for e in v.errors]
        nodes.append({
            "name": name, "type": state["Type"], "x": coords[name]["x"], "y": coords[name]["y"],
            "visited": bool(visits), "visits": len(visits), "duration_ms": total if visits else None,
            "retries": sum(v.retries for _, v in visits), "failed": any(v.failed for _, v in visits),
            "errors": [{"error": e["error"], "cause": _first_line(e["cause"], 400)} for e in errors],
            "decisions": [{"next": v.next, "rule": v.decision} for _, v in visits if v.decision],
            "step": [i + 1 for i, _ in visits],
        })
    taken = {(v.name, v.next) for v in trace.visits if v.next}
    edges = [asdict(e) | {"taken": (e.source, e.target) in taken} for e in edges_of(definition)]
    return {"execution": trace.summary() | {"error": trace.error, "cause": _first_line(trace.cause or "", 400)
                                            if trace.cause else None},
            "path": [v.name for v in trace.visits], "nodes": nodes, "edges": edges}


def printable(text: str) -> str:
    """`text` with lone surrogates (kept from refused, invalid input) as `\\udxxx` escapes: valid inside
    JSON strings, and printable on any UTF-8 stream."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def definition_from(path: str | Path | None) -> dict[str, Any]:
    return json.loads(Path(path).read_text(encoding="utf-8")) if path else local_definition()


# -- `agent trace` ---------------------------------------------------------------------------------
def add_parser(sub: Any, home_of: Any) -> None:
    """Register `agent trace` on the CLI's subparsers; `home_of(args)` gives the local data folder."""
    p = sub.add_parser(
        "trace", help="show a turn's graph (path, durations, retries, route decisions, errors) from the execution log",
        description="Find executions by turn_id, thread_id or execution ARN in the local execution log, or in a "
                    "deployed stack's log group (--stack / --log-group, read with boto3 CloudWatch Logs).",
    )
    p.add_argument("key", nargs="?", help="turn_id, thread_id or execution ARN (omit with --list)")
    p.add_argument("--list", action="store_true", help="list recent turns instead")
    p.add_argument("--limit", type=int, default=20, help="how many turns --list shows (default 20)")
    p.add_argument("--json", action="store_true", help="the graph as JSON (what the local page draws)")
    source = p.add_mutually_exclusive_group()
    source.add_argument("--stack", help="a deployed stack: its state machine's log group comes from CloudFormation")
    source.add_argument("--log-group", help="a CloudWatch Logs group that a state machine logs to")
    p.add_argument("--region", help="AWS region of --stack / --log-group (default: the boto3 default)")
    p.add_argument("--hours", type=float, default=24.0, help="how far back to read CloudWatch Logs (default 24)")
    p.add_argument("--definition", help="ASL file to draw (default: the deployed one with --stack, else this repository's)")
    p.set_defaults(func=lambda args: command(args, home_of(args)))


def _cloud_source(args: Any) -> tuple[Any, dict[str, Any] | None]:
    import boto3

    session = boto3.session.Session(region_name=args.region) if args.region else boto3.session.Session()
    definition = None
    if args.stack:
        from agent_local.execution_log import log_group_of_stack, state_machine_of_stack

        cloudformation = session.client("cloudformation")
        group = log_group_of_stack(args.stack, cloudformation)
        arn = state_machine_of_stack(args.stack, cloudformation)
        if arn and not args.definition:
            described = session.client("stepfunctions").describe_state_machine(stateMachineArn=arn)
            definition = json.loads(described["definition"])
    else:
        group = args.log_group
    from agent_local.execution_log import CloudWatchExecutionLog

    return CloudWatchExecutionLog(session.client("logs"), group, hours=args.hours), definition


def command(args: Any, home: Path) -> int:
    import sys

    from botocore.exceptions import BotoCoreError, ClientError

    from agent_local.execution_log import LocalExecutionLog

    if not args.list and not args.key:
        print("agent: trace needs a turn_id, thread_id or execution ARN (or --list)", file=sys.stderr)
        return 2
    try:
        if args.stack or args.log_group:
            source, definition = _cloud_source(args)
        else:
            source, definition = LocalExecutionLog(home), None
        definition = definition or definition_from(args.definition)
        if args.list:
            traces = group_executions(source.events(), None)[: args.limit]
            if args.json:
                print(printable(json.dumps([t.summary() for t in traces], ensure_ascii=False)))
            else:
                print(printable(render_list(traces)) if traces else "no executions in the log")
            return 0
        traces = find_executions(source, args.key, definition)
    except TraceError as error:
        print(f"agent: {error}", file=sys.stderr)
        return 1
    except LookupError as error:  # a stack without the log group
        print(f"agent: {error}", file=sys.stderr)
        return 2
    except (BotoCoreError, ClientError) as error:
        print(f"agent: could not read the execution log from AWS: {error}", file=sys.stderr)
        return 2
    except (OSError, ValueError) as error:
        print(f"agent: cannot read the state machine definition: {error}", file=sys.stderr)
        return 2
    try:
        if args.json:
            print(printable(json.dumps([graph_json(t, definition) for t in traces], ensure_ascii=False)))
        else:
            print(printable("\n\n".join(render_text(t, definition) for t in traces)))
    except BrokenPipeError:  # `agent trace ... | head`: the reader has what it wanted
        sys.stderr.close()
    return 0
