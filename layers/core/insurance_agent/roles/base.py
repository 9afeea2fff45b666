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
from insurance_agent.config import ModelSettings, SettingProblem, get_settings
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
                                 "the provider this function was built for?") from error
    return getattr(module, class_name)


def create_provider(name: str) -> ModelProvider:
    """A new provider instance by configured name; ConfigurationError for an unknown name."""
    return provider_class(name)()


@lru_cache(maxsize=1)
def get_provider() -> ModelProvider:
    """The provider named by `get_settings().models.provider`, created once per process."""
    return create_provider(get_settings().models.provider)


def word_analysis() -> Terms:
    """The configured provider's word analysis, without creating the provider (no client is built)."""
    return provider_class(get_settings().models.provider).terms


def model_settings_problems(settings: ModelSettings | None = None,
                            environ: Mapping[str, str] | None = None) -> list[SettingProblem]:
    """The configured provider's own check of its settings (ModelProvider.check_settings)."""
    settings = settings or get_settings().models
    return provider_class(settings.provider).check_settings(settings, os.environ if environ is None else environ)


def describe_problems(provider: str, problems: list[SettingProblem]) -> str:
    return f"model provider {provider!r} is not configured: " + "; ".join(str(p) for p in problems)


def check_model_settings(settings: ModelSettings | None = None, environ: Mapping[str, str] | None = None) -> None:
    """Fail fast on a provider that cannot run a turn: ConfigurationError naming every missing or
    malformed setting, with the template parameter and environment variable that set it. A model
    node's cold start runs it (lambda_entry.node_handler); the `agent` commands that run turns ask
    model_settings_problems for the same list (agent_local/preflight.py)."""
    settings = settings or get_settings().models
    problems = model_settings_problems(settings, environ)
    if problems:
        raise ConfigurationError(describe_problems(settings.provider, problems))
