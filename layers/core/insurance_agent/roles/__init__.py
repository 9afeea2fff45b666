"""Model roles (DESIGN.md section 7): one typed interface, a provider per backend (local, bedrock)."""
