"""Lambda handler of the grade node (ASL state `Grade`); the logic lives in insurance_agent.nodes.grade."""

from insurance_agent.lambda_entry import node_handler
from insurance_agent.nodes.grade import run
from insurance_agent.roles.base import check_model_function

# The model provider's settings (and, in Lambda, its service) are checked at Init: a misconfigured function
# says so at once.
lambda_handler = node_handler("Grade", run, cold_start=check_model_function)
