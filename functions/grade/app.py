"""Lambda handler of the grade node (ASL state `Grade`); the logic lives in insurance_agent.nodes.grade."""

from insurance_agent.lambda_entry import node_handler
from insurance_agent.nodes.grade import run

lambda_handler = node_handler("Grade", run)
