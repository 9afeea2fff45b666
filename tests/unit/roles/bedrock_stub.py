"""A real bedrock-runtime client behind botocore's Stubber, for tests of the Bedrock provider.

Nothing leaves the process: the Stubber answers every Converse call from a queue of wire responses
(and fails the test if a call was not expected). Requests are recorded as the API parameters that
langchain-aws built, after botocore validated them against the bedrock-runtime service model.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import boto3
from botocore.config import Config
from botocore.stub import Stubber
from insurance_agent.config import ModelSettings, PolicySettings, Settings
from insurance_llm.bedrock import BedrockProvider

REGION = "eu-central-1"
# The template's defaults as deployed: the models through the global cross-Region inference profile.
SMALL = "global.anthropic.claude-haiku-4-5-20251001-v1:0"
MAIN = "global.anthropic.claude-sonnet-4-6"


class StubbedBedrock:
    def __init__(self) -> None:
        self.client = boto3.client(
            "bedrock-runtime",
            region_name=REGION,
            aws_access_key_id="testing",
            aws_secret_access_key="testing",
            config=Config(retries={"total_max_attempts": 1}),
        )
        self.requests: list[dict[str, Any]] = []
        self.sleeps: list[float] = []
        self.client.meta.events.register(
            "provide-client-params.bedrock-runtime.Converse",
            lambda params, **_: self.requests.append(copy.deepcopy(params)),
        )
        self.stubber = Stubber(self.client)
        self.stubber.activate()
        self._calls = 0

    def provider(self, *, max_attempts: int = 3, guardrail_id: str | None = None, answer_format: str = "compose",
                 **policy: Any) -> BedrockProvider:
        settings = Settings(
            models=ModelSettings(
                provider="bedrock",
                small_model_id=SMALL,
                main_model_id=MAIN,
                bedrock_region=REGION,
                max_attempts=max_attempts,
                guardrail_id=guardrail_id,
                guardrail_version="4",
                answer_format=answer_format,
            ),
            policy=PolicySettings(**policy),
        )
        return BedrockProvider(client=self.client, settings=settings, sleep=self.sleeps.append)

    # -- queued responses -------------------------------------------------------------------------

    def _response(self, content: list[dict[str, Any]], stop: str) -> dict[str, Any]:
        return {
            "output": {"message": {"role": "assistant", "content": content}},
            "stopReason": stop,
            "usage": {"inputTokens": 321, "outputTokens": 45, "totalTokens": 366},
            "metrics": {"latencyMs": 420},
        }

    def tool(self, name: str, arguments: dict[str, Any]) -> None:
        """The model calls tool `name` with `arguments`."""
        self._calls += 1
        use = {"toolUse": {"toolUseId": f"tooluse-{self._calls}", "name": name, "input": arguments}}
        self.stubber.add_response("converse", self._response([use], "tool_use"))

    def text(self, text: str, stop: str = "end_turn") -> None:
        """The model answers in prose (a refusal) instead of calling the tool."""
        self.stubber.add_response("converse", self._response([{"text": text}], stop))

    def error(self, code: str = "ThrottlingException", status: int = 429, message: str = "Too many requests") -> None:
        self.stubber.add_client_error(
            "converse", service_error_code=code, service_message=message, http_status_code=status
        )

    # -- what was sent ----------------------------------------------------------------------------

    @property
    def last(self) -> dict[str, Any]:
        return self.requests[-1]


def texts(request: dict[str, Any]) -> str:
    """Every text block of the request's messages, joined (the data the model was given)."""
    parts = []
    for message in request["messages"]:
        for block in message["content"]:
            if "text" in block:
                parts.append(block["text"])
            if "toolResult" in block:
                parts.extend(c.get("text", "") for c in block["toolResult"]["content"])
    return "\n".join(parts)


def system_text(request: dict[str, Any]) -> str:
    return "\n".join(block["text"] for block in request.get("system", []) if "text" in block)


def tool_spec(request: dict[str, Any]) -> dict[str, Any]:
    tools = request["toolConfig"]["tools"]
    assert len(tools) == 1, tools
    return tools[0]["toolSpec"]


def tool_properties(request: dict[str, Any]) -> set[str]:
    return set(tool_spec(request)["inputSchema"]["json"]["properties"])


def block_data(request: dict[str, Any], tag: str) -> Any:
    """The JSON inside the request's <tag>...</tag> block."""
    text = texts(request)
    start = text.index(f"<{tag}>") + len(tag) + 2
    return json.loads(text[start : text.index(f"</{tag}>")])
