"""Model roles: one typed interface, a provider per backend (bedrock, openai, offline)."""
