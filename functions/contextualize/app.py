"""Lambda handler of the contextualize node (ASL state `Contextualize`); the logic lives in insurance_agent.nodes.contextualize."""

from insurance_agent.lambda_entry import node_handler
from insurance_agent.nodes.contextualize import run

lambda_handler = node_handler("Contextualize", run)
