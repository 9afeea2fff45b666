"""What a tenant's corpus is about, as a reader with given roles sees it: the scope of questions.

A question is in scope when the tenant's documents speak of it, not when it says «بیمه»: «ماشینمو
فروختم، تخفیف عدم خسارتم مال منه یا خریدار؟» or an officer's «کد تخفیف داخلی مشتریان ناوگان چیست؟»
are questions for the documents. `CorpusScope` holds the scope terms (the configured provider's word analysis) of every chunk the
caller may read, and the documents' titles, products and domains (the topics a model is told about). `covers(message)` is true when at least half of the message's
own content terms (question words and fillers aside) occur somewhere in that corpus.

`corpus_scope(tenant_id, roles)` scrolls the tenant's chunks with the same tenant and audience
filter as retrieval (an officer-only document never widens a user's scope), once per process and
(tenant, audiences); the cached scope is reused while the readable chunk count is unchanged and
for at most SCOPE_TTL_SECONDS.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from insurance_agent.roles.base import word_analysis

logger = logging.getLogger(__name__)

COVERAGE = 0.5
SCOPE_TTL_SECONDS = 300.0
MAX_CHUNKS = 20_000
MAX_TOPICS = 40
SCROLL_PAGE = 256


def message_terms(message: str) -> list[frozenset[str]]:
    """The message's own words (question words, fillers, stopwords and numbers aside), each as the
    set of forms it may take in the corpus (the configured provider's word analysis)."""
    return word_analysis().message_words(message)


@dataclass(frozen=True)
class CorpusScope:
    """The readable corpus of one tenant: its vocabulary and its topics (titles, products, domains)."""

    terms: frozenset[str] = field(default_factory=frozenset)
    topics: tuple[str, ...] = ()
    chunks: int = 0

    def coverage(self, message: str) -> tuple[int, int]:
        """(words of the message found in the corpus, words of the message), question words aside."""
        words = message_terms(message)
        return sum(bool(forms & self.terms) for forms in words), len(words)

    def covers(self, message: str) -> bool:
        """At least half of the message's content terms, and at least one, occur in the corpus."""
        found, total = self.coverage(message)
        return found > 0 and found / total >= COVERAGE


def scope_from_payloads(payloads: Iterable[Mapping[str, object]]) -> CorpusScope:
    """The scope of these chunk payloads (title, heading, text, product, domain)."""
    analysis = word_analysis()
    terms: set[str] = set()
    topics: dict[str, None] = {}
    count = 0
    for payload in payloads:
        count += 1
        for key in ("title", "heading", "text"):
            value = payload.get(key)
            if isinstance(value, str) and value:
                terms.update(analysis.scope_terms(value))
        for key in ("title", "product", "domain"):
            value = payload.get(key)
            if isinstance(value, str) and value.strip() and value.strip() != "general":
                topics.setdefault(" ".join(value.replace("_", " ").split()), None)
                if key != "title":
                    terms.update(analysis.scope_terms(value.replace("_", " ")))
    return CorpusScope(terms=frozenset(terms), topics=tuple(list(topics)[:MAX_TOPICS]), chunks=count)


_cache: dict[tuple[str, str, tuple[str, ...]], tuple[float, int, CorpusScope]] = {}
_lock = threading.Lock()


def clear_cache() -> None:
    with _lock:
        _cache.clear()


def corpus_scope(tenant_id: str, roles: list[str]) -> CorpusScope | None:
    """The tenant's readable corpus for `roles`; None when no collection exists yet."""
    from qdrant_client import models

    from insurance_agent.config import get_settings
    from insurance_search import index
    from insurance_search.access import allowed_audiences, require_tenant

    require_tenant(tenant_id)
    audiences = tuple(allowed_audiences(roles))
    if not audiences:
        return CorpusScope()
    if not index.collection_exists():
        return None
    collection = get_settings().retrieval.collection
    security = models.Filter(
        must=[
            models.FieldCondition(key="tenant_id", match=models.MatchValue(value=tenant_id)),
            models.FieldCondition(key="audience", match=models.MatchAny(any=list(audiences))),
        ]
    )
    client = index.get_client()
    with index.qdrant_errors():
        count = client.count(collection, count_filter=security, exact=True).count
    key = (collection, tenant_id, audiences)
    now = time.monotonic()
    with _lock:
        cached = _cache.get(key)
    if cached and cached[1] == count and now - cached[0] < SCOPE_TTL_SECONDS:
        return cached[2]

    payloads: list[Mapping[str, object]] = []
    offset = None
    with index.qdrant_errors():
        while len(payloads) < MAX_CHUNKS:
            points, offset = client.scroll(
                collection,
                scroll_filter=security,
                limit=SCROLL_PAGE,
                offset=offset,
                with_payload=["tenant_id", "audience", "title", "heading", "text", "product", "domain"],
                with_vectors=False,
            )
            for point in points:
                payload = point.payload or {}
                # The filter is re-checked on what came back, as retrieval does.
                if payload.get("tenant_id") == tenant_id and set(payload.get("audience") or ()) & set(audiences):
                    payloads.append(payload)
            if offset is None:
                break
    if len(payloads) >= MAX_CHUNKS:
        logger.warning("corpus scope of tenant %s read from its first %d chunks only", tenant_id, MAX_CHUNKS)
    scope = scope_from_payloads(payloads)
    with _lock:
        _cache[key] = (now, count, scope)
    return scope
