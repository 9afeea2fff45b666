"""Secrets (the Qdrant API key, the accounts API token) read from Secrets Manager, never from code.

A value may also come straight from an environment variable for local runs; in AWS the template
passes only the secret's ARN. Values are cached for a few minutes per container.
"""

from __future__ import annotations

import os

from insurance_agent.errors import ConfigurationError, TransientError

CACHE_SECONDS = 300


def resolve(value_env: str, secret_env: str) -> str | None:
    """The value of `value_env`, else the secret named by `secret_env`, else None."""
    direct = os.environ.get(value_env)
    if direct:
        return direct
    secret_id = os.environ.get(secret_env)
    if not secret_id:
        return None
    from aws_lambda_powertools.utilities import parameters
    from botocore.exceptions import ClientError, EndpointConnectionError

    try:
        return parameters.get_secret(secret_id, max_age=CACHE_SECONDS)
    except parameters.exceptions.GetParameterError as error:
        cause = error.__cause__
        if isinstance(cause, EndpointConnectionError) or (
            isinstance(cause, ClientError) and cause.response["Error"]["Code"] in ("ThrottlingException", "InternalServiceError")
        ):
            raise TransientError("secret store unavailable") from error
        raise ConfigurationError(f"secret named by {secret_env} cannot be read") from error
