"""The embedded local stack and the `agent` CLI: the real ASL and handlers with no AWS account."""
