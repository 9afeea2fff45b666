"""The production model provider: Bedrock models through langchain-aws (see provider.py)."""

from insurance_llm.bedrock.provider import BedrockProvider

__all__ = ["BedrockProvider"]
