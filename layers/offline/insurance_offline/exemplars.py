"""The exemplar-embedding store: written once when the Triage image is built
(`python -m insurance_offline.exemplars PATH`, containers/triage/Dockerfile), and by the local stack's
warm-up into its home (`ensure_store`).

It holds the triage exemplars embedded exactly as a container's first turn embeds them; embedding.py
reads that file at run time (AGENT_EMBEDDING_STORE). Kept apart from the runtime module so that the
classifier (triage.py) and the embedding it uses do not import each other.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np

from insurance_agent.policy.escalation import load_policy
from insurance_offline import embedding, triage


def batches() -> list[tuple[list[str], np.ndarray]]:
    """The batches a first turn embeds (the classifier's exemplars, the policy paraphrases), each with
    its vectors: this process's own, embedded now unless the store already holds them."""
    classifier = triage.default_classifier()
    paraphrases = triage.default_policy_exemplars(tuple(intent.name for intent in load_policy().restricted_intents))
    return [(classifier.texts, classifier.matrix), (paraphrases.texts, paraphrases.matrix)]


def write_store(path: str | Path) -> int:
    """Save every batch of `batches()` to `path` (.npz); returns the number of texts."""
    found = batches()
    save_batches(path, found)
    return sum(len(texts) for texts, _ in found)


def ensure_store(path: str | Path) -> bool:
    """Write the store at `path` unless it holds these batches for this model already; True when written.

    An edited exemplar file or another model version makes the file stale: it is written again. The
    new file replaces the old one by a rename, so a process reading it sees one or the other whole.
    """
    found = batches()
    stored = embedding.read_store(path)
    if all(tuple(texts) in stored for texts, _ in found):
        return False
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f"{path.name}.{os.getpid()}.partial")
    save_batches(partial, found)
    os.replace(partial, path)
    return True


def save_batches(path: str | Path, batches: list[tuple[list[str], np.ndarray]]) -> None:
    arrays = {"model": np.array(embedding.model_id()), "batches": np.array(len(batches))}
    for index, (texts, matrix) in enumerate(batches):
        arrays[f"texts_{index}"] = np.array(texts)
        arrays[f"vectors_{index}"] = matrix
    with open(path, "wb") as out:
        np.savez(out, **arrays)


if __name__ == "__main__":
    print(f"{write_store(sys.argv[1])} exemplar texts embedded into {sys.argv[1]}")
