"""The deterministic offline model provider: real algorithms, no language model (see provider.py)."""

from __future__ import annotations

from typing import Any

__all__ = ["OfflineProvider"]


def __getattr__(name: str) -> Any:
    # Resolved on first use: a node that needs one module of this package (contextualize's
    # deterministic first-turn rewrite) must not import every role and numpy at cold start.
    if name == "OfflineProvider":
        from insurance_offline.provider import OfflineProvider

        return OfflineProvider
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
