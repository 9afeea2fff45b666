"""A real bedrock-runtime client behind botocore's Stubber, scripted per tool, for whole turns on the stack.

The local stack runs the node handlers in this process, so the Bedrock provider they use can be a
`BedrockProvider` whose client is stubbed. Whole turns need answers that depend on the request (the
chunk ids retrieval returned this turn), so each Converse call's wire response is computed from the
request botocore is about to send and queued into the Stubber just before the Stubber answers it.
Every request still goes through langchain-aws and botocore's parameter validation; every response
through botocore's response validation and parsing. Nothing leaves the process.
"""

from __future__ import annotations

import copy
import json
from collections import defaultdict, deque
from collections.abc import Callable
from typing import Any

import boto3
from botocore.config import Config
from botocore.stub import Stubber

REGION = "eu-central-1"
# The template's defaults as deployed: the models through the global cross-Region inference profile.
SMALL = "global.anthropic.claude-haiku-4-5-20251001-v1:0"
MAIN = "global.anthropic.claude-sonnet-4-6"

# A behaviour answers one request: tool arguments (dict), or one of the markers below.
Behaviour = dict[str, Any] | Callable[[dict[str, Any]], Any] | tuple


def throttle(code: str = "ThrottlingException", status: int = 429) -> tuple:
    return ("error", code, status)


def prose(text: str = "I can't help with that.") -> tuple:
    return ("text", text)


def texts(request: dict[str, Any]) -> str:
    parts = []
    for message in request["messages"]:
        for block in message["content"]:
            if "text" in block:
                parts.append(block["text"])
    return "\n".join(parts)


def block_data(request: dict[str, Any], tag: str) -> Any:
    """The JSON inside the request's <tag>...</tag> block (the data the model was given)."""
    text = texts(request)
    start = text.index(f"<{tag}>") + len(tag) + 2
    return json.loads(text[start : text.index(f"</{tag}>")])


def tool_name(request: dict[str, Any]) -> str:
    return request["toolConfig"]["tools"][0]["toolSpec"]["name"]


def answer_from_evidence(request: dict[str, Any]) -> dict[str, Any]:
    """A grounded draft: the first sentence-sized piece of the best chunk, cited, with one claim."""
    chunk = block_data(request, "evidence")[0]
    text = " ".join(chunk["text"].split())[:160]
    return {"answered": True, "answer": text, "confidence": 0.9,
            "claims": [{"text": text, "chunk_ids": [chunk["chunk_id"]]}]}


def quote_sentence_with(word: str) -> Callable[[dict[str, Any]], dict[str, Any]]:
    """A quote pick (MODEL_ANSWER_FORMAT=quote): the first offered sentence holding `word`, else none."""
    def answer(request: dict[str, Any]) -> dict[str, Any]:
        offered = [row for passage in block_data(request, "evidence") for row in passage["sentences"]]
        return {"sentence": next((row["id"] for row in offered if word in row["text"]), "none")}

    return answer


def all_supported(request: dict[str, Any]) -> dict[str, Any]:
    claims = block_data(request, "claims")
    return {"verdicts": [{"claim": c["claim"], "supported": True} for c in claims]}


def none_supported(request: dict[str, Any]) -> dict[str, Any]:
    claims = block_data(request, "claims")
    return {"verdicts": [{"claim": c["claim"], "supported": False} for c in claims]}


def grade_all(verdict: str) -> Callable[[dict[str, Any]], dict[str, Any]]:
    def answer(request: dict[str, Any]) -> dict[str, Any]:
        chunks = block_data(request, "evidence")
        return {"verdict": verdict, "chunks": [{"chunk_id": c["chunk_id"], "relevant": True} for c in chunks]}

    return answer


# What a well-behaved model answers when the script says nothing more for a tool.
DEFAULTS: dict[str, Behaviour] = {
    "TriageDecision": {"intent": "knowledge", "restricted": False, "frustration": False},
    "StandaloneQuery": lambda request: {"standalone_query": block_data(request, "user_message")},
    "EvidenceGrade": grade_all("sufficient"),
    "ClarifyingQuestion": {"question": "کدام مورد منظور شماست؟"},
    "GroundedAnswer": answer_from_evidence,
    "QuotedAnswer": {"sentence": "none"},
    "Reply": {"reply": "سلام! چطور می‌توانم کمکتان کنم؟"},
    "ClaimCheck": all_supported,
}


class ScriptedBedrock:
    """Queue behaviours per tool name with `script(tool, *behaviours)`; `requests` records what was sent."""

    def __init__(self) -> None:
        self.client = boto3.client(
            "bedrock-runtime", region_name=REGION, aws_access_key_id="testing", aws_secret_access_key="testing",
            config=Config(retries={"total_max_attempts": 1}),
        )
        self.requests: list[dict[str, Any]] = []
        self.sleeps: list[float] = []
        self.queues: dict[str, deque] = defaultdict(deque)
        self.stubber = Stubber(self.client)
        # provide-client-params runs before parameter validation and before the Stubber's before-call
        # handler pops its queue: the response for this very request is queued here.
        self.client.meta.events.register("provide-client-params.bedrock-runtime.Converse", self._respond)
        self.stubber.activate()
        self._ids = 0

    def script(self, tool: str, *behaviours: Behaviour) -> None:
        self.queues[tool].extend(behaviours)

    def count(self, tool: str | None = None) -> int:
        return sum(1 for r in self.requests if tool is None or tool_name(r) == tool)

    def _respond(self, params: dict[str, Any], **_: Any) -> None:
        request = copy.deepcopy(params)
        self.requests.append(request)
        name = tool_name(request)
        behaviour = self.queues[name].popleft() if self.queues[name] else DEFAULTS[name]
        if callable(behaviour):
            behaviour = behaviour(request)
        if isinstance(behaviour, tuple) and behaviour[0] == "error":
            _, code, status = behaviour
            self.stubber.add_client_error("converse", service_error_code=code, service_message="Too many requests",
                                          http_status_code=status)
            return
        if isinstance(behaviour, tuple) and behaviour[0] == "text":
            content, stop = [{"text": behaviour[1]}], "end_turn"
        else:
            self._ids += 1
            content = [{"toolUse": {"toolUseId": f"tooluse-{self._ids}", "name": name, "input": behaviour}}]
            stop = "tool_use"
        self.stubber.add_response("converse", {
            "output": {"message": {"role": "assistant", "content": content}},
            "stopReason": stop,
            "usage": {"inputTokens": 300, "outputTokens": 40, "totalTokens": 340},
            "metrics": {"latencyMs": 400},
        })
