"""The configured provider's word analysis for policy code (insurance_agent/analysis.py)."""

from __future__ import annotations

import re

from insurance_agent.analysis import Terms
from insurance_agent.roles.base import word_analysis


def terms() -> Terms:
    """The analysis of the configured model provider (MODEL_PROVIDER)."""
    return word_analysis()


def adds_terms(candidate: str, previous: str) -> bool:
    """Whether searching `candidate` can find anything `previous` could not: it has a term `previous` lacks."""
    analysis = terms()
    return bool(analysis.text_terms(candidate) - analysis.text_terms(previous))


def metadata_text(chunk) -> str:  # noqa: ANN001 - any chunk model with title/product/domain/file_id
    """The words naming a chunk's document: title, product, domain and file id ("expat_health" -> "expat health")."""
    parts = [chunk.title, chunk.product or "", chunk.domain or "", chunk.file_id]
    return " ".join(re.sub(r"[^\w]+|_", " ", part) for part in parts if part)
