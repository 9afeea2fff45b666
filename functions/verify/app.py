"""Lambda handler of the verify node (ASL state `Verify`); the logic lives in insurance_agent.nodes.verify."""

from insurance_agent.lambda_entry import node_handler
from insurance_agent.nodes.verify import run
from insurance_agent.roles.base import check_model_function

# The model provider's settings (and, in Lambda, its service) are checked at Init: a misconfigured function
# says so at once.
lambda_handler = node_handler("Verify", run, cold_start=check_model_function)
