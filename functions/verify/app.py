"""Lambda handler of the verify node (ASL state `Verify`); the logic lives in insurance_agent.nodes.verify."""

from insurance_agent.lambda_entry import node_handler
from insurance_agent.nodes.verify import run

lambda_handler = node_handler("Verify", run)
