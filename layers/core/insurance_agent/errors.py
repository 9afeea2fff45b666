"""Typed errors. Their class names are the Lambda errorType that the ASL's Retry and Catch match."""


class AgentError(Exception):
    """Base class of every error this service raises on purpose."""

    code = "agent_error"


class TransientError(AgentError):
    """Worth retrying: throttling, a dependency briefly unavailable. The ASL retries it with backoff."""

    code = "transient"


class InvalidInputError(AgentError):
    """Input that can never succeed; the message is safe to show an operator, never raw user data."""

    code = "invalid_input"


class ThreadNotOwnedError(AgentError):
    code = "thread_not_owned"


class ThreadHandedOffError(AgentError):
    code = "thread_handed_off"


class ConfigurationError(AgentError):
    """A deployment mistake (bad policy file, missing model files): fails loudly at cold start."""

    code = "configuration"


class IndexMissingError(ConfigurationError):
    """The chunk collection does not exist: a deployment mistake, never "no answer".

    The ASL turns it (like every non-transient error) into a system_error escalation; escalate
    publishes the ConfigurationError metric, which an alarm watches.
    """

    code = "index_missing"


class StoreBusyError(AgentError, RuntimeError):
    """The embedded chunk store is open in another process (it admits one at a time).

    A RuntimeError too, as qdrant-client's local mode raises for the same case: callers handle both alike.
    """

    code = "store_busy"


class ModelRefusedError(AgentError):
    """The model service's guardrail or content filter stopped the call. Not a fault: the ASL catches it
    on every model node and hands the turn to a person as a restricted topic (restricted_intent)."""

    code = "model_refused"


class ModelOutputError(AgentError):
    """A model returned output that does not fit its schema after the allowed attempts (or no structured
    answer where one is required). Not retried: the ASL catches it on every model node and hands the
    turn to a person with the reason model_output, which has its own alarm."""

    code = "model_output"
