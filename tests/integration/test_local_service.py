"""Several `agent` processes on one AGENT_HOME: the running stack is the one service the others use.

Every process here is a real `agent` command on loopback. While `agent serve` runs, search, converse,
chat, accounts and memory go through it (no Qdrant lock crash, no system_error); its tables are saved
after every turn and on SIGTERM, and a restart keeps every thread.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
from pathlib import Path

import boto3
import pytest
from botocore.config import Config

pytestmark = pytest.mark.stack

REPO = Path(__file__).resolve().parents[2]
AGENT = str(Path(sys.executable).parent / "agent")
TENANT = "sepehr"  # the tenant of the sample policy records


def agent_env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENT_") and k not in {
        "AWS_ENDPOINT_URL", "THREADS_TABLE", "TURNS_TABLE", "PROFILES_TABLE", "ACCOUNTS_TABLE"}}
    return env | {"AGENT_HOME": str(home), "HF_HUB_OFFLINE": "1"}


def agent(home: Path, *args: str, stdin: str | None = None, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run([AGENT, "--home", str(home), *args], input=stdin, capture_output=True, text=True,
                          env=agent_env(home), timeout=timeout)


class Served:
    def __init__(self, home: Path, *extra: str, env: dict[str, str] | None = None) -> None:
        self.home = home
        self.process = subprocess.Popen([AGENT, "--home", str(home), "serve", "--port", "0", *extra],
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                        env=env or agent_env(home))
        line = self.process.stdout.readline()
        assert line, self.process.stderr.read()
        self.info = json.loads(line)

    def client(self):
        return boto3.client("stepfunctions", endpoint_url=self.info["endpoint_url"], region_name="us-east-1",
                            aws_access_key_id="x", aws_secret_access_key="x",
                            config=Config(inject_host_prefix=False, read_timeout=300, retries={"max_attempts": 0}))

    def turn(self, **payload) -> dict:
        turn = {"roles": ["user"], "domain": None, "tenant_id": TENANT} | payload
        response = self.client().start_sync_execution(stateMachineArn=self.info["state_machine_arn"],
                                                       input=json.dumps(turn))
        assert response["status"] == "SUCCEEDED", response
        return json.loads(response["output"])

    def stop(self, sig: int = signal.SIGTERM) -> tuple[int, str]:
        if self.process.poll() is None:
            self.process.send_signal(sig)
        code = self.process.wait(timeout=60)
        return code, self.process.stderr.read()


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """A home with two sample documents and the sample policies, served by `agent serve`."""
    root = tmp_path_factory.mktemp("service")
    corpus = root / "corpus"
    corpus.mkdir()
    for name in ("third-party-car.md", "car-body.md"):
        shutil.copy(REPO / "samples" / "corpus" / "sepehr" / name, corpus / name)
    home = root / "home"
    ingested = agent(home, "ingest", str(corpus), "--tenant", TENANT)
    assert ingested.returncode == 0, ingested.stderr
    server = Served(home)
    try:
        loaded = agent(home, "accounts", "load", str(REPO / "samples" / "accounts.json"))
        assert loaded.returncode == 0 and loaded.stdout.startswith("loaded 6 policies"), loaded.stderr
        assert "using the local stack of `agent serve`" in loaded.stderr
        yield server
    finally:
        code, err = server.stop()
        assert code == 0 and "Traceback" not in err


def test_search_and_converse_go_through_the_running_serve(served, tmp_path):
    found = agent(served.home, "search", "فرانشیز بیمه بدنه", "--tenant", TENANT, "--k", "3")
    assert found.returncode == 0, found.stderr
    hits = json.loads(found.stdout)["hits"]
    assert hits and hits[0]["file_id"].startswith("sepehr-")
    assert "agent: using the local stack of `agent serve`" in found.stderr  # stdout stays JSON lines
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"thread_id": "svc-converse", "user_id": "u-1001", "tenant_id": TENANT,
                                  "turns": ["سلام", "فرانشیز بیمه بدنه خودرو چقدر است؟"]}), encoding="utf-8")
    ran = agent(served.home, "converse", str(script))
    assert ran.returncode == 0, ran.stderr
    replies = [json.loads(line) for line in ran.stdout.splitlines()]
    assert len(replies) == 2 and all(r.get("reason") != "system_error" for r in replies)
    assert replies[1]["status"] in ("answer", "clarify")
    # Saved on the turn's commit, while serve still runs.
    saved = json.loads((served.home / "dynamodb.json").read_text(encoding="utf-8"))
    assert any(item["thread_id"]["S"] == "svc-converse" for item in saved["ThreadsTable"])
    memory = agent(served.home, "memory", "--user", "u-1001", "--tenant", TENANT)
    assert memory.returncode == 0 and isinstance(json.loads(memory.stdout), dict)
    assert "agent: using the local stack of `agent serve`" in memory.stderr


def test_replaying_a_script_with_new_threads_gives_the_same_replies(served, tmp_path):
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"thread_id": "svc-replay", "user_id": "u-2002", "tenant_id": TENANT,
                                  "turns": ["می‌خواهم با یک کارشناس صحبت کنم", "هنوز کسی جواب نداده؟"]}),
                      encoding="utf-8")
    runs = []
    for _ in range(2):
        ran = agent(served.home, "converse", str(script), "--new-threads")
        assert ran.returncode == 0, ran.stderr
        runs.append([(r["status"], r.get("reason"), r.get("error")) for r in map(json.loads, ran.stdout.splitlines())])
    assert runs[0] == runs[1] == [("escalate", "user_requested", None), ("refused", None, "thread_handed_off")]


def test_a_second_serve_on_the_same_home_is_refused(served):
    again = agent(served.home, "serve", "--port", "0")
    assert again.returncode == 1 and "already served by `agent serve`" in again.stderr


def test_chat_through_serve_shows_progress_and_jalali_dates(served):
    chat = agent(served.home, "chat", "--tenant", TENANT, "--user", "u-1001",
                 stdin="\nبیمه‌نامه شخص ثالث من کی تمام می‌شود؟\n/new\n/help\n/quit\nnot sent\n")
    assert chat.returncode == 0, chat.stderr
    assert "thinking" in chat.stderr and "Traceback" not in chat.stderr
    assert chat.stdout.count("| tenant sepehr | user u-1001") == 1 and chat.stdout.count("new thread chat-") == 1
    assert "۱۴۰۴/۱۲/۲۹ (2026-03-20)" in chat.stdout  # the policy's end date, Jalali first, source kept
    assert chat.stdout.count("/new starts a new thread") == 2  # header and /help
    # The stored reply keeps the source's value.
    saved = (served.home / "dynamodb.json").read_text(encoding="utf-8")
    assert "2026-03-20" in saved and "۱۴۰۴/۱۲/۲۹" not in saved


def test_chat_warns_on_a_tenant_without_documents_and_refuses_unknown_roles(served):
    chat = agent(served.home, "chat", "--tenant", "nobody", "--user", "u-1", stdin="")
    assert chat.returncode == 0 and "no documents are ingested for tenant 'nobody'" in chat.stderr
    refused = agent(served.home, "chat", "--tenant", TENANT, "--user", "u-1", "--roles", "user,superuser", stdin="")
    assert refused.returncode == 2
    assert "--roles: 'superuser' is not a role (allowed: user, officer, admin" in refused.stderr


def test_chat_after_a_hand_off_says_to_start_a_new_thread(served):
    chat = agent(served.home, "chat", "--tenant", TENANT, "--user", "u-4004",
                 stdin="می‌خواهم با یک کارشناس صحبت کنم\nهنوز کسی جواب نداده؟\n/new\nسلام\n/quit\n")
    assert chat.returncode == 0, chat.stderr
    out = " ".join(chat.stdout.split())  # rich wraps long lines off a terminal
    before, after = out.split("new thread chat-")
    assert "escalate (user_requested)" in before and "refused (thread_handed_off)" in before
    assert "This thread is now handed to a person" in before
    assert "This thread was handed to a person and takes no more messages" in before
    assert before.count("Type /new to start a new thread.") == 2  # after the hand-off and after the refusal
    assert "Type /new to start a new thread." not in after  # the new thread answers


def test_documents_and_ingest_through_serve_say_so_and_ingest_exits_3_on_skipped_files(served, tmp_path):
    listed = agent(served.home, "documents", "--tenant", TENANT)
    assert listed.returncode == 0 and listed.stdout.strip(), listed.stderr
    assert "agent: using the local stack of `agent serve`" in listed.stderr
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    shutil.copy(REPO / "samples" / "corpus" / "sepehr" / "home-fire.md", corpus / "home-fire.md")
    (corpus / "scan.pdf").write_text("not a PDF at all", encoding="utf-8")
    ingested = agent(served.home, "ingest", str(corpus), "--tenant", "skips")
    assert ingested.returncode == 3, ingested.stderr
    assert "skipped scan.pdf: format_mismatch" in ingested.stderr
    assert "ingested 1 files" in ingested.stdout and "1 skipped" in ingested.stdout
    shown = agent(served.home, "documents", "--tenant", "skips", "--json")
    assert [json.loads(line)["format"] for line in shown.stdout.splitlines()] == ["md"]


def _pty_chat(home: Path):
    import pty

    import fcntl
    import termios

    leader, follower = pty.openpty()

    def controlling_terminal() -> None:  # so that Ctrl-C on the terminal sends SIGINT, as in a shell
        os.setsid()
        fcntl.ioctl(0, termios.TIOCSCTTY, 0)
        # A shell gives its foreground job the default SIGINT; a suite started in the background
        # (nohup, `&` without job control) would otherwise pass on an ignored one.
        signal.signal(signal.SIGINT, signal.SIG_DFL)

    process = subprocess.Popen([AGENT, "--home", str(home), "chat", "--tenant", TENANT, "--user", "u-3003"],
                               stdin=follower, stdout=follower, stderr=follower, env=agent_env(home),
                               preexec_fn=controlling_terminal)  # noqa: PLW1509 - test helper, no threads here
    os.close(follower)
    return process, leader


def _read_until(leader: int, seen: list[str], marker: str, count: int = 1, timeout: float = 120) -> None:
    import select
    import time

    deadline = time.monotonic() + timeout
    while "".join(seen).count(marker) < count:
        ready, _, _ = select.select([leader], [], [], max(deadline - time.monotonic(), 0))
        if not ready:
            raise AssertionError(f"no {marker!r} x{count} in {''.join(seen)[-500:]!r}")
        try:
            seen.append(os.read(leader, 4096).decode("utf-8", "replace"))
        except OSError:  # the child closed the terminal
            raise AssertionError(f"exited before {marker!r}: {''.join(seen)[-500:]!r}") from None


def _drain_until_exit(process: subprocess.Popen, leader: int, seen: list[str], timeout: float) -> None:
    """Read the terminal until the child has exited and closed it (or `timeout`)."""
    import select
    import time

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        ready, _, _ = select.select([leader], [], [], 0.2)
        if not ready:
            if process.poll() is not None:
                break
            continue
        try:
            chunk = os.read(leader, 4096)
        except OSError:  # the child closed the terminal
            break
        if not chunk:
            break
        seen.append(chunk.decode("utf-8", "replace"))
    process.wait(timeout=max(deadline - time.monotonic(), 1))


@pytest.mark.parametrize(("key", "code"), [(b"\x03", 130), (b"\x04", 0)])  # Ctrl-C, Ctrl-D
def test_chat_on_a_terminal_leaves_cleanly_on_ctrl_c_and_ctrl_d(served, key, code):
    process, leader = _pty_chat(served.home)
    seen: list[str] = []
    try:
        _read_until(leader, seen, "you> ")
        os.write(leader, b"\r")  # an empty line prompts again instead of leaving
        _read_until(leader, seen, "you> ", 2)
        os.write(leader, "سلام\r".encode())
        _read_until(leader, seen, "path:")
        _read_until(leader, seen, "you> ", 3)
        os.write(leader, key)
        # Read the terminal while the child exits, as a terminal does: a child that writes to a full
        # terminal buffer nobody reads cannot finish.
        _drain_until_exit(process, leader, seen, timeout=60)
        assert process.returncode == code, f"exit {process.returncode}: {''.join(seen)[-1000:]!r}"
    finally:
        if process.poll() is None:
            process.kill()
        os.close(leader)
    output = "".join(seen)
    assert "Traceback" not in output and "KeyboardInterrupt" not in output
    assert output.count("/new starts a new thread") == 1
    assert output.endswith("\n")  # the shell prompt starts on a line of its own


def test_sigterm_saves_and_a_restart_keeps_every_thread(tmp_path):
    home = tmp_path / "home"
    first = Served(home)
    assert first.turn(thread_id="keep-1", turn_id="keep-1-a", user_id="u-1", message="سلام")["status"] == "answer"
    code, err = first.stop(signal.SIGTERM)
    assert code == 0 and "tables saved" in err and "Traceback" not in err
    assert (home / "agent.lock").read_text(encoding="utf-8") == ""
    second = Served(home)
    try:
        intruder = second.turn(thread_id="keep-1", turn_id="keep-1-b", user_id="u-2", message="سلام")
        assert intruder["status"] == "refused" and intruder["error"] == "thread_not_owned"
        # A turn committed just before a crash is on disk: saved when it committed, not at exit.
        assert second.turn(thread_id="keep-2", turn_id="keep-2-a", user_id="u-1", message="سلام")["status"] == "answer"
    finally:
        second.stop(signal.SIGKILL)
    saved = json.loads((home / "dynamodb.json").read_text(encoding="utf-8"))
    assert {i["thread_id"]["S"] for i in saved["ThreadsTable"]} == {"keep-1", "keep-2"}
    backup = json.loads((home / "dynamodb.json.bak").read_text(encoding="utf-8"))
    assert {i["thread_id"]["S"] for i in backup["ThreadsTable"]} == {"keep-1"}


def test_serve_honours_environment_and_parameter_overrides(tmp_path):
    home = tmp_path / "home"
    env = agent_env(home) | {"AGENT_TOPIC_SCOPE": "corpus", "VERIFY_MIN_SUPPORT": "0.8",
                             "AGENT_QDRANT_URL": "http://127.0.0.1:9"}
    server = Served(home, "--parameter-overrides", "VerifyMinSupport=0.6", "GradeDecisiveMargin=0", env=env)
    try:
        settings = server.info["settings"]
        assert settings["AGENT_TOPIC_SCOPE"] == "corpus"
        assert settings["AGENT_QDRANT_URL"] == "http://127.0.0.1:9"
        assert settings["VERIFY_MIN_SUPPORT"] == "0.6" and settings["GRADE_DECISIVE_MARGIN"] == "0"
    finally:
        server.stop()
    bad = agent(home, "serve", "--parameter-overrides", "TopicScope=everything")
    assert bad.returncode == 2 and "TopicScope='everything' is not allowed (allowed: insurance, corpus)" in bad.stderr


def test_port_in_use_is_a_message(tmp_path):
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        port = sock.getsockname()[1]
        busy = agent(tmp_path / "home", "serve", "--port", str(port))
    assert busy.returncode == 1 and f"cannot listen on 127.0.0.1:{port}" in busy.stderr
    assert "--port N" in busy.stderr and "Traceback" not in busy.stderr


def test_a_store_held_by_another_program_is_a_message(tmp_path):
    home = tmp_path / "home"
    (home / "qdrant").mkdir(parents=True)
    holder = subprocess.Popen([sys.executable, "-c", "import sys, time; from insurance_search.edge import EdgeClient; "
                               "c = EdgeClient(sys.argv[1]); print('open', flush=True); time.sleep(120)",
                               str(home / "qdrant")], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "open"
        found = agent(home, "search", "فرانشیز", "--tenant", TENANT)
    finally:
        holder.kill()
        holder.wait()
    assert found.returncode == 1 and "Traceback" not in found.stderr
    assert f"the chunk store {home / 'qdrant'} is open in another process" in found.stderr
