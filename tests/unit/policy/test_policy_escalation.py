"""The escalation policy file: it loads, a broken one fails loudly, and every case is classified as expected."""

import json
from pathlib import Path

import pytest
import yaml
from insurance_agent.config import get_settings
from insurance_agent.errors import ConfigurationError
from insurance_agent.policy.escalation import DEFAULT_POLICY_FILE, EscalationPolicy, load_policy

CASES = Path(__file__).resolve().parents[2] / "data" / "escalation_cases.jsonl"


def cases():
    rows = [json.loads(line) for line in CASES.read_text(encoding="utf-8").splitlines() if line.strip()]
    return [
        pytest.param(row["text"], row["expect"], id=f"{row['language']}-{row['expect']}-{i}")
        for i, row in enumerate(rows)
    ]


@pytest.fixture
def raw_policy():
    return yaml.safe_load(DEFAULT_POLICY_FILE.read_text(encoding="utf-8"))


def write(tmp_path, data, name="policy.yaml"):
    path = tmp_path / name
    path.write_text(data if isinstance(data, str) else yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
    return path


def test_packaged_policy_loads_and_is_cached():
    policy = load_policy()
    assert isinstance(policy, EscalationPolicy)
    assert {"claim_dispute", "complaint", "cancellation", "payout", "legal"} <= {
        i.name for i in policy.restricted_intents
    }
    assert load_policy() is policy


@pytest.mark.parametrize("text, expect", cases())
def test_escalation_cases(text, expect):
    policy = load_policy()
    category = policy.restricted_category(text)
    handoff = policy.asks_for_human(text)
    frustration = policy.explicit_frustration(text)
    if expect == "none":
        assert (category, handoff, frustration) == (None, False, False)
    elif expect == "handoff":
        assert handoff
    elif expect == "frustration":
        assert frustration
    else:
        assert category == expect


def test_cases_cover_both_languages_and_every_category():
    rows = [json.loads(line) for line in CASES.read_text(encoding="utf-8").splitlines() if line.strip()]
    assert {row["language"] for row in rows} == {"fa", "en"}
    names = {intent.name for intent in load_policy().restricted_intents}
    assert names <= {row["expect"] for row in rows}


def test_matching_is_on_normalised_text():
    policy = load_policy()
    # Arabic yeh/kaf and a half-space written as a plain space still match the Persian patterns
    assert policy.asks_for_human("مي‌خواهم با يك كارشناس صحبت كنم")
    assert policy.restricted_category("مي خوام بيمه نامه ام رو فسخ كنم") == "cancellation"
    assert policy.asks_for_human("CONNECT ME TO AN OPERATOR")


@pytest.mark.parametrize(
    ("text", "expect"),
    [
        # a third party's words quoted in a question are not the user's dispute
        ("بیمارستان میتونه بگه دفترچه‌تو قبول نداریم و پذیرشم نکنه؟", None),
        # the user's own words after the quote are
        ("ارزیاب گفت خسارت ۵ میلیونه، قبول ندارم", "claim_dispute"),
        ("گفتم قبول ندارم", "claim_dispute"),
        ("نظر کارشناس رو قبول ندارم", "claim_dispute"),
    ],
)
def test_what_a_third_party_said_is_not_the_users_act(text, expect):
    assert load_policy().restricted_category(text) == expect


@pytest.mark.parametrize(
    ("text", "expect"),
    [
        # a first person after an auxiliary asks how; it does not state an act
        ("The agent was slow with my claim. Who do I complain to, and who reviews it?", None),
        ("Do we need to go to court to appeal, or is there another way?", None),
        ("Should I complain to the regulator if the insurer does not answer?", None),
        # the same verbs stated are acts
        ("I want to complain about the agent who handled my claim", "complaint"),
        ("We complain about how the branch handled our claim", "complaint"),
        ("I need to cancel my cargo policy", "cancellation"),
    ],
)
def test_a_question_in_the_first_person_is_not_a_stated_act(text, expect):
    assert load_policy().restricted_category(text) == expect


@pytest.mark.parametrize(
    ("text", "expect"),
    [
        # whose duty a payment is, asked about others, is a question about the rules
        ("The fund and my insurer disagree on which of them should pay my claim. Who decides?", None),
        ("Does the fund have to pay my claim if the other driver fled?", None),
        # said to us it is a demand about the user's own money
        ("It's been six weeks, pay out my claim now", "payout"),
        ("Please pay my claim, I have waited long enough", "payout"),
        ("You need to pay me this week", "payout"),
    ],
)
def test_paying_my_claim_is_a_demand_only_when_said_to_us(text, expect):
    assert load_policy().restricted_category(text) == expect


@pytest.mark.parametrize(
    "mutate, message",
    [
        (lambda p: p["handoff"]["fa"].append("(unclosed"), "invalid regex"),
        (lambda p: p["frustration"].__setitem__("en", []), "at least 1"),
        (lambda p: p.__setitem__("restricted_intents", []), "at least 1"),
        (lambda p: p.__setitem__("escalate_everything", True), "escalate_everything"),
        (lambda p: p["restricted_intents"][0].__setitem__("severity", "high"), "severity"),
        (lambda p: p["restricted_intents"][0]["patterns"].__setitem__("de", ["kündigen"]), "de"),
        (lambda p: p["handoff"]["en"].append(".*"), "empty string"),
        (lambda p: p["handoff"]["en"].append("   "), "blank"),
        (lambda p: p["restricted_intents"].append(dict(p["restricted_intents"][0])), "duplicate"),
        (lambda p: p.pop("handoff"), "handoff"),
        (lambda p: p.__setitem__("version", 2), "version"),
    ],
)
def test_broken_policy_fails_with_configuration_error(tmp_path, raw_policy, mutate, message):
    mutate(raw_policy)
    with pytest.raises(ConfigurationError) as error:
        EscalationPolicy.from_file(write(tmp_path, raw_policy))
    assert message in str(error.value)


@pytest.mark.parametrize("text", ["restricted_intents: [", "- just\n- a list\n", ""])
def test_unparseable_policy_fails_with_configuration_error(tmp_path, text):
    with pytest.raises(ConfigurationError):
        EscalationPolicy.from_file(write(tmp_path, text))


def test_missing_policy_file_fails_with_configuration_error(tmp_path):
    with pytest.raises(ConfigurationError):
        EscalationPolicy.from_file(tmp_path / "absent.yaml")


def test_configured_policy_file_is_used(tmp_path, monkeypatch, raw_policy):
    raw_policy["handoff"]["en"].append(r"\bsupervisor\b")
    monkeypatch.setenv("AGENT_POLICY_FILE", str(write(tmp_path, raw_policy)))
    get_settings.cache_clear()
    try:
        policy = load_policy()
        assert policy.asks_for_human("get me your supervisor")
        assert not load_policy(DEFAULT_POLICY_FILE).asks_for_human("get me your supervisor")
    finally:
        monkeypatch.delenv("AGENT_POLICY_FILE")
        get_settings.cache_clear()
    assert not load_policy().asks_for_human("get me your supervisor")


def test_broken_configured_policy_fails_at_load(tmp_path, monkeypatch):
    monkeypatch.setenv("AGENT_POLICY_FILE", str(write(tmp_path, {"restricted_intents": []})))
    get_settings.cache_clear()
    try:
        with pytest.raises(ConfigurationError):
            load_policy()
    finally:
        monkeypatch.delenv("AGENT_POLICY_FILE")
        get_settings.cache_clear()
