"""Lambda handler of the generate node (ASL state `Generate`); the logic lives in insurance_agent.nodes.generate."""

from insurance_agent.lambda_entry import node_handler
from insurance_agent.nodes.generate import run

lambda_handler = node_handler("Generate", run)
