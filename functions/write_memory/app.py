"""Lambda handler of the write_memory node (ASL state `WriteMemory`); the logic lives in insurance_agent.nodes.write_memory."""

from insurance_agent.lambda_entry import node_handler
from insurance_agent.nodes.write_memory import run

lambda_handler = node_handler("WriteMemory", run)
