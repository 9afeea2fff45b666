"""The fuzz suite's oracle (`agent_harness.fuzz.contract_verdict`) agrees with the documented turn
contract on the cases where it once disagreed with the service (found by the 10,000-input run)."""

from __future__ import annotations

import pytest
from agent_harness.fuzz import contract_verdict

VALID = {"thread_id": "t-1", "turn_id": "turn-1", "user_id": "u-1", "tenant_id": "sepehr", "roles": ["user"],
         "message": "سلام"}


@pytest.mark.parametrize("message", ["\x82\U0009e297Í", "¹\x90y", "ñ\x9böQùç1", "a\x00b", "a\u202eb", "a\u2067b",
                                     "a\ufffeb", "سلام\x85"])
def test_control_bidi_and_noncharacters_are_forbidden(message):
    assert contract_verdict(VALID | {"message": message}) == "refuse"


@pytest.mark.parametrize("message", ["سلام\nخوبی؟", "a\tb", "a\r\nb", "What is the deductible?"])
def test_tab_and_line_breaks_are_text(message):
    assert contract_verdict(VALID | {"message": message}) == "accept"


@pytest.mark.parametrize("locale", ["en_GB", "fa-IR", "zh-Hans-CN"])
def test_short_language_tags_are_valid(locale):
    assert contract_verdict(VALID | {"locale": locale}) == "accept"
