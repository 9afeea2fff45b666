"""A DynamoDB call that times out or loses its connection is transient (the ASL retries the node),
never an unclassified crash that the graph can only turn into a system_error hand-off."""

from __future__ import annotations

import pytest
from botocore.exceptions import ConnectionClosedError, ConnectTimeoutError, ReadTimeoutError
from insurance_agent.errors import TransientError
from insurance_agent.store import dynamo


@pytest.mark.parametrize("error", [
    ReadTimeoutError(endpoint_url="https://dynamodb.eu-central-1.amazonaws.com"),
    ConnectTimeoutError(endpoint_url="https://dynamodb.eu-central-1.amazonaws.com"),
    ConnectionClosedError(endpoint_url="https://dynamodb.eu-central-1.amazonaws.com"),
])
def test_transport_failures_are_transient(error):
    assert isinstance(error, dynamo.STORE_ERRORS)
    assert not dynamo.is_condition_failure(error)
    with pytest.raises(TransientError):
        dynamo.raise_typed(error)
