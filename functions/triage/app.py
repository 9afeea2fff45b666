"""Lambda handler of the triage node (ASL state `Triage`); the logic lives in insurance_agent.nodes.triage."""

from insurance_agent.lambda_entry import node_handler
from insurance_agent.nodes.triage import run

lambda_handler = node_handler("Triage", run)
