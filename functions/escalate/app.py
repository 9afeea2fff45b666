"""Lambda handler of the escalate node (ASL state `Escalate`); the logic lives in insurance_agent.nodes.escalate."""

from insurance_agent.lambda_entry import node_handler
from insurance_agent.nodes.escalate import run

lambda_handler = node_handler("Escalate", run)
