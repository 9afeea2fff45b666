"""The account tool's data: the authenticated user's own policies, turned into citable evidence.

Looked up only by the (tenant_id, user_id) of the execution input, never by anything in the message.
"""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Protocol

from boto3.dynamodb.conditions import Key
from pydantic import BaseModel, ConfigDict, ValidationError

from insurance_agent.config import get_settings
from insurance_agent.errors import AgentError, ConfigurationError, TransientError
from insurance_agent.models.chunks import RetrievedChunk
from insurance_agent.secrets import resolve
from insurance_agent.store import dynamo


class PolicyRecord(BaseModel):
    model_config = ConfigDict(extra="allow")

    tenant_id: str
    user_id: str
    policy_number: str
    product: str
    title: str
    status: str = "active"
    start_date: str | None = None
    end_date: str | None = None
    premium: str | None = None
    currency: str | None = None
    insured: str | None = None
    coverage_limit: str | None = None
    deductible: str | None = None


class AccountsSource(Protocol):
    def policies(self, tenant_id: str, user_id: str) -> list[PolicyRecord]: ...


def mask_policy_number(number: str) -> str:
    """Keep the product prefix and the last four characters; the rest becomes '*'."""
    head, _, _ = number.partition("-")
    tail = number[-4:]
    middle = len(number) - len(head) - len(tail)
    return head + "*" * max(middle, 0) + tail if middle > 0 else "*" * (len(number) - 4) + tail


class DynamoAccountsSource:
    """Policies kept in this service's accounts table (loaded with `agent accounts load`)."""

    def policies(self, tenant_id: str, user_id: str) -> list[PolicyRecord]:
        try:
            items = dynamo.table(get_settings().tables.accounts).query(
                KeyConditionExpression=Key("user_key").eq(f"{tenant_id}#{user_id}")
            )["Items"]
        except Exception as error:  # noqa: BLE001 - re-raised typed
            dynamo.raise_typed(error)
        records = [PolicyRecord.model_validate(item) for item in items]
        # Defence in depth: the key already scopes the query; never return someone else's row.
        return [r for r in records if r.tenant_id == tenant_id and r.user_id == user_id]

    def load(self, records: list[PolicyRecord]) -> int:
        table = dynamo.table(get_settings().tables.accounts)
        with table.batch_writer() as batch:
            for record in records:
                batch.put_item(Item=record.model_dump(exclude_none=True) | {"user_key": f"{record.tenant_id}#{record.user_id}"})
        return len(records)


def policy_evidence(records: list[PolicyRecord], language: str = "fa") -> list[RetrievedChunk]:
    """One citable chunk per policy, with a masked policy number."""
    labels_fa = {
        "status": "وضعیت", "start_date": "تاریخ شروع", "end_date": "تاریخ پایان", "premium": "حق بیمه",
        "insured": "موضوع بیمه", "coverage_limit": "سقف پوشش", "deductible": "فرانشیز",
    }
    labels_en = {
        "status": "status", "start_date": "start date", "end_date": "end date", "premium": "premium",
        "insured": "insured", "coverage_limit": "coverage limit", "deductible": "deductible",
    }
    labels = labels_en if language == "en" else labels_fa
    chunks = []
    for record in records:
        masked = mask_policy_number(record.policy_number)
        lines = [f"{record.title} ({masked})"]
        for field, label in labels.items():
            value = getattr(record, field)
            if value:
                suffix = f" {record.currency}" if field == "premium" and record.currency else ""
                lines.append(f"{label}: {value}{suffix}")
        chunks.append(
            RetrievedChunk(
                chunk_id=f"account:{masked}",
                file_id=f"account:{masked}",
                title=f"{record.title} ({masked})",
                domain=None,
                product=record.product,
                language=language,
                audience=["user", "officer", "admin"],
                tenant_id=record.tenant_id,
                text="\n".join(lines),
                score=1.0,
            )
        )
    return chunks


class HttpAccountsSource:
    """The main backend's policies API: GET {base}/tenants/{tenant}/users/{user}/policies.

    Bounded retries with backoff on connection errors and 5xx/429, per-request timeouts; a 404 means
    the user has no policies. Every record is re-checked against the identity asked for.
    """

    def __init__(self, base_url: str, *, token: str | None = None, timeout: float = 3.0, attempts: int = 3) -> None:
        import urllib3

        self.base_url = base_url.rstrip("/")
        self.headers = {"Accept": "application/json"} | ({"Authorization": f"Bearer {token}"} if token else {})
        retry = urllib3.Retry(total=attempts - 1, backoff_factor=0.2, status_forcelist=(429, 500, 502, 503, 504),
                              allowed_methods={"GET"}, raise_on_status=False)
        self.http = urllib3.PoolManager(retries=retry, timeout=urllib3.Timeout(connect=timeout, read=timeout))

    def policies(self, tenant_id: str, user_id: str) -> list[PolicyRecord]:
        from urllib.parse import quote

        import urllib3

        url = f"{self.base_url}/tenants/{quote(tenant_id, safe='')}/users/{quote(user_id, safe='')}/policies"
        try:
            response = self.http.request("GET", url, headers=self.headers)
        except urllib3.exceptions.HTTPError as error:
            raise TransientError("accounts API unreachable") from error
        if response.status == 404:
            return []
        if response.status in (429,) or response.status >= 500:
            raise TransientError(f"accounts API answered {response.status}")
        if response.status != 200:
            raise AccountsSourceError(f"accounts API answered {response.status}")
        try:
            payload = json.loads(response.data)
            items = payload["policies"] if isinstance(payload, dict) else payload
            records = [PolicyRecord.model_validate(item | {"tenant_id": item.get("tenant_id", tenant_id),
                                                            "user_id": item.get("user_id", user_id)}) for item in items]
        except (ValueError, KeyError, TypeError, ValidationError) as error:
            raise AccountsSourceError("accounts API returned malformed policies") from error
        return [r for r in records if r.tenant_id == tenant_id and r.user_id == user_id]


class AccountsSourceError(AgentError):
    """The accounts source answered, but not with usable policies (not worth retrying)."""

    code = "accounts_source"


@lru_cache(maxsize=1)
def get_accounts_source() -> AccountsSource:
    """The configured source: this service's table (default) or the backend's HTTP API."""
    settings = get_settings().accounts
    if settings.source == "http":
        if not settings.api_url:
            raise ConfigurationError("ACCOUNTS_SOURCE=http needs ACCOUNTS_API_URL")
        token = settings.api_token or resolve("ACCOUNTS_API_TOKEN", "ACCOUNTS_API_TOKEN_SECRET")
        return HttpAccountsSource(settings.api_url, token=token, timeout=settings.timeout_seconds)
    if settings.source != "dynamodb":
        raise ConfigurationError(f"unknown accounts source {settings.source!r}")
    return DynamoAccountsSource()
