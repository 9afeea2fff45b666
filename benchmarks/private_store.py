"""A benchmark's own embedded store: its AGENT_HOME, no Qdrant server, no model hub, no stale caches."""

from __future__ import annotations

import os
from pathlib import Path


def use_private_store(home: Path, *, fresh_encoders: bool = False, **variables: str) -> None:
    """Point settings and the index at an embedded store under `home`; `variables` set more of the environment.

    A URL the caller's environment names is dropped, so a benchmark never writes into a real server.
    `fresh_encoders` reloads the encoders too, for a run that changes which models are configured.
    """
    os.environ["AGENT_HOME"] = str(home)
    os.environ["AGENT_QDRANT_PATH"] = str(home / "qdrant")
    os.environ.pop("AGENT_QDRANT_URL", None)
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ.update(variables)
    from insurance_agent.config import get_settings
    from insurance_search import embeddings, index

    get_settings.cache_clear()
    index.reset_caches()
    if fresh_encoders:
        embeddings.clear_encoder_caches()
