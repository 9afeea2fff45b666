"""`agent`: drive the embedded local stack (ingest, converse, chat, search, serve, accounts, memory)."""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import uuid
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError


class ScriptTurn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    message: Any
    user_id: str | None = None
    roles: list[str] | None = None
    turn_id: str | None = None
    tenant_id: str | None = None
    domain: str | None = None
    locale: str | None = None


class Script(BaseModel):
    """A scripted conversation for `agent converse`."""

    model_config = ConfigDict(extra="forbid")

    thread_id: str = Field(default_factory=lambda: f"thread-{uuid.uuid4().hex[:12]}")
    user_id: str
    tenant_id: str
    roles: list[str] = Field(default_factory=lambda: ["user"])
    domain: str | None = None
    locale: str | None = None
    turns: list[str | ScriptTurn]

    def payloads(self) -> list[dict[str, Any]]:
        out = []
        for turn in self.turns:
            turn = turn if isinstance(turn, ScriptTurn) else ScriptTurn(message=turn)
            out.append({
                "thread_id": self.thread_id,
                "turn_id": turn.turn_id or f"turn-{uuid.uuid4().hex}",
                "user_id": turn.user_id or self.user_id,
                "tenant_id": turn.tenant_id or self.tenant_id,
                "roles": turn.roles or self.roles,
                "domain": turn.domain if turn.domain is not None else self.domain,
                "message": turn.message,
                "locale": turn.locale or self.locale,
            })
        return out


def _home(args: argparse.Namespace) -> Path:
    return Path(args.home or os.environ.get("AGENT_HOME", ".agent")).resolve()


def _prepare_home(args: argparse.Namespace) -> Path:
    home = _home(args)
    home.mkdir(parents=True, exist_ok=True)
    os.environ["AGENT_HOME"] = str(home)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("AGENT_LOG_FILE", str(home / "agent.log"))
    return home


def _fail(message: str, code: int = 2) -> int:
    print(f"agent: {message}", file=sys.stderr)
    return code


# -- commands -----------------------------------------------------------------------------------
def cmd_ingest(args: argparse.Namespace) -> int:
    _prepare_home(args)
    from insurance_agent.retrieval.ingest import delete_file, ingest_directory

    if args.delete:
        removed = delete_file(args.tenant, args.delete)
        print(json.dumps({"deleted": args.delete, "chunks": removed}))
        return 0
    if not args.dir:
        return _fail("ingest needs a DIR or --delete FILE_ID")
    if not Path(args.dir).is_dir():
        return _fail(f"not a folder: {args.dir}")
    from rich.progress import Progress

    with Progress(transient=True, disable=not sys.stderr.isatty()) as progress:
        task = progress.add_task("embedding chunks", total=None)
        report = ingest_directory(
            Path(args.dir), args.tenant, reset=args.reset,
            progress=lambda done, total: progress.update(task, completed=done, total=total),
        )
    for skipped in report.skipped:
        print(f"skipped {skipped.path}: {skipped.reason}", file=sys.stderr)
    for warning in report.warnings:
        print(f"warning {warning.path}: {warning.detail}", file=sys.stderr)
    for flagged in report.flagged:
        print(f"warning {flagged.path}: {', '.join(flagged.flags)} in {flagged.chunks} chunk(s)", file=sys.stderr)
    print(f"ingested {report.files} files, {report.chunks} chunks for tenant {args.tenant} "
          f"in {report.seconds:.1f} s ({len(report.skipped)} skipped)")
    return 0


def _load_scripts(path: str) -> list[Script]:
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    items = data if isinstance(data, list) else [data]
    return [Script.model_validate(item) for item in items]


def cmd_converse(args: argparse.Namespace) -> int:
    home = _prepare_home(args)
    try:
        scripts = _load_scripts(args.script)
    except (OSError, json.JSONDecodeError, ValidationError) as error:
        return _fail(f"bad conversation script {args.script}: {str(error).splitlines()[0]}")
    from agent_local.stack import LocalStack, StackError

    console = None
    if args.pretty:
        from rich.console import Console

        console = Console()
    try:
        with LocalStack(home) as stack:
            for script in scripts:
                if console:
                    console.rule(f"thread {script.thread_id} | tenant {script.tenant_id} | roles {','.join(script.roles)}")
                for payload in script.payloads():
                    reply = stack.run_turn(payload)
                    if console:
                        console.print(f"[bold cyan]{payload['user_id']}>[/] {payload['message']}")
                        _show(reply, console)
                    else:
                        print(json.dumps(reply, ensure_ascii=False), flush=True)
    except StackError as error:
        return _fail(f"the local stack failed: {error}", 1)
    return 0


def _show(reply: dict[str, Any], console) -> None:  # noqa: ANN001 - rich console
    colour = {"answer": "green", "clarify": "yellow", "escalate": "red", "refused": "magenta"}.get(reply["status"], "white")
    extra = f" ({reply['reason']})" if reply.get("reason") else (f" ({reply['error']})" if reply.get("error") else "")
    console.print(f"[bold {colour}]{reply['status']}{extra}[/] {reply['message']}")
    for number, option in enumerate(reply.get("options", []), 1):
        console.print(f"   {number}. {option['label']}  [dim]{option.get('file_id')}[/]")
    for citation in reply.get("citations", []):
        console.print(f"   [dim]source: {citation['title']} ({citation['chunk_id']})[/]")
    trace = reply.get("trace", {})
    console.print(f"   [dim]path: {' > '.join(trace.get('path', []))} | model calls {trace.get('llm_calls', 0)}"
                  f" | retrieval rounds {trace.get('retrieval_rounds', 0)}[/]")


def cmd_chat(args: argparse.Namespace) -> int:
    home = _prepare_home(args)
    from rich.console import Console

    from agent_local.stack import LocalStack, StackError

    console = Console()
    thread_id = args.thread or f"chat-{uuid.uuid4().hex[:10]}"
    roles = [r.strip() for r in args.roles.split(",") if r.strip()]
    with LocalStack(home) as stack:
        console.print(f"[dim]thread {thread_id}; tenant {args.tenant}; user {args.user}; roles {roles}. "
                      "Empty line or Ctrl-D to leave.[/]")
        while True:
            try:
                message = input("you> ")
            except EOFError:
                break
            if not message.strip():
                break
            payload = {"thread_id": thread_id, "turn_id": f"turn-{uuid.uuid4().hex}", "user_id": args.user,
                       "tenant_id": args.tenant, "roles": roles, "domain": args.domain, "message": message}
            try:
                _show(stack.run_turn(payload), console)
            except StackError as error:
                return _fail(f"the local stack failed: {error}", 1)
    return 0


def cmd_search(args: argparse.Namespace) -> int:
    _prepare_home(args)
    from insurance_agent.errors import ConfigurationError, InvalidInputError
    from insurance_agent.retrieval.search import search

    if args.queries and args.query is not None:
        return _fail("give a QUERY or --queries FILE, not both")
    if args.queries:
        try:
            lines = Path(args.queries).read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError) as error:
            return _fail(f"cannot read queries file {args.queries}: {type(error).__name__}")
        queries = [q for q in lines if q.strip()]  # blank lines separate nothing; they are skipped
        if not queries:
            return _fail(f"no queries in {args.queries}")
    elif args.query is not None:
        queries = [args.query]  # an empty QUERY is reported by search() like any other invalid query
    else:
        return _fail("search needs a QUERY or --queries FILE")
    roles = [r.strip() for r in args.roles.split(",") if r.strip()]
    status = 0
    for query in queries:
        try:
            hits = search(query, tenant_id=args.tenant, roles=roles, domain=args.domain, k=args.k)
        except ConfigurationError as error:
            # No index is not "no hits": stop, say so, exit non-zero.
            return _fail(f"{error}", 1)
        except InvalidInputError as error:
            # One line per query either way, so that output lines stay aligned with the input.
            print(json.dumps({"query": query, "error": str(error)}, ensure_ascii=False), flush=True)
            status = 2
            continue
        print(json.dumps({"query": query, "hits": [
            {"chunk_id": h.chunk_id, "file_id": h.file_id, "title": h.title, "score": round(h.score, 4)} for h in hits
        ]}, ensure_ascii=False), flush=True)
    return status


def cmd_serve(args: argparse.Namespace) -> int:
    home = _prepare_home(args)
    from agent_local.stack import LocalStack

    from agent_local.ui import UiServer

    with LocalStack(home) as stack:
        ui = UiServer(home).start()  # the turns page: recent executions and the graph of each
        print(json.dumps({"endpoint_url": stack.endpoint, "state_machine_arn": stack.state_machine_arn,
                          "region": "us-east-1", "ui": ui.url, "note": "create the stepfunctions client with "
                          "Config(inject_host_prefix=False) when endpoint_url is set"}), flush=True)
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            pass
    return 0


def cmd_accounts(args: argparse.Namespace) -> int:
    home = _prepare_home(args)
    from insurance_agent.store.accounts import DynamoAccountsSource, PolicyRecord

    from agent_local.stack import LocalStack

    try:
        records = [PolicyRecord.model_validate(r) for r in json.loads(Path(args.file).read_text(encoding="utf-8"))]
    except (OSError, json.JSONDecodeError, ValidationError, TypeError) as error:
        return _fail(f"bad accounts file {args.file}: {str(error).splitlines()[0]}")
    with LocalStack(home):
        count = DynamoAccountsSource().load(records)
    print(f"loaded {count} policies")
    return 0


def cmd_memory(args: argparse.Namespace) -> int:
    home = _prepare_home(args)
    from insurance_agent.store.profiles import get_profile

    from agent_local.stack import LocalStack

    with LocalStack(home):
        profile = get_profile(args.tenant, args.user)
    print(json.dumps(profile.public(), ensure_ascii=False))
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="agent", description=__doc__)
    parser.add_argument("--home", help="local data folder (default $AGENT_HOME or ./.agent)")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("ingest", help="load .md/.txt documents of a folder into the chunk store")
    p.add_argument("dir", nargs="?")
    p.add_argument("--tenant", required=True)
    p.add_argument("--reset", action="store_true", help="remove the tenant's chunks first")
    p.add_argument("--delete", metavar="FILE_ID", help="remove one document's chunks instead")
    p.set_defaults(func=cmd_ingest)

    p = sub.add_parser("converse", help="run a scripted conversation; one JSON line per turn")
    p.add_argument("script")
    p.add_argument("--pretty", action="store_true", help="readable output instead of JSON lines")
    p.set_defaults(func=cmd_converse)

    p = sub.add_parser("chat", help="interactive conversation on the local stack")
    p.add_argument("--tenant", required=True)
    p.add_argument("--user", required=True)
    p.add_argument("--roles", default="user")
    p.add_argument("--domain")
    p.add_argument("--thread")
    p.set_defaults(func=cmd_chat)

    p = sub.add_parser("search", help="query the chunk store with the retrieve node's pipeline")
    p.add_argument("query", nargs="?")
    p.add_argument("--tenant", required=True)
    p.add_argument("--roles", default="user")
    p.add_argument("--domain")
    p.add_argument("--k", type=int, default=None)
    p.add_argument("--queries", metavar="FILE", help="one query per line")
    p.set_defaults(func=cmd_search)

    p = sub.add_parser("serve", help="serve local AWS endpoints for a backend's own boto3 client")
    p.set_defaults(func=cmd_serve)

    from agent_local import trace

    trace.add_parser(sub, _prepare_home)

    p = sub.add_parser("accounts", help="the account tool's local policy table")
    accounts = p.add_subparsers(dest="action", required=True)
    load = accounts.add_parser("load", help="load policy records from a JSON file")
    load.add_argument("file")
    load.set_defaults(func=cmd_accounts)

    p = sub.add_parser("memory", help="print a user's long-term profile")
    p.add_argument("--user", required=True)
    p.add_argument("--tenant", required=True)
    p.set_defaults(func=cmd_memory)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
