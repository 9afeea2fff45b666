"""The production model provider: Bedrock models through langchain-aws (see provider.py)."""

from insurance_agent.roles.bedrock.provider import BedrockProvider

__all__ = ["BedrockProvider"]
