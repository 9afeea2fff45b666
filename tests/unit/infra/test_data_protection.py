"""Personal data at rest and in logs: KMS on tables and log groups, log data protection with the
Iranian formats, thread retention, and a graph whose first state never copies the raw input."""

from __future__ import annotations

import json
import re

import pytest
from agent_local.template import REPO_ROOT, load_template, resources_of_type

CUSTOM = {"IranNationalCode", "IranMobile", "IranBankCard", "IranSheba"}
SAMPLES = {
    "IranNationalCode": "0499370899",
    "IranMobile": "09121234567",
    "IranBankCard": "6037-9975-9940-8185",
    "IranSheba": "IR062960000000100324200001",
}


@pytest.fixture(scope="module")
def template():
    return load_template()


def test_every_log_group_is_kms_encrypted_and_masks_personal_data(template):
    groups = resources_of_type(template, "AWS::Logs::LogGroup")
    assert len(groups) >= 12
    for name, group in groups.items():
        props = group["Properties"]
        assert "KmsKeyId" in props, name
        policy = props["DataProtectionPolicy"]
        custom = {c["Name"]: c["Regex"] for c in policy["Configuration"]["CustomDataIdentifier"]}
        assert set(custom) == CUSTOM, name
        operations = {next(iter(s["Operation"])): set(s["DataIdentifier"]) for s in policy["Statement"]}
        assert set(operations) == {"Audit", "Deidentify"}
        assert CUSTOM <= operations["Deidentify"]
        assert "arn:aws:dataprotection::aws:data-identifier/EmailAddress" in operations["Deidentify"]
        for identifier, regex in custom.items():
            # CloudWatch's limits: 200 characters, no parentheses; each finds its own format.
            assert len(regex) <= 200 and "(" not in regex
            assert re.search(regex, f"x {SAMPLES[identifier]} y"), identifier



def test_every_function_has_its_log_group_and_every_group_the_one_policy(template):
    groups = resources_of_type(template, "AWS::Logs::LogGroup")
    names = [group["Properties"]["LogGroupName"] for group in groups.values()]
    # A function left out of the template's loop would log, unmasked, to the group Lambda makes for it.
    for function in resources_of_type(template, "AWS::Serverless::Function"):
        assert {"Fn::Sub": f"/aws/lambda/${{{function}}}"} in names, function
    # The state machine's group holds its own copy of the policy: it must not drift from the nodes'.
    policy = groups["TurnStateMachineLogGroup"]["Properties"]["DataProtectionPolicy"]
    assert all(group["Properties"]["DataProtectionPolicy"] == policy for group in groups.values())

def test_tables_use_the_customer_managed_key_and_threads_expire(template):
    for name, table in resources_of_type(template, "AWS::DynamoDB::Table").items():
        sse = table["Properties"]["SSESpecification"]
        assert sse["SSEType"] == "KMS" and sse["KMSMasterKeyId"] == {"Ref": "DataKey"}, name
    threads = template["Resources"]["ThreadsTable"]["Properties"]
    assert threads["TimeToLiveSpecification"] == {"AttributeName": "expires_at", "Enabled": True}
    env = template["Globals"]["Function"]["Environment"]["Variables"]
    assert env["THREAD_RETENTION_DAYS"] == {"Ref": "ThreadRetentionDays"}


def test_key_policy_lets_cloudwatch_logs_use_the_key(template):
    statements = template["Resources"]["DataKey"]["Properties"]["KeyPolicy"]["Statement"]
    logs = [s for s in statements if isinstance(s["Principal"], dict) and "Service" in s["Principal"]]
    assert logs and "kms:GenerateDataKey*" in logs[0]["Action"]


def test_configuration_error_has_an_alarm(template):
    alarm = template["Resources"]["ConfigurationErrorAlarm"]["Properties"]
    assert alarm["MetricName"] == "ConfigurationError" and alarm["Namespace"] == "InsuranceAgent"


def test_first_state_is_load_memory_without_parameters():
    definition = json.loads((REPO_ROOT / "statemachine" / "turn.asl.json").read_text(encoding="utf-8"))
    first = definition["States"][definition["StartAt"]]
    assert definition["StartAt"] == "LoadMemory" and first["Type"] == "Task"
    # No Parameters/InputPath: nothing copies (or grows) an input before it is checked.
    assert not {"Parameters", "InputPath", "ResultPath"} & set(first)
