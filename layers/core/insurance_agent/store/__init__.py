"""DynamoDB persistence: threads, per-turn working data, long-term profiles and the accounts source."""
