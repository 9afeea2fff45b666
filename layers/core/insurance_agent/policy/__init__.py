"""Deterministic rules applied to every turn, whatever the model provider.

Escalation lexicons, frustration, clarification options and the guards on a drafted answer.
"""
