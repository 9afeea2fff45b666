"""Lambda handler of the load_memory node (ASL state `LoadMemory`); the logic lives in insurance_agent.nodes.load_memory."""

from insurance_agent.lambda_entry import node_handler
from insurance_agent.nodes.load_memory import run

lambda_handler = node_handler("LoadMemory", run, raw_input=True)
