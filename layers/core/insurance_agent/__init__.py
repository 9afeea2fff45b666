"""Core library of the insurance conversation agent: models, state, retrieval, model roles and policy."""

__version__ = "0.1.0"
