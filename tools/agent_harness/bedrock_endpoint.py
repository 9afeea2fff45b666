"""A Bedrock Runtime endpoint on this machine: the Converse API over HTTP, each role answered by the offline provider.

The Bedrock configuration runs as deployed (its functions, prompts, tool schemas, langchain-aws,
botocore, retries and refusal handling) with `AWS_ENDPOINT_URL_BEDROCK_RUNTIME` pointing here: this is
the stand-in for the model service, at the wire. Each `POST /model/{modelId}/converse` is read as a
model would read it: the tool it is told to call names the role, and the tagged JSON blocks of the
first user message are the role's data. The offline provider decides on that data and its decision
goes back as the tool call, so conversations answer, clarify and escalate for the reasons the
request itself gives.

Faults are queued per tool (`POST /_faults`, see `FAULTS`) and consumed one request at a time; every
request is logged (`GET /_calls`) with the fault it got, so a test counts the model calls a turn made.
"""

from __future__ import annotations

import itertools
import json
import re
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import unquote

# What the endpoint can do to a request instead of answering it well.
FAULTS = {
    "throttle": "429 ThrottlingException",
    "server_error": "500 InternalServerException",
    "unavailable": "503 ServiceUnavailableException",
    "slow": "the answer after `seconds` (past the client's read timeout)",
    "schema": "a tool call whose arguments violate the tool's schema",
    "prose": "prose instead of a tool call (stopReason end_turn)",
    "empty": "an empty message (no content block)",
    "guardrail": "a guardrail intervention (stopReason guardrail_intervened)",
    "foreign_citation": "GroundedAnswer citing a chunk that was not in the evidence",
    "invented_number": "GroundedAnswer stating a figure that no chunk holds",
    "wrong_language": "GroundedAnswer in the other language than the customer's",
    "unoffered_sentence": "QuotedAnswer naming a sentence id that was not offered",
}
_TAG = re.compile(r"<([a-z_]+)>\n(.*?)\n</\1>", re.S)
_LANGUAGE = re.compile(r"(?:Write the answer|Reply) in (Persian|English)")
_ERRORS = {"throttle": (429, "ThrottlingException", "Too many requests, please wait before trying again."),
           "server_error": (500, "InternalServerException", "The server encountered an internal error."),
           "unavailable": (503, "ServiceUnavailableException", "The service is unavailable. Try again later.")}
INVENTED_FIGURE = "۷۳۹٬۱۵۲٬۸۴۶ ریال"


@dataclass
class Fault:
    kind: str
    times: int = 1
    seconds: float = 0.0


@dataclass
class EndpointState:
    """Queued faults per tool name ("*": any tool) and the log of every model request.

    `known` names the faults the endpoint can apply (this module's FAULTS for the Converse endpoint).
    """

    faults: dict[str, deque[Fault]] = field(default_factory=dict)
    calls: list[dict[str, Any]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    known: dict[str, str] = field(default_factory=lambda: FAULTS)

    def add_fault(self, tool: str, fault: Fault) -> None:
        if fault.kind not in self.known:
            raise ValueError(f"unknown fault {fault.kind!r} (known: {', '.join(self.known)})")
        with self.lock:
            self.faults.setdefault(tool, deque()).append(fault)

    def take_fault(self, tool: str) -> Fault | None:
        with self.lock:
            for key in (tool, "*"):
                queue = self.faults.get(key)
                if queue:
                    fault = queue[0]
                    fault.times -= 1
                    if fault.times <= 0:
                        queue.popleft()
                    return Fault(fault.kind, 1, fault.seconds)
        return None

    def reset(self) -> None:
        with self.lock:
            self.faults.clear()
            self.calls.clear()


def data_blocks(text: str) -> dict[str, Any]:
    """The tagged JSON blocks of a role's user message (roles/llm/prompts.py writes them), by tag."""
    return {tag: json.loads(body) for tag, body in _TAG.findall(text)}


def _data(request: dict[str, Any]) -> dict[str, Any]:
    """The tagged blocks of the first user message (a corrective turn repeats nothing of them)."""
    for message in request.get("messages", []):
        if message.get("role") != "user":
            continue
        return data_blocks("\n".join(block["text"] for block in message.get("content", []) if "text" in block))
    return {}


def _system(request: dict[str, Any]) -> str:
    return "\n".join(block.get("text", "") for block in request.get("system", []))


class OfflineModel:
    """Answers each tool of insurance_llm/wire.py from the offline provider's decision on the request's data."""

    def __init__(self) -> None:
        from insurance_offline import OfflineProvider

        self.provider = OfflineProvider(quoting=True)

    def answer(self, tool: str, data: dict[str, Any], system: str) -> dict[str, Any]:
        """The tool call's arguments for the request's data blocks and system prompt."""
        handler = getattr(self, f"_{tool}", None)
        if handler is None:
            raise ValueError(f"no role answers the tool {tool!r}")
        return handler(data, system)

    # -- helpers --------------------------------------------------------------------------------

    @staticmethod
    def _history(rows: list[dict[str, Any]]) -> list:
        from insurance_agent.models.roles import HistoryTurn
        from insurance_agent.models.turn import ClarifyOption

        turns = []
        for row in rows or []:
            offered = row.get("options_offered") or []
            turns.append(HistoryTurn(message=row.get("user", ""), reply=row.get("assistant", ""),
                                     query=row.get("query") or "", status="clarify" if offered else "answer",
                                     options=[ClarifyOption(label=label) for label in offered]))
        return turns

    @staticmethod
    def _chunks(rows: list[dict[str, Any]]) -> list:
        from insurance_agent.models.chunks import RetrievedChunk

        # The evidence is sent best first without its scores: the grade sees them as tied.
        return [RetrievedChunk(chunk_id=row["chunk_id"], file_id=row["chunk_id"].rpartition("#")[0] or row["chunk_id"],
                               title=row.get("title", ""), product=row.get("product"), heading=row.get("heading"),
                               text=row.get("text", ""), tenant_id="-", score=1.0)
                for row in rows or []]

    @staticmethod
    def _language(message: str, system: str) -> str:
        from insurance_agent.text import turn_language

        named = _LANGUAGE.search(system)
        if named:
            return "fa" if named.group(1) == "Persian" else "en"
        return turn_language(message, None, None).language

    # -- one method per tool ----------------------------------------------------------------------

    def _TriageDecision(self, data: dict[str, Any], system: str) -> dict[str, Any]:
        from insurance_agent.models.roles import Intent, TriageRequest

        result = self.provider.triage(TriageRequest(message=data.get("user_message", ""),
                                                    history=self._history(data.get("conversation")),
                                                    corpus_topics=data.get("corpus_topics") or []))
        return {"intent": result.intent.value, "restricted": result.restricted,
                "restricted_category": result.restricted_category, "frustration": result.frustration,
                "asks_about_rule": result.intent == Intent.KNOWLEDGE and not result.restricted}

    def _StandaloneQuery(self, data: dict[str, Any], system: str) -> dict[str, Any]:
        from insurance_agent.models.roles import ContextualizeRequest

        message = data.get("user_message", "")
        previous = data.get("previous_query") or ""
        result = self.provider.contextualize(ContextualizeRequest(
            message=message, history=self._history(data.get("conversation")), profile=data.get("profile") or {},
            language=self._language(message, ""), attempt=1 if previous else 0, previous_query=previous))
        return {"standalone_query": result.standalone_query[:500] or message[:500]}

    def _EvidenceGrade(self, data: dict[str, Any], system: str) -> dict[str, Any]:
        from insurance_agent.models.roles import GradeRequest

        result = self.provider.grade(GradeRequest(query=data.get("query", ""), chunks=self._chunks(data.get("evidence"))))
        return {"verdict": result.verdict.value,
                "chunks": [{"chunk_id": r.chunk_id, "relevant": r.relevant} for r in result.relevance]}

    def _ClarifyingQuestion(self, data: dict[str, Any], system: str) -> dict[str, Any]:
        from insurance_agent.models.roles import ClarifyRequest
        from insurance_agent.models.turn import ClarifyOption

        message = data.get("user_message", "")
        result = self.provider.clarify(ClarifyRequest(
            query=data.get("query", ""), message=message, chunks=[],
            options=[ClarifyOption(label=label) for label in data.get("options") or []],
            language=self._language(message, system)))
        # The provider lists the options itself, after the question.
        return {"question": result.question.splitlines()[0][:300]}

    def _GroundedAnswer(self, data: dict[str, Any], system: str) -> dict[str, Any]:
        from insurance_agent.models.roles import GenerateRequest, Intent

        message = data.get("user_message", "")
        result = self.provider.generate(GenerateRequest(
            route=Intent.KNOWLEDGE, message=message, query=data.get("query", ""),
            chunks=self._chunks(data.get("evidence")), language=self._language(message, system),
            feedback=data.get("previous_problems") or []))
        claims = [{"text": c.text, "chunk_ids": c.chunk_ids} for c in result.claims if c.text and c.chunk_ids]
        calculations = [{"id": c.id, "operation": c.operation, "target_currency": c.target_currency,
                         "operands": [o.model_dump(exclude_none=True) for o in c.operands]} for c in result.calculations]
        return {"answered": result.answered and bool(result.answer.strip()), "answer": result.answer,
                "claims": claims, "calculations": calculations, "confidence": result.confidence}

    def _QuotedAnswer(self, data: dict[str, Any], system: str) -> dict[str, Any]:
        """The offered sentence that the quoting generator quotes first, else "none"."""
        from insurance_agent.models.roles import GenerateRequest, Intent
        from insurance_agent.quotes import strip_frame
        from insurance_agent.text import display_text

        passages = data.get("evidence") or []
        chunks = self._chunks([{"chunk_id": f"passage-{n}#0", "title": passage.get("title", ""),
                                "text": "\n".join(row["text"] for row in passage.get("sentences", []))}
                               for n, passage in enumerate(passages)])
        message = data.get("user_message", "")
        result = self.provider.generate(GenerateRequest(
            route=Intent.KNOWLEDGE, message=message, query=data.get("query", ""), chunks=chunks,
            language=self._language(message, system)))
        titles = [chunk.title for chunk in chunks]
        quotes = [strip_frame(claim.text, titles) for claim in result.claims] if result.answered else []
        for quote in quotes:
            for row in (row for passage in passages for row in passage.get("sentences", [])):
                if display_text(row["text"]) in quote:
                    return {"sentence": row["id"]}
        return {"sentence": "none"}

    def _Reply(self, data: dict[str, Any], system: str) -> dict[str, Any]:
        from insurance_agent.models.roles import GenerateRequest, Intent

        message = data.get("user_message", "")
        route = Intent.CHITCHAT if "small talk" in system else Intent.OUT_OF_SCOPE
        result = self.provider.generate(GenerateRequest(route=route, message=message, query=message,
                                                        language=self._language(message, system)))
        return {"reply": (result.answer or "…")[:600]}

    def _ClaimCheck(self, data: dict[str, Any], system: str) -> dict[str, Any]:
        from insurance_agent.models.roles import Claim, VerifyRequest

        rows = data.get("claims") or []
        result = self.provider.verify(VerifyRequest(
            answer=data.get("answer", ""), claims=[Claim(text=r["text"], chunk_ids=r["chunk_ids"]) for r in rows],
            chunks=self._chunks(data.get("evidence")), question=data.get("question") or ""))
        unsupported = set(result.unsupported_claims)
        verdicts = [{"claim": r["claim"], "supported": r["text"] not in unsupported} for r in rows]
        # Ungrounded with every claim supported: the claims do not state what the question asks.
        answers = result.grounded or any(not v["supported"] for v in verdicts)
        return {"verdicts": verdicts, "unsupported_statements": [], "answers_question": answers}


def corrupt(tool: str, kind: str, good: dict[str, Any], data: dict[str, Any]) -> dict[str, Any]:
    """A tool call's arguments with the fault `kind` applied (GroundedAnswer faults need a real draft)."""
    if kind == "schema":
        # Wrong types and a field the schema forbids: what a model that ignores part of the schema writes.
        return {key: ({"unexpected": True} if isinstance(value, str | bool | float | int) else value)
                for key, value in good.items()} | {"note": "extra field"}
    if kind == "unoffered_sentence" and tool == "QuotedAnswer":
        offered = [row["id"] for passage in data.get("evidence") or [] for row in passage.get("sentences", [])]
        return {"sentence": f"S{len(offered) + 1}"}
    evidence = data.get("evidence") or []
    if tool != "GroundedAnswer" or not good.get("answered") or not evidence:
        return good
    if kind == "foreign_citation":
        ghost = f"{evidence[0]['chunk_id'].rpartition('#')[0] or 'doc'}#9999"
        return good | {"claims": [{"text": c["text"], "chunk_ids": [ghost]} for c in good["claims"]]}
    if kind == "invented_number":
        sentence = f"سقف این پوشش {INVENTED_FIGURE} است."
        return good | {"answer": f"{good['answer']} {sentence}",
                       "claims": [*good["claims"], {"text": sentence, "chunk_ids": [evidence[0]["chunk_id"]]}]}
    if kind == "wrong_language":
        persian = any("\u0600" <= ch <= "\u06ff" for ch in good["answer"])
        text = ("The policy covers this case in full, as the documents state." if persian
                else "این بیمه‌نامه این مورد را به‌طور کامل پوشش می‌دهد.")
        return good | {"answer": text, "claims": [{"text": text, "chunk_ids": [evidence[0]["chunk_id"]]}]}
    return good


class ThreadedServers:
    """One HTTP server per address, all with one handler, each serving on its own thread while the
    object is entered as a context manager."""

    thread_name = "endpoint"

    def _listen(self, addresses: list[tuple[str, int]], handler: type[BaseHTTPRequestHandler]) -> None:
        self._servers = [ThreadingHTTPServer(address, handler) for address in addresses]
        for server in self._servers:
            server.daemon_threads = True
        self._threads: list[threading.Thread] = []

    def __enter__(self):  # noqa: ANN204 - the subclass itself
        for server in self._servers:
            thread = threading.Thread(target=server.serve_forever, name=self.thread_name, daemon=True)
            thread.start()
            self._threads.append(thread)
        return self

    def __exit__(self, *exc: object) -> None:
        for server in self._servers:
            server.shutdown()
            server.server_close()


class BedrockEndpoint(ThreadedServers):
    """The endpoint's servers (one per address it listens on) sharing one model and one state."""

    thread_name = "bedrock-endpoint"

    def __init__(self, addresses: list[tuple[str, int]]) -> None:
        self.state = EndpointState()
        self.model = OfflineModel()
        self._listen(addresses, self._handler())
        self._ids = itertools.count(1)  # the server answers requests on several threads

    def urls(self) -> list[str]:
        return [f"http://{server.server_address[0]}:{server.server_address[1]}" for server in self._servers]

    def converse(self, model_id: str, request: dict[str, Any]) -> tuple[int, dict[str, str], dict[str, Any]]:
        """Status, headers and body of the answer to one Converse request."""
        tools = request.get("toolConfig", {}).get("tools", [])
        tool = tools[0]["toolSpec"]["name"] if tools else ""
        fault = self.state.take_fault(tool)
        entry = {"tool": tool, "model": model_id, "fault": fault.kind if fault else None,
                 "guardrail": bool(request.get("guardrailConfig")), "forced": "tool" in request.get("toolConfig", {})
                 .get("toolChoice", {}), "at": time.time()}
        with self.state.lock:
            self.state.calls.append(entry)
        if fault and fault.kind in _ERRORS:
            status, code, message = _ERRORS[fault.kind]
            return status, {"x-amzn-ErrorType": f"{code}:http://internal.amazon.com/coral/com.amazon.bedrock/"}, {
                "message": message}
        if fault and fault.kind == "slow":
            time.sleep(fault.seconds)
        if fault and fault.kind == "prose":
            return self._message([{"text": "I'm not sure how to answer that. Could you rephrase the question?"}],
                                 "end_turn")
        if fault and fault.kind == "empty":
            return self._message([], "end_turn")
        if fault and fault.kind == "guardrail":
            return self._message([{"text": "Sorry, the model cannot answer this question."}], "guardrail_intervened")
        if not tool:
            return 400, {"x-amzn-ErrorType": "ValidationException"}, {"message": "this endpoint answers tool calls only"}
        data = _data(request)
        arguments = self.model.answer(tool, data, _system(request))
        if fault:
            arguments = corrupt(tool, fault.kind, arguments, data)
        return self._message([{"toolUse": {"toolUseId": f"tooluse_{next(self._ids):06d}", "name": tool,
                                           "input": arguments}}], "tool_use")

    @staticmethod
    def _message(content: list[dict[str, Any]], stop: str) -> tuple[int, dict[str, str], dict[str, Any]]:
        return 200, {}, {"output": {"message": {"role": "assistant", "content": content}}, "stopReason": stop,
                         "usage": {"inputTokens": 300, "outputTokens": 40, "totalTokens": 340},
                         "metrics": {"latencyMs": 40}}

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        endpoint = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
                pass

            def _reply(self, status: int, body: Any, headers: dict[str, str] | None = None) -> None:
                data = json.dumps(body, ensure_ascii=False).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)

            def _body(self) -> Any:
                length = int(self.headers.get("Content-Length") or 0)
                return json.loads(self.rfile.read(length) or b"{}")

            def do_GET(self) -> None:  # noqa: N802 - http.server's name
                if self.path == "/_calls":
                    with endpoint.state.lock:
                        self._reply(200, list(endpoint.state.calls))
                else:
                    self._reply(404, {"message": f"no route {self.path}"})

            def do_DELETE(self) -> None:  # noqa: N802
                endpoint.state.reset()
                self._reply(200, {"reset": True})

            def do_POST(self) -> None:  # noqa: N802
                try:
                    body = self._body()
                    if self.path == "/_faults":
                        endpoint.state.add_fault(body.get("tool", "*"), Fault(body["kind"], int(body.get("times", 1)),
                                                                               float(body.get("seconds", 0))))
                        self._reply(200, {"queued": body})
                        return
                    match = re.fullmatch(r"/model/(.+)/converse", self.path)
                    if not match:
                        self._reply(404, {"message": f"no route {self.path}"})
                        return
                    status, headers, answer = endpoint.converse(unquote(match.group(1)), body)
                except (ValueError, KeyError) as error:
                    status, headers, answer = 400, {"x-amzn-ErrorType": "ValidationException"}, {"message": str(error)}
                try:
                    self._reply(status, answer, headers)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (its read timeout): what a slow model's caller does

        return Handler
