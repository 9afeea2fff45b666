"""`agent`: drive the embedded local stack (ingest, converse, chat, search, serve, accounts, memory, eval).

Every command works on $AGENT_HOME (default ./.agent). One process at a time owns it; while one runs
the stack (`agent serve`, or a `chat` / `converse` in progress), the other commands send their work
to that process instead of opening the store themselves (see agent_local.service).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

DEFAULT_PORT = 8723
KNOWN_ROLES = ("user", "officer", "admin")
EXIT_SKIPPED = 3  # `agent ingest`: the readable files were ingested, some files were skipped
# What `agent ingest` (and `agent eval`'s DOCS) reads: insurance_ingest's SUFFIXES, as users name them.
DOCUMENT_FORMATS = ".md, .txt, .pdf, .docx, .html"


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

    def payloads(self, run_suffix: str = "") -> list[dict[str, Any]]:
        out = []
        for turn in self.turns:
            turn = turn if isinstance(turn, ScriptTurn) else ScriptTurn(message=turn)
            out.append({
                "thread_id": self.thread_id + run_suffix,
                "turn_id": (turn.turn_id + run_suffix) if turn.turn_id else f"turn-{uuid.uuid4().hex}",
                "user_id": turn.user_id or self.user_id,
                "tenant_id": turn.tenant_id or self.tenant_id,
                "roles": turn.roles or self.roles,
                "domain": turn.domain if turn.domain is not None else self.domain,
                "message": turn.message,
                "locale": turn.locale or self.locale,
            })
        return out


class CliError(Exception):
    """A message for the user; exits with `code`."""

    def __init__(self, message: str, code: int = 2) -> None:
        super().__init__(message)
        self.code = code


def _home(args: argparse.Namespace) -> Path:
    return Path(args.home or os.environ.get("AGENT_HOME", ".agent")).resolve()


def _prepare_home(args: argparse.Namespace) -> Path:
    home = _home(args)
    home.mkdir(parents=True, exist_ok=True)
    os.environ["AGENT_HOME"] = str(home)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("AGENT_LOG_FILE", str(home / "logs" / "agent.log"))
    (home / "logs").mkdir(exist_ok=True)
    return home


def _fail(message: str, code: int = 2) -> int:
    print(f"agent: {message}", file=sys.stderr)
    return code


def _note(message: str) -> None:
    print(f"agent: {message}", file=sys.stderr, flush=True)


def _roles(text: str) -> list[str]:
    roles = [r.strip() for r in text.split(",") if r.strip()]
    unknown = [r for r in roles if r not in KNOWN_ROLES]
    if unknown or not roles:
        shown = ", ".join(repr(r) for r in unknown) or "nothing"
        raise CliError(f"--roles: {shown} is not a role (allowed: {', '.join(KNOWN_ROLES)}; "
                       "several are separated by commas, e.g. --roles user,officer)")
    return roles


def _overrides(args: argparse.Namespace) -> dict[str, str]:
    from agent_local.template import load_template, parse_overrides, validate_overrides

    try:
        return validate_overrides(load_template(), parse_overrides(getattr(args, "parameter_overrides", None) or []))
    except ValueError as error:
        raise CliError(str(error)) from None


def _check_model_settings(args: argparse.Namespace) -> None:
    """Before any turn: refuse a model provider that cannot run one, naming what to set (agent_local/preflight.py)."""
    # The check imports the providers, and with them the service's logger, which picks its output when
    # first imported: a log file must be set by then, or every node's log line lands on stdout (which
    # `converse` keeps for JSON replies). eval leaves the user's home alone and deletes its own after
    # the run, logs included.
    if args.command == "eval":
        home = _home(args)
        os.environ.setdefault("AGENT_LOG_FILE", os.devnull)
    else:
        home = _prepare_home(args)
    from agent_local.preflight import model_settings_problem
    from agent_local.service import running_service

    if args.command != "eval" and running_service(home) is not None:
        return  # the turns run on that stack, with the parameters it was checked with when it started
    problem = model_settings_problem(home, _overrides(args))
    if problem:
        raise CliError(problem)


# -- where the work runs: in this process, or in the process that serves $AGENT_HOME --------------
class Backend:
    """Runs turns and operations either in-process (owning $AGENT_HOME) or through the running service."""

    def __init__(self, *, stack: Any = None, service: Any = None) -> None:
        self.stack = stack
        self.service = service

    @property
    def remote(self) -> bool:
        return self.service is not None

    def run_turn(self, payload: dict[str, Any]) -> dict[str, Any]:
        return (self.service or self.stack).run_turn(payload)

    def call(self, operation: str, payload: dict[str, Any], **local_only: Any) -> dict[str, Any]:
        from agent_local.operations import OPERATIONS

        if self.service is not None:
            return self.service.call(operation, payload)
        result = OPERATIONS[operation](**payload, **local_only)
        if self.stack is not None and self.stack.persist:
            self.stack.save()
        return result


@contextlib.contextmanager
def _open(args: argparse.Namespace, command: str, *, stack: bool, port: int = 0) -> Iterator[Backend]:
    """Claim $AGENT_HOME for this command, or route through the process that serves it.

    With `stack`, the in-process owner starts the local stack and publishes its endpoint so that
    other commands can use it while this one runs.
    """
    from agent_local.service import HomeLock, claim

    home = _prepare_home(args)
    overrides = _overrides(args)
    route = claim(home, command)
    if not isinstance(route, HomeLock):
        # On stderr: stdout stays the command's own output (search's JSON lines), whichever process ran it.
        _note(f"using the local stack of {route.describe()}")
        if overrides:
            _note("--parameter-overrides ignored: the running stack keeps the parameters it was started with")
        yield Backend(service=route)
        return
    try:
        if not stack:
            yield Backend()
            return
        from agent_local.service import API_PREFIX, ApiApp
        from agent_local.stack import LocalStack

        local = LocalStack(home, parameters=overrides, port=port)
        local.start()
        try:
            local.routes[API_PREFIX] = ApiApp(local)
            route.publish({"endpoint_url": local.endpoint, "state_machine_arn": local.state_machine_arn})
            yield Backend(stack=local)
        except KeyboardInterrupt:
            _note("stopping: saving the tables (a turn in progress finishes first) ...")
            raise
        finally:
            route.publish({})
            local.stop()
    finally:
        route.release()


@contextlib.contextmanager
def _progress(text: str) -> Iterator[None]:
    """A spinner on a terminal's stderr, a plain line otherwise; never on stdout."""
    if sys.stderr.isatty():
        from rich.console import Console

        with Console(stderr=True).status(text, spinner="dots"):
            yield
    else:
        print(f"{text}", file=sys.stderr, flush=True)
        yield


# -- commands -----------------------------------------------------------------------------------
def _prepare_first_turn(home: Path) -> None:
    """Embed the triage exemplars into the home once, here, rather than in a first chat's first turn."""
    from agent_local.warmup import prepare_store

    try:
        with _progress("preparing the first turn's model data (once per home) ..."):
            prepare_store(home)
    except Exception as error:  # noqa: BLE001 - only a cache: the first turn builds it otherwise
        _note(f"warning: the exemplar store was not written ({type(error).__name__}); the first turn will build it")


def cmd_ingest(args: argparse.Namespace) -> int:
    if not args.delete and not args.dir:
        return _fail("ingest needs a DIR or --delete FILE_ID")
    if args.dir and not Path(args.dir).is_dir():
        return _fail(f"not a folder: {args.dir}")
    with _open(args, "agent ingest", stack=False) as backend:
        if args.delete:
            print(json.dumps(backend.call("ingest", {"tenant": args.tenant, "delete": args.delete})))
            return 0
        payload = {"tenant": args.tenant, "directory": str(Path(args.dir).resolve()), "reset": args.reset,
                   "sync": args.sync}
        if backend.remote:
            with _progress("ingesting through the running local stack ..."):
                report = backend.call("ingest", payload)
        else:
            from agent_local.display import ingest_progress

            with ingest_progress() as update:
                report = backend.call("ingest", payload, progress=update)
            _prepare_first_turn(_home(args))
    for skipped in report["skipped"]:
        detail = f" ({skipped['detail']})" if skipped.get("detail") else ""
        print(f"skipped {skipped['path']}: {skipped['reason']}{detail}", file=sys.stderr)
    for warning in report.get("warnings", []):
        print(f"warning {warning['path']}: {warning['detail']}", file=sys.stderr)
    for flagged in report.get("flagged", []):
        print(f"warning {flagged['path']}: {', '.join(flagged['flags'])} in {flagged['chunks']} chunk(s)",
              file=sys.stderr)
    counts = ", ".join(f"{len(report.get(key, []))} {key}" for key in ("added", "changed", "removed", "unchanged"))
    print(f"ingested {report['files']} files, {report['chunks']} chunks for tenant {args.tenant} "
          f"in {report['seconds']:.1f} s ({counts}; {len(report['skipped'])} skipped)")
    # The readable files are ingested either way; a script must still see that some were not.
    return EXIT_SKIPPED if report["skipped"] else 0


def cmd_documents(args: argparse.Namespace) -> int:
    with _open(args, "agent documents", stack=False) as backend:
        result = backend.call("documents", {"tenant": args.tenant, "show": args.show})
    if args.show:
        for chunk in result["chunks"]:
            print(json.dumps(chunk, ensure_ascii=False), flush=True)
        return 0
    from agent_local.display import documents_table

    documents = result["documents"]
    if args.json:
        for doc in documents:
            print(json.dumps(doc, ensure_ascii=False))
    elif not documents:
        _note(f"tenant {args.tenant!r} has no documents; ingest some: agent ingest DIR --tenant {args.tenant}")
    else:
        print(documents_table(documents))
    return 0


def _load_scripts(path: str) -> list[Script]:
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    items = data if isinstance(data, list) else [data]
    return [Script.model_validate(item) for item in items]


def cmd_converse(args: argparse.Namespace) -> int:
    try:
        scripts = _load_scripts(args.script)
    except (OSError, json.JSONDecodeError, ValidationError) as error:
        return _fail(f"bad conversation script {args.script}: {str(error).splitlines()[0]}")
    _check_model_settings(args)
    from agent_local.stack import StackError

    # --new-threads: the script's threads are new on every run, so a replay gives the same replies.
    suffix = f"-{uuid.uuid4().hex[:8]}" if args.new_threads else ""
    console = None
    if args.pretty:
        from rich.console import Console

        console = Console()
    with _open(args, "agent converse", stack=True) as backend:
        if backend.stack is not None:
            backend.stack.warm_up()  # the turns wait for it; a later run reads the exemplars it stores
        for script in scripts:
            if console:
                console.rule(f"thread {script.thread_id}{suffix} | tenant {script.tenant_id} | "
                             f"roles {','.join(script.roles)}")
            for payload in script.payloads(suffix):
                try:
                    reply = backend.run_turn(payload)
                except StackError as error:
                    return _fail(f"the local stack failed: {error}", 1)
                if console:
                    console.print(f"[bold cyan]{payload['user_id']}>[/] {payload['message']}")
                    _show(reply, console)
                else:
                    print(json.dumps(reply, ensure_ascii=False), flush=True)
    return 0


def _show(reply: dict[str, Any], console) -> None:  # noqa: ANN001 - rich console
    from rich.markup import escape

    from agent_local.display import reply_text

    colour = {"answer": "green", "clarify": "yellow", "escalate": "red", "refused": "magenta"}.get(reply["status"], "white")
    extra = f" ({reply['reason']})" if reply.get("reason") else (f" ({reply['error']})" if reply.get("error") else "")
    message = reply_text(reply)
    console.print(f"[bold {colour}]{reply['status']}{extra}[/] {escape(message)}")
    # A clarifying question usually lists its options in its text already: list only what it does not.
    for number, option in enumerate(reply.get("options", []), 1):
        if option["label"] not in message:
            console.print(f"   {number}. {escape(option['label'])}  [dim]{option.get('file_id')}[/]")
    for citation in reply.get("citations", []):
        console.print(f"   [dim]source: {escape(citation['title'])} ({citation['chunk_id']})[/]")
    trace = reply.get("trace", {})
    console.print(f"   [dim]path: {' > '.join(trace.get('path', []))} | model calls {trace.get('llm_calls', 0)}"
                  f" | retrieval rounds {trace.get('retrieval_rounds', 0)}[/]")


CHAT_HELP = ("Type a message and press Enter. Commands: /new starts a new thread, /help shows this, "
             "/quit (or Ctrl-D, Ctrl-C) leaves.")


def handoff_hint(reply: dict[str, Any]) -> str | None:
    """What to do after a reply that ends the thread: a hand-off refuses every later turn of its thread."""
    if reply.get("status") == "escalate":
        return ("This thread is now handed to a person, so later messages on it are refused "
                "(thread_handed_off). Type /new to start a new thread.")
    if reply.get("status") == "refused" and reply.get("error") == "thread_handed_off":
        return "This thread was handed to a person and takes no more messages. Type /new to start a new thread."
    return None


def _warn_unknown_tenant(backend: Backend, tenant: str) -> None:
    from agent_local.operations import qdrant_lock_message

    try:
        chunks = backend.call("tenant", {"tenant": tenant})["chunks"]
    except RuntimeError as error:
        _note(f"warning: {qdrant_lock_message(error) or 'cannot read the chunk store'}")
        return
    except Exception as error:  # noqa: BLE001 - a missing or remote store only weakens the warning
        _note(f"warning: cannot count the documents of tenant {tenant!r} ({type(error).__name__})")
        return
    if chunks == 0:
        _note(f"warning: no documents are ingested for tenant {tenant!r}: knowledge questions will escalate. "
              f"Ingest some first: agent ingest DIR --tenant {tenant}")


def cmd_chat(args: argparse.Namespace) -> int:
    roles = _roles(args.roles)
    _check_model_settings(args)
    from rich.console import Console

    from agent_local.stack import StackError

    console = Console(highlight=False)
    with contextlib.ExitStack() as stack:
        with _progress("starting the local stack ..."):
            backend = stack.enter_context(_open(args, "agent chat", stack=True))
        _warn_unknown_tenant(backend, args.tenant)
        if backend.stack is not None:
            # The models load while the user reads the prompt and types; a first turn sent sooner
            # waits for the rest of the warm-up.
            backend.stack.warm_up(tenant=args.tenant, roles=roles)
        thread_id = args.thread or f"chat-{uuid.uuid4().hex[:10]}"
        console.print(f"[dim]thread {thread_id} | tenant {args.tenant} | user {args.user} | roles {','.join(roles)}"
                      f"\n{CHAT_HELP}[/]")
        try:
            import readline  # noqa: F401 - line editing and history for input()
        except ImportError:
            pass
        while True:
            try:
                message = input("you> ")
            except EOFError:
                print(file=sys.stderr)
                return 0
            command = message.strip().lower()
            if not command:
                continue
            if command in ("/quit", "/exit"):
                return 0
            if command == "/help":
                console.print(f"[dim]{CHAT_HELP}[/]")
                continue
            if command == "/new":
                thread_id = f"chat-{uuid.uuid4().hex[:10]}"
                console.print(f"[dim]new thread {thread_id}[/]")
                continue
            payload = {"thread_id": thread_id, "turn_id": f"turn-{uuid.uuid4().hex}", "user_id": args.user,
                       "tenant_id": args.tenant, "roles": roles, "domain": args.domain, "message": message}
            try:
                with _progress("thinking ..."):
                    reply = backend.run_turn(payload)
            except StackError as error:
                return _fail(f"the local stack failed: {error}", 1)
            _show(reply, console)
            if hint := handoff_hint(reply):
                console.print(f"[bold]{hint}[/]")


def cmd_search(args: argparse.Namespace) -> int:
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
    roles = _roles(args.roles)
    with _open(args, "agent search", stack=False) as backend:
        results = backend.call("search", {"queries": queries, "tenant": args.tenant, "roles": roles,
                                          "domain": args.domain, "k": args.k})["results"]
    # One line per query either way, so that output lines stay aligned with the input.
    for result in results:
        print(json.dumps(result, ensure_ascii=False), flush=True)
    return 2 if any("error" in r for r in results) else 0


def cmd_serve(args: argparse.Namespace) -> int:
    from agent_local.service import running_service
    from agent_local.ui import UiApp

    home = _prepare_home(args)
    already = running_service(home)
    if already is not None:
        return _fail(f"{home} is already served by {already.describe()}; other commands use it as it is", 1)
    _check_model_settings(args)
    with _progress("starting the local stack ..."):
        backend_cm = _open(args, "agent serve", stack=True, port=args.port)
        backend = backend_cm.__enter__()
    try:
        if backend.remote:  # another serve won the race to this home
            return _fail(f"{home} is already served by {backend.service.describe()}", 1)
        stack = backend.stack
        stack.warm_up()  # turns are held until it has finished; the first one then finds the models loaded
        stack.routes.update(UiApp(home).routes())  # the turns page, on the stack's own port
        ui_url = f"{stack.endpoint}/ui"
        info = {"endpoint_url": stack.endpoint, "state_machine_arn": stack.state_machine_arn, "region": "us-east-1",
                "port": stack.port, "ui": ui_url, "home": str(home), "settings": stack.effective_environment(),
                "note": "create the stepfunctions client with Config(inject_host_prefix=False)"}
        print(json.dumps(info, ensure_ascii=False), flush=True)
        print(f"agent serve: the local stack of {home} listens on {stack.endpoint}\n"
              f"  state machine ARN: {stack.state_machine_arn}\n"
              f"  turns page: {ui_url}\n"
              "  other agent commands on this AGENT_HOME now run through it; tables are saved after every turn.\n"
              "  Ctrl-C (or SIGTERM) saves and stops.", file=sys.stderr, flush=True)
        try:
            while True:
                signal.pause()
        except KeyboardInterrupt:
            pass
    finally:
        backend_cm.__exit__(None, None, None)
    print("agent serve: tables saved, stopped", file=sys.stderr)
    return 0


def cmd_accounts(args: argparse.Namespace) -> int:
    try:
        records = json.loads(Path(args.file).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as error:
        return _fail(f"bad accounts file {args.file}: {str(error).splitlines()[0]}")
    if not isinstance(records, list):
        return _fail(f"bad accounts file {args.file}: expected a JSON list of policy records")
    with _open(args, "agent accounts", stack=True) as backend:
        count = backend.call("accounts", {"records": records})["loaded"]
    print(f"loaded {count} policies")
    return 0


def cmd_memory(args: argparse.Namespace) -> int:
    with _open(args, "agent memory", stack=True) as backend:
        profile = backend.call("memory", {"tenant": args.tenant, "user": args.user})["profile"]
    print(json.dumps(profile, ensure_ascii=False))
    return 0


def cmd_eval(args: argparse.Namespace) -> int:
    from agent_local.evaluation import console, report, runner
    from agent_local.evaluation.questions import QuestionFileError, load_questions

    if not Path(args.docs).is_dir():
        return _fail(f"not a folder: {args.docs}")
    try:
        questions = load_questions(Path(args.questions)).half(args.half)
    except QuestionFileError as error:
        return _fail(f"bad question file: {error}")
    if not questions.items:
        return _fail(f"no item of {args.questions} is in the {args.half.upper()} half")
    _check_model_settings(args)
    overrides = _overrides(args)
    try:
        with console.progress(questions.turn_count) as shown:
            run = runner.run(Path(args.docs).resolve(), questions, overrides=overrides,
                             on_ingest=shown.ingest, on_turn=shown.turn)
    except runner.EvalError as error:
        return _fail(str(error), 1)
    run.meta["questions"] = str(Path(args.questions).resolve())
    data, page = report.write(run, Path(args.out))
    console.print_tables(run.summary)
    print(f"wrote {data} and {page}")
    return 0


DESCRIPTION = """\
agent: the insurance conversation agent on a local stack, on this machine.

Every chat turn runs the real Step Functions graph (statemachine/turn.asl.json) with its real
Lambda handlers on an embedded stack (moto, an embedded Qdrant store, the offline model provider by
default): no AWS account and no network needed. Documents, threads, accounts and logs live in
$AGENT_HOME (default ./.agent, or --home DIR). While one command runs the stack (`agent serve`,
or a `chat` / `converse` in progress), the other commands on the same home run through it."""

EPILOG = """\
first commands to try (from the repository's folder):
  agent ingest samples/corpus/sepehr --tenant sepehr
      load the sample documents of the tenant (insurer) sepehr
  agent documents --tenant sepehr
      what was ingested: one line per document
  agent search "فرانشیز بیمه بدنه" --tenant sepehr
      what retrieval finds for a question
  agent chat --tenant sepehr --user u-1001
      talk to the agent; /new starts a new thread, /help, /quit
  agent converse samples/conversations/demo.json --pretty --new-threads
      a scripted conversation
  agent serve
      the stack as a service for a backend's boto3, with the turns page at /ui

`agent COMMAND --help` describes each command; the README's section on the `agent` CLI has more."""

INGEST_EPILOG = f"""\
DIR is read recursively; formats and limits are in docs/ingest.md.
exit status:
  0  every file was ingested
  {EXIT_SKIPPED}  the readable files were ingested, some were skipped (each is named on stderr with its reason)
  2  bad arguments
  1  the chunk store or the running stack failed"""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="agent", description=DESCRIPTION, epilog=EPILOG,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--home", metavar="DIR", help="local data folder (default $AGENT_HOME or ./.agent)")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    stack_options = argparse.ArgumentParser(add_help=False)
    stack_options.add_argument(
        "--parameter-overrides", nargs="+", metavar="Key=Value",
        help="template.yaml parameters for the local stack, as with SAM (e.g. TopicScope=corpus MaxLlmCalls=6); "
             "they win over environment variables, which win over the template's defaults")
    tenant_help = "the tenant (insurer) whose documents and users these are, e.g. sepehr"
    roles_help = f"the caller's roles, comma-separated, from {', '.join(KNOWN_ROLES)} (default user)"
    domain_help = "limit retrieval to documents of this domain (front matter `domain`, e.g. car or health)"

    p = sub.add_parser("ingest", help=f"load the documents of a folder ({DOCUMENT_FORMATS}) into the chunk store",
                       epilog=INGEST_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("dir", nargs="?", metavar="DIR",
                   help=f"folder of documents ({DOCUMENT_FORMATS}), read recursively; omit with --delete")
    p.add_argument("--tenant", required=True, help=tenant_help)
    p.add_argument("--reset", action="store_true", help="remove the tenant's chunks first")
    p.add_argument("--delete", metavar="FILE_ID", help="remove one document's chunks instead")
    p.add_argument("--sync", action="store_true",
                   help="also remove the tenant's documents whose files are no longer in DIR")
    p.set_defaults(func=cmd_ingest)

    p = sub.add_parser("documents", help="list a tenant's documents, or print one document's chunks")
    p.add_argument("--tenant", required=True, help=tenant_help)
    p.add_argument("--show", metavar="FILE_ID", help="print this document's chunks, one JSON object a line")
    p.add_argument("--json", action="store_true", help="the list as one JSON object a line")
    p.set_defaults(func=cmd_documents)

    p = sub.add_parser("converse", parents=[stack_options], help="run a scripted conversation; one JSON line per turn")
    p.add_argument("script", metavar="SCRIPT",
                   help="JSON file: one conversation or a list of them, each {thread_id, user_id, tenant_id, roles, "
                        "domain, turns} (e.g. samples/conversations/demo.json; format in the README)")
    p.add_argument("--pretty", action="store_true", help="readable output instead of JSON lines")
    p.add_argument("--new-threads", action="store_true",
                   help="suffix the script's thread and turn ids with a fresh run id (replay a script on a used home)")
    p.set_defaults(func=cmd_converse)

    p = sub.add_parser("chat", parents=[stack_options], help="interactive conversation on the local stack")
    p.add_argument("--tenant", required=True, help=tenant_help)
    p.add_argument("--user", required=True, metavar="USER_ID",
                   help="the customer's user id, as the backend would send it (threads, memory and account "
                        "policies are this user's), e.g. u-1001")
    p.add_argument("--roles", default="user", help=roles_help)
    p.add_argument("--domain", help=domain_help)
    p.add_argument("--thread", metavar="THREAD_ID", help="continue this thread (default: a new one)")
    p.set_defaults(func=cmd_chat)

    p = sub.add_parser("search", help="query the chunk store with the retrieve node's pipeline")
    p.add_argument("query", nargs="?", metavar="QUERY", help="the text to search for (or --queries FILE)")
    p.add_argument("--tenant", required=True, help=tenant_help)
    p.add_argument("--roles", default="user", help=f"{roles_help}: which audiences' documents may be returned")
    p.add_argument("--domain", help=domain_help)
    p.add_argument("--k", type=int, default=None, metavar="N",
                   help="how many chunks to return per query (default: the retrieve node's, AGENT_TOP_K or 6)")
    p.add_argument("--queries", metavar="FILE", help="one query per line")
    p.set_defaults(func=cmd_search)

    p = sub.add_parser("serve", parents=[stack_options],
                       help="run the local stack as a service: AWS endpoints for a backend's boto3, shared by "
                            "the other agent commands, and the turns page at /ui")
    p.add_argument("--port", type=int, default=DEFAULT_PORT,
                   help=f"port on 127.0.0.1 (default {DEFAULT_PORT}; 0 picks a free one)")
    p.set_defaults(func=cmd_serve)

    p = sub.add_parser("eval", parents=[stack_options],
                       help="score labelled questions on documents of your own: a fresh tenant, every question a "
                            "real turn; tables, report.json and report.html")
    p.add_argument("docs", metavar="DOCS",
                   help=f"folder of documents ({DOCUMENT_FORMATS}, as agent ingest reads them), ingested into "
                        "a fresh, isolated home")
    p.add_argument("questions", metavar="QUESTIONS", help="labelled questions (JSON list; format in the README)")
    p.add_argument("--out", default="eval-report", metavar="DIR",
                   help="where report.json and report.html go (default ./eval-report)")
    p.add_argument("--half", choices=("fit", "report"),
                   help="only the items of this half (split by the sha256 of the id, or an item's own `half`): "
                        "look at the FIT half's mistakes while changing the agent, keep REPORT as the check")
    p.set_defaults(func=cmd_eval)

    from agent_local import trace

    trace.add_parser(sub, _prepare_home)

    p = sub.add_parser("accounts", help="the account tool's local policy table")
    accounts = p.add_subparsers(dest="action", required=True, metavar="ACTION")
    load = accounts.add_parser("load", parents=[stack_options], help="load policy records from a JSON file")
    load.add_argument("file", metavar="FILE",
                      help="JSON list of policy records (tenant_id, user_id, policy_number, product, ...; "
                           "e.g. samples/accounts.json)")
    load.set_defaults(func=cmd_accounts)

    p = sub.add_parser("memory", parents=[stack_options], help="print a user's long-term profile")
    p.add_argument("--user", required=True, metavar="USER_ID", help="the user whose profile to print")
    p.add_argument("--tenant", required=True, help=tenant_help)
    p.set_defaults(func=cmd_memory)
    return parser


def _interrupt(signum: int, frame: Any) -> None:  # noqa: ARG001 - signal handler signature
    raise KeyboardInterrupt


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    from agent_local.operations import OperationError, qdrant_lock_message
    from agent_local.service import ServiceError
    from agent_local.stack import PortInUseError
    from agent_local.state import StateFileError

    # SIGTERM unwinds like Ctrl-C: the stack saves its tables and releases $AGENT_HOME on the way out.
    previous = signal.signal(signal.SIGTERM, _interrupt)
    try:
        return args.func(args)
    except KeyboardInterrupt:
        print(file=sys.stderr)
        return 130
    except CliError as error:
        return _fail(str(error), error.code)
    except PortInUseError as error:
        return _fail(f"{error}; another program (or another agent serve) uses the port: choose one with --port N", 1)
    except (StateFileError, ServiceError, OperationError) as error:
        return _fail(str(error), 1)
    except RuntimeError as error:
        message = qdrant_lock_message(error)
        if message is None:
            raise
        return _fail(message, 1)
    finally:
        signal.signal(signal.SIGTERM, previous)


if __name__ == "__main__":
    sys.exit(main())
