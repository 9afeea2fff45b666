"""The non-turn work of the `agent` commands, as plain functions over JSON-able values.

The CLI calls them in-process when it holds $AGENT_HOME, and the running local stack calls the same
functions for other processes through its `/agent/v1/<operation>` endpoint, so both paths behave alike.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any


class OperationError(ValueError):
    """Bad input to an operation; the message is safe to show."""


def search(queries: list[str], tenant: str, roles: list[str], domain: str | None = None,
           k: int | None = None) -> dict[str, Any]:
    from insurance_agent.errors import ConfigurationError, InvalidInputError
    from insurance_search.search import search as run_search

    results = []
    for query in queries:
        try:
            hits = run_search(query, tenant_id=tenant, roles=roles, domain=domain, k=k)
        except ConfigurationError as error:
            # No index is not "no hits": the whole command stops and says so.
            raise OperationError(str(error)) from None
        except InvalidInputError as error:
            results.append({"query": query, "error": str(error)})
            continue
        results.append({"query": query, "hits": [
            {"chunk_id": h.chunk_id, "file_id": h.file_id, "title": h.title, "score": round(h.score, 4)} for h in hits
        ]})
    return {"results": results}


def ingest(tenant: str, directory: str | None = None, reset: bool = False, delete: str | None = None,
           sync: bool = False, progress: Any = None) -> dict[str, Any]:
    from insurance_search.ingest import delete_file, ingest_directory

    if delete:
        return {"deleted": delete, "chunks": delete_file(tenant, delete)}
    if not directory or not Path(directory).is_dir():
        raise OperationError(f"not a folder: {directory}")
    report = ingest_directory(Path(directory), tenant, reset=reset, sync=sync, progress=progress)
    return {"files": report.files, "chunks": report.chunks, "seconds": report.seconds,
            "added": report.added, "changed": report.changed, "unchanged": report.unchanged,
            "removed": report.removed,
            "skipped": [{"path": str(s.path), "reason": s.reason, "detail": s.detail} for s in report.skipped],
            "warnings": [{"path": str(w.path), "detail": w.detail} for w in getattr(report, "warnings", [])],
            "flagged": [{"path": str(f.path), "flags": list(f.flags), "chunks": f.chunks}
                        for f in getattr(report, "flagged", [])]}


def documents(tenant: str, show: str | None = None) -> dict[str, Any]:
    """The tenant's documents, or one document's chunks (`show`: a file_id)."""
    from insurance_agent.errors import InvalidInputError
    from insurance_search.access import require_tenant
    from insurance_search.catalog import document_chunks, list_documents

    try:
        require_tenant(tenant)
        if show:
            return {"chunks": document_chunks(tenant, show)}
        return {"documents": [doc.model_dump() for doc in list_documents(tenant)]}
    except InvalidInputError as error:
        raise OperationError(str(error)) from None


def load_accounts(records: list[dict[str, Any]]) -> dict[str, Any]:
    from pydantic import ValidationError

    from insurance_agent.store.accounts import DynamoAccountsSource, PolicyRecord

    try:
        policies = [PolicyRecord.model_validate(r) for r in records]
    except (ValidationError, TypeError) as error:
        raise OperationError(f"bad policy record: {str(error).splitlines()[0]}") from None
    return {"loaded": DynamoAccountsSource().load(policies)}


def memory(tenant: str, user: str) -> dict[str, Any]:
    from insurance_agent.store.profiles import get_profile

    return {"profile": get_profile(tenant, user).public()}


def tenant_chunks(tenant: str) -> dict[str, Any]:
    """How many chunks a tenant has in the store (0: nothing ingested for it, or no collection yet)."""
    from qdrant_client import models

    from insurance_agent.config import get_settings
    from insurance_search.index import get_client

    client = get_client()
    collection = get_settings().retrieval.collection
    if not client.collection_exists(collection):
        return {"tenant": tenant, "chunks": 0}
    count = client.count(collection, count_filter=models.Filter(must=[
        models.FieldCondition(key="tenant_id", match=models.MatchValue(value=tenant))]), exact=True).count
    return {"tenant": tenant, "chunks": count}


OPERATIONS = {
    "search": search,
    "ingest": ingest,
    "documents": documents,
    "accounts": load_accounts,
    "memory": memory,
    "tenant": tenant_chunks,
}


def qdrant_lock_message(error: BaseException) -> str | None:
    """A readable message when the embedded store is open in another process (Edge's StoreBusyError;
    qdrant-client's local mode raises RuntimeError)."""
    from insurance_agent.errors import StoreBusyError

    if not isinstance(error, StoreBusyError) and "already accessed by another instance" not in str(error):
        return None
    from insurance_agent.config import get_settings

    path = get_settings().retrieval.qdrant_path
    return (f"the chunk store {path} is open in another process that is not an `agent` command "
            "(a script, a benchmark or a test using the same AGENT_HOME); stop it, or use another AGENT_HOME")
