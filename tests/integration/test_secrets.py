"""Secrets come from Secrets Manager by ARN (served by the local stack), or straight from the environment."""

from __future__ import annotations

import pytest

from insurance_agent import secrets
from insurance_agent.errors import ConfigurationError

pytestmark = pytest.mark.stack


def test_value_from_the_named_secret(stack, monkeypatch):
    arn = stack.client("secretsmanager").create_secret(Name="qdrant-key-test", SecretString="s3cr3t")["ARN"]
    monkeypatch.delenv("TEST_VALUE", raising=False)
    monkeypatch.setenv("TEST_VALUE_SECRET", arn)
    assert secrets.resolve("TEST_VALUE", "TEST_VALUE_SECRET") == "s3cr3t"


def test_direct_value_wins_and_nothing_configured_is_none(monkeypatch):
    monkeypatch.setenv("TEST_VALUE", "direct")
    monkeypatch.setenv("TEST_VALUE_SECRET", "arn:aws:secretsmanager:us-east-1:123456789012:secret:nope")
    assert secrets.resolve("TEST_VALUE", "TEST_VALUE_SECRET") == "direct"
    monkeypatch.delenv("TEST_VALUE")
    monkeypatch.delenv("TEST_VALUE_SECRET")
    assert secrets.resolve("TEST_VALUE", "TEST_VALUE_SECRET") is None


def test_a_missing_secret_is_a_configuration_error(stack, monkeypatch):
    monkeypatch.delenv("TEST_VALUE", raising=False)
    monkeypatch.setenv("TEST_VALUE_SECRET", "no-such-secret")
    with pytest.raises(ConfigurationError):
        secrets.resolve("TEST_VALUE", "TEST_VALUE_SECRET")
