"""Options of a clarifying question, taken only from the payload of the chunks retrieved this turn.

An ungrounded clarifying question is a hallucination with a question mark on it (ADR-0006): the
options are the distinct documents (file_id, title, domain) among the retrieved chunks, or the
distinct passages grade found relevant, best score first, never anything a model proposes.
"""

from __future__ import annotations

from collections.abc import Iterable

from insurance_agent.models.chunks import RetrievedChunk
from insurance_agent.models.turn import ClarifyOption
from insurance_agent.policy.provisions import distinct_passages, provision_label

MAX_OPTIONS = 4


def clarify_options(
    chunks: Iterable[RetrievedChunk], language: str = "fa", limit: int = MAX_OPTIONS
) -> list[ClarifyOption]:
    """Distinct (file_id, title, domain) among `chunks`, ordered by their best score, at most `limit`.

    The label is the document title (shown verbatim: titles are not translated, whatever
    `language` the user writes in); a chunk without a title falls back to its domain or file id.
    """
    best: dict[tuple[str, str, str | None], float] = {}
    first_seen: dict[tuple[str, str, str | None], int] = {}
    for position, chunk in enumerate(chunks):
        key = (chunk.file_id, chunk.title.strip(), chunk.domain)
        if key not in best or chunk.score > best[key]:
            best[key] = chunk.score
        first_seen.setdefault(key, position)
    ordered = sorted(best, key=lambda key: (-best[key], first_seen[key]))
    options = []
    for file_id, title, domain in ordered[:limit]:
        label = title or domain or file_id
        options.append(ClarifyOption(label=label, file_id=file_id, title=title or None, domain=domain))
    return options


def passage_options(
    chunks: Iterable[RetrievedChunk], chunk_ids: Iterable[str], language: str = "fa", limit: int = MAX_OPTIONS
) -> list[ClarifyOption]:
    """One option per retrieved passage among `chunk_ids`, best score first, at most `limit`: "which of
    these is your case?" when the passages state different rules and nothing pins the question to one.
    The label names the document, the provision and its opening words (policy/provisions.py)."""
    return [
        ClarifyOption(label=provision_label(chunk, language), file_id=chunk.file_id, title=chunk.title or None,
                      domain=chunk.domain, chunk_id=chunk.chunk_id)
        for chunk in distinct_passages(chunks, chunk_ids)[:limit]
    ]
