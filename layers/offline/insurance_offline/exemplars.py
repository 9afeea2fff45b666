"""The exemplar-embedding recorder, run once when the Triage image is built:
`python -m insurance_offline.exemplars PATH` (containers/triage/Dockerfile).

It embeds the triage exemplars exactly as a container's first turn does and saves every batch;
embedding.py reads that file at run time (AGENT_EMBEDDING_STORE). Kept apart from the runtime module
so that the classifier (triage.py) and the embedding it uses do not import each other.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

from insurance_agent.errors import ConfigurationError
from insurance_agent.policy.escalation import load_policy
from insurance_offline import embedding, triage


def write_store(path: str | Path) -> int:
    """Embed the triage exemplars exactly as a container's first turn does and save every batch to
    `path` (.npz); returns the number of texts."""
    embedding._recording = []
    try:
        triage.default_classifier()
        triage.default_policy_exemplars(tuple(intent.name for intent in load_policy().restricted_intents))
        batches = embedding._recording
    finally:
        embedding._recording = None
    if not batches:
        raise ConfigurationError("no exemplar was embedded: the triage classifier was already built in this process")
    save_batches(path, batches)
    return sum(len(texts) for texts, _ in batches)


def save_batches(path: str | Path, batches: list[tuple[list[str], np.ndarray]]) -> None:
    arrays = {"model": np.array(embedding.model_id()), "batches": np.array(len(batches))}
    for index, (texts, matrix) in enumerate(batches):
        arrays[f"texts_{index}"] = np.array(texts)
        arrays[f"vectors_{index}"] = matrix
    with open(path, "wb") as out:
        np.savez(out, **arrays)


if __name__ == "__main__":
    print(f"{write_store(sys.argv[1])} exemplar texts embedded into {sys.argv[1]}")
