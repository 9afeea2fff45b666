"""Lambda handler of the account node (ASL state `Account`); the logic lives in insurance_agent.nodes.account."""

from insurance_agent.lambda_entry import node_handler
from insurance_agent.nodes.account import run

lambda_handler = node_handler("Account", run)
