"""BedrockProvider: the roles (roles/llm/provider.py) on Bedrock models through langchain-aws ChatBedrockConverse."""

from __future__ import annotations

from collections.abc import Callable

from insurance_agent.config import Settings, get_settings
from insurance_agent.roles.bedrock.client import ConverseCaller
from insurance_agent.roles.llm.provider import LanguageModelProvider, StructuredCaller


class BedrockProvider(LanguageModelProvider):
    name = "bedrock"

    def __init__(
        self,
        caller: StructuredCaller | None = None,
        *,
        client: object | None = None,
        settings: Settings | None = None,
        sleep: Callable[[float], None] | None = None,
    ) -> None:
        settings = settings or get_settings()
        if caller is None:
            options = {"sleep": sleep} if sleep is not None else {}
            caller = ConverseCaller(client=client, settings=settings.models, **options)
        super().__init__(caller, settings)
