"""Load what a first turn needs while `agent chat` shows its prompt (or `agent serve` waits for its
first request), instead of inside that turn.

A process's first turn used to load everything itself: with the offline provider about 8 s of
embedding the triage exemplars on 2 cores, then the word-analysis indexes, the BM25 encoder, the
ASL parse (docs/local-stack.md, "The first turn"). `LocalStack.warm_up` runs `run` in a background
thread and holds turns until it has finished. The steps fill the same per-process caches a turn
fills, which do not lock: a turn running beside the warm-up would load the same model a second
time, and two threads opening the embedded Qdrant store at once fail. Held, a turn loses nothing:
whatever it waits for, it would have loaded itself.

A step that fails is logged (logs/agent.log) and skipped; the turn that needs it meets the same
failure and reports it as it always has. The exemplar vectors are kept in the home
(`cache/exemplar_embeddings.npz`, AGENT_EMBEDDING_STORE), so only a home's first warm-up embeds them.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from typing import Any

SAMPLE_QUERY = "فرانشیز بیمه بدنه خودرو چقدر است؟"


def steps(stack: Any, tenant: str | None, roles: Sequence[str]) -> list[tuple[str, Callable[[], object]]]:
    """(name, load) in the order a turn needs them; only what the configured stack uses."""
    from agent_local import moto_patches
    from insurance_agent.config import get_settings
    from insurance_agent.roles.base import get_provider
    from insurance_search import embeddings, index, topics

    found: list[tuple[str, Callable[[], object]]] = [
        ("state machine", lambda: moto_patches.program(stack.definition())),
        ("index", index.get_client),
        ("model provider", lambda: _warm_providers(get_provider)),
    ]
    store = os.environ.get("AGENT_EMBEDDING_STORE")
    # The exemplar store is the offline triage's.
    if get_settings().models.provider_for("triage") == "offline" and store:
        from insurance_offline.exemplars import ensure_store

        found.append(("exemplar store", lambda: ensure_store(store)))
    found += [
        ("dense encoder", lambda: embeddings.dense_encoder().embed_query(SAMPLE_QUERY)),
        ("sparse encoder", lambda: embeddings.sparse_encoder().embed_query(SAMPLE_QUERY)),
    ]
    if get_settings().retrieval.late_model.strip().lower() != "none":
        found.append(("late encoder", lambda: embeddings.late_encoder().embed_query(SAMPLE_QUERY)))
    if tenant:
        found.append(("corpus scope", lambda: topics.corpus_scope(tenant, list(roles))))
    return found


def _warm_providers(get_provider: Callable[[str], Any]) -> None:
    """Warm every provider a role is sent to (ROLE_PROVIDERS), each once."""
    from insurance_agent.config import ROLES, get_settings

    models = get_settings().models
    for provider in models.providers_used():
        get_provider(next(role for role in ROLES if models.provider_for(role) == provider)).warm_up()


def run(stack: Any, *, tenant: str | None = None, roles: Sequence[str] = ("user",)) -> dict[str, float]:
    """Run every step now; returns the seconds of each step that succeeded."""
    from insurance_agent.observability import logger

    started = time.perf_counter()
    seconds: dict[str, float] = {}
    failed: list[str] = []
    try:
        planned = steps(stack, tenant, roles)
    except Exception:  # noqa: BLE001 - the settings themselves are broken; every turn will say so
        logger.exception("warm-up not possible")
        return seconds
    for name, load in planned:
        begin = time.perf_counter()
        try:
            load()
        except Exception:  # noqa: BLE001 - the turn that needs it reports the failure
            logger.exception("warm-up step failed", extra={"step": name})
            failed.append(name)
            continue
        seconds[name] = round(time.perf_counter() - begin, 3)
    logger.info("warm-up done", extra={"seconds": round(time.perf_counter() - started, 3), "steps": seconds,
                                       "failed": failed})
    return seconds


def prepare_store(home: Any) -> bool:
    """Write the home's exemplar store now, outside any chat (`agent ingest` calls it): a home's first
    `agent chat` then starts from the store too. True when it was written; nothing for another provider
    or a store switched off."""
    from agent_local.stack import EMBEDDING_STORE, EMBEDDING_STORE_FILE
    from insurance_agent.config import get_settings

    path = os.environ.setdefault(EMBEDDING_STORE, str(home / EMBEDDING_STORE_FILE))
    if get_settings().models.provider_for("triage") != "offline" or not path:
        return False
    from insurance_offline.exemplars import ensure_store

    return ensure_store(path)

