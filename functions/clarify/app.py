"""Lambda handler of the clarify node (ASL state `Clarify`); the logic lives in insurance_agent.nodes.clarify."""

from insurance_agent.lambda_entry import node_handler
from insurance_agent.nodes.clarify import run

lambda_handler = node_handler("Clarify", run)
