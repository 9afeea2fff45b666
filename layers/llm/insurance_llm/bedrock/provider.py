"""BedrockProvider: the roles (insurance_llm/provider.py) on Bedrock models through langchain-aws ChatBedrockConverse."""

from __future__ import annotations

from typing import Any

from insurance_agent.config import ModelSettings
from insurance_llm.bedrock.client import ConverseCaller
from insurance_llm.provider import LanguageModelProvider


class BedrockProvider(LanguageModelProvider):
    """`BedrockProvider(client=...)` takes a bedrock-runtime client (tests: one behind a Stubber)."""

    name = "bedrock"

    def default_caller(self, settings: ModelSettings, **options: Any) -> ConverseCaller:
        return ConverseCaller(settings=settings, **options)
