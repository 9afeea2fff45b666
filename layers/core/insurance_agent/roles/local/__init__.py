"""The deterministic offline model provider: real algorithms, no language model (see provider.py)."""

from insurance_agent.roles.local.provider import LocalProvider

__all__ = ["LocalProvider"]
