"""The one interface every model provider implements, and the factory that picks the configured one.

Each role takes its typed request and returns its typed result (models/roles.py); the nodes never
see which provider answered. Providers are registered by name with the dotted path of their class,
so a provider's heavy dependencies (langchain-aws for bedrock, the embedding model for local) are
imported only when that provider is selected.
"""

from __future__ import annotations

import importlib
import os
from abc import ABC, abstractmethod
from collections.abc import Mapping
from functools import lru_cache

from insurance_agent.analysis import PLAIN_TERMS, Terms
from insurance_agent.config import ROLES, ModelSettings, Role, SettingProblem, get_settings
from insurance_agent.errors import ConfigurationError
from insurance_agent.models.roles import (
    ClarifyRequest,
    ClarifyResult,
    ContextualizeRequest,
    ContextualizeResult,
    GenerateRequest,
    GenerateResult,
    GradeRequest,
    GradeResult,
    TriageRequest,
    TriageResult,
    VerifyRequest,
    VerifyResult,
)
from insurance_agent.serving import current_role, serving  # noqa: F401 - serving: re-exported


class ModelProvider(ABC):
    """A backend for the six model roles. Implementations must be safe to reuse across invocations."""

    #: Name used in configuration (MODEL_PROVIDER) and in logs/metrics.
    name: str = "abstract"
    #: How policy and the corpus scope compare words with this provider (insurance_agent/analysis.py).
    terms: Terms = PLAIN_TERMS

    @abstractmethod
    def triage(self, request: TriageRequest) -> TriageResult: ...

    @abstractmethod
    def contextualize(self, request: ContextualizeRequest) -> ContextualizeResult: ...

    @abstractmethod
    def grade(self, request: GradeRequest) -> GradeResult: ...

    @abstractmethod
    def clarify(self, request: ClarifyRequest) -> ClarifyResult: ...

    @abstractmethod
    def generate(self, request: GenerateRequest) -> GenerateResult: ...

    @abstractmethod
    def verify(self, request: VerifyRequest) -> VerifyResult: ...

    @classmethod
    def check_settings(cls, settings: ModelSettings, environ: Mapping[str, str]) -> list[SettingProblem]:
        """What keeps this provider from running a turn with `settings` (and the environment `environ`
        its clients read): each missing or malformed setting, by name. Called at a model function's
        cold start and by the `agent` commands before any turn; must not call the model service."""
        return []

    @classmethod
    def check_service(cls, settings: ModelSettings, roles: tuple[Role, ...], seconds: float) -> list[SettingProblem]:
        """What the model service says of `settings` for `roles` (settings check_settings passed): a
        setting the service definitely refuses, such as a structured-output mode it rejects. Asks the
        service, in tiny requests, within `seconds` in all; no answer (a timeout, no connection, a server
        that fails every request) is no problem, since turns report those themselves. None by default."""
        return []

    # -- what a provider may decide without a model call (the contextualize node asks these first) --

    def first_turn_query(self, message: str) -> str | None:
        """The retrieval query of a first turn wholly in the corpus language, or None to ask the
        contextualize role. Such a turn has nothing to resolve or translate: by default the message is
        searched as written, without a model call."""
        return " ".join(message.split()) or None

    def broadened_query(self, previous_query: str) -> str | None:
        """A later retrieval round's query for such a turn written without a model call, or None (the
        default) to ask the contextualize role for a different query."""
        return None

    def warm_up(self) -> None:
        """Load now what the roles would load on their first call (the local stack calls this while
        the first message is typed, so that the first turn does not). Nothing by default."""


#: name -> "module:Class". Add a provider by adding a line here: a plug-in is imported only when it
#: is the configured one, so each ships only with the functions configured for it.
PROVIDERS: dict[str, str] = {
    "offline": "insurance_offline:OfflineProvider",
    "bedrock": "insurance_llm.bedrock:BedrockProvider",
    "openai": "insurance_llm.openai:OpenAIProvider",
}


#: The providers whose generate cannot read the evidence: they answer only from a passage the question
#: is pinned to (policy/provisions.py). Known by name, so that a function without their layer knows it.
CANNOT_READ = frozenset({"offline"})


def drafter_reads(settings: ModelSettings | None = None) -> bool:
    """Whether the provider that drafts answers (the generate role's) reads the evidence."""
    return (settings or get_settings().models).provider_for("generate") not in CANNOT_READ


@lru_cache(maxsize=8)
def provider_class(name: str) -> type[ModelProvider]:
    """The class of a provider by configured name; ConfigurationError for an unknown name."""
    target = PROVIDERS.get(name.strip().lower())
    if target is None:
        known = ", ".join(sorted(PROVIDERS))
        raise ConfigurationError(f"unknown model provider {name!r} (known: {known})")
    module_name, _, class_name = target.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as error:
        # A function packaged without the configured provider's layer: a deployment mistake.
        raise ConfigurationError(f"model provider {name!r} cannot be loaded here ({error}): is MODEL_PROVIDER "
                                 "(or this role's in ROLE_PROVIDERS) the provider this function was built for?") from error
    return getattr(module, class_name)


def create_provider(name: str) -> ModelProvider:
    """A new provider instance by configured name; ConfigurationError for an unknown name."""
    return provider_class(name)()


def get_provider(role: Role | None = None) -> ModelProvider:
    """The provider serving `role` (default: the running node's role; ModelSettings.provider_for),
    one instance per provider per process: roles on the same provider share it."""
    return _shared_provider(get_settings().models.provider_for(role or current_role()))


@lru_cache(maxsize=8)
def _shared_provider(name: str) -> ModelProvider:
    return create_provider(name)


# Callers reset the cached providers with get_provider.cache_clear() after changing the settings.
get_provider.cache_clear = _shared_provider.cache_clear  # type: ignore[attr-defined]


def word_analysis() -> Terms:
    """The running role's provider's word analysis, without creating the provider (no client is built)."""
    return provider_class(get_settings().models.provider_for(current_role())).terms


def role_problems(settings: ModelSettings | None = None, environ: Mapping[str, str] | None = None,
                  roles: tuple[str, ...] | None = None) -> dict[str, list[SettingProblem]]:
    """Each provider's own check of its settings (ModelProvider.check_settings), for the providers
    that serve `roles` (default: the running node's role, or every role outside a node): only what
    is used is checked. {provider: problems} of the providers that have any."""
    settings = settings or get_settings().models
    check_role_map(settings.role_providers)
    environ = os.environ if environ is None else environ
    if roles is None:
        roles = (current_role(),) if current_role() else ROLES
    found = {name: provider_class(name).check_settings(settings, environ) for name in settings.providers_used(roles)}
    return {name: problems for name, problems in found.items() if problems}


#: A model function's cold start asks its model service within this (Lambda's Init has 10 s in all).
COLD_START_SERVICE_SECONDS = 4.0


def service_problems(settings: ModelSettings | None = None, roles: tuple[str, ...] | None = None,
                     seconds: float = COLD_START_SERVICE_SECONDS) -> dict[str, list[SettingProblem]]:
    """Each provider's check of its service (ModelProvider.check_service) for the roles of `roles` it
    serves (default as in role_problems), within `seconds` each. {provider: problems} of the providers
    that have any. A check that fails itself finds nothing: it must never stop a working function."""
    from insurance_agent.observability import logger

    settings = settings or get_settings().models
    if roles is None:
        roles = (current_role(),) if current_role() else ROLES
    found = {}
    for name in settings.providers_used(roles):
        served = tuple(role for role in roles if settings.provider_for(role) == name)
        try:
            problems = provider_class(name).check_service(settings, served, seconds)
        except Exception as error:  # noqa: BLE001 - see above
            logger.warning("the model service check failed", extra={"provider": name, "error": repr(error)})
            continue
        if problems:
            found[name] = problems
    return found


def check_model_function() -> None:
    """A model function's cold start (lambda_entry.node_handler): check_model_settings, then, in the
    Lambda runtime, what the model service says of them (service_problems), within
    COLD_START_SERVICE_SECONDS: a definite refusal is a ConfigurationError like a missing setting.
    Only in the Lambda runtime: the local stack runs the functions inside an `agent` command, whose
    preflight (agent_local/preflight.py) has asked the service already."""
    check_model_settings()
    if os.environ.get("AWS_LAMBDA_RUNTIME_API"):
        found = service_problems()
        if found:
            raise ConfigurationError("; ".join(describe_service_problems(name, problems)
                                               for name, problems in found.items()))


def describe_service_problems(provider: str, problems: list[SettingProblem]) -> str:
    return f"model provider {provider!r} does not work with its server as configured: " + "; ".join(
        str(p) for p in problems)


def check_role_map(role_providers: Mapping[str, str]) -> None:
    """ConfigurationError for a role sent to a provider PROVIDERS does not know (ROLE_PROVIDERS).

    Checked here rather than where the map is parsed (config.parse_role_providers): the registry of
    providers is this module's, and the thin functions, which never resolve a provider, do not ship it."""
    for role, name in role_providers.items():
        if name not in PROVIDERS:
            raise ConfigurationError(f"ROLE_PROVIDERS sends {role} to an unknown provider {name!r} "
                                     f"(providers: {', '.join(sorted(PROVIDERS))})")


def model_settings_problems(settings: ModelSettings | None = None, environ: Mapping[str, str] | None = None,
                            roles: tuple[str, ...] | None = None) -> list[SettingProblem]:
    """role_problems as one list, each setting once (two providers may need the same one)."""
    problems: dict[str, SettingProblem] = {}
    for found in role_problems(settings, environ, roles).values():
        for problem in found:
            problems.setdefault(problem.field, problem)
    return list(problems.values())


def describe_problems(provider: str, problems: list[SettingProblem]) -> str:
    return f"model provider {provider!r} is not configured: " + "; ".join(str(p) for p in problems)


def check_model_settings(settings: ModelSettings | None = None, environ: Mapping[str, str] | None = None) -> None:
    """Fail fast on a provider that cannot run a turn: ConfigurationError naming every missing or
    malformed setting, with the template parameter and environment variable that set it. A model
    node's cold start runs it (lambda_entry.node_handler); the `agent` commands that run turns ask
    model_settings_problems for the same list (agent_local/preflight.py)."""
    found = role_problems(settings, environ)
    if found:
        raise ConfigurationError("; ".join(describe_problems(name, problems) for name, problems in found.items()))
