"""Lambda handler of the retrieve node (ASL state `Retrieve`); the logic lives in insurance_agent.nodes.retrieve."""

from insurance_agent.lambda_entry import node_handler
from insurance_agent.nodes.retrieve import run

lambda_handler = node_handler("Retrieve", run)
