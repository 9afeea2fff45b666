"""Typed payloads shared by the nodes: the turn contract, the execution state, chunks and role outputs."""
