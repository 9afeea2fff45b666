"""Local clarify words the question around the given options only."""

import pytest
from insurance_agent.errors import ModelOutputError
from insurance_agent.models.roles import ClarifyRequest
from insurance_agent.models.turn import ClarifyOption
from insurance_offline.clarify import LocalClarifier

OPTIONS = [
    ClarifyOption(label="بیمه بدنه خودرو", file_id="f-body", domain="auto"),
    ClarifyOption(label="بیمه شخص ثالث", file_id="f-tp", domain="auto"),
]


def ask(language, options=OPTIONS):
    return LocalClarifier()(
        ClarifyRequest(query="q", message="m", chunks=[], options=options, language=language)
    ).question


def test_persian_question_numbers_the_options():
    question = ask("fa")
    assert question.startswith("منظورتان کدام بیمه است؟")
    assert "۱. بیمه بدنه خودرو" in question and "۲. بیمه شخص ثالث" in question
    assert "۳." not in question


def test_english_question_uses_the_same_options():
    question = ask("en")
    assert question.startswith("Which insurance do you mean?")
    assert "1. بیمه بدنه خودرو" in question and "2. بیمه شخص ثالث" in question and "3." not in question


def test_no_options_no_question():
    with pytest.raises(ModelOutputError):
        ask("fa", [])
