"""Retrieval (docs/retrieval.md): documents -> chunks -> Qdrant, and the hybrid, filtered search.

Modules: access (role allowlist), documents (loading), chunking, embeddings (encoders), index
(collection and writes), search (the query), ingest (folders of documents). Import them directly;
this package imports nothing heavy on its own.
"""
