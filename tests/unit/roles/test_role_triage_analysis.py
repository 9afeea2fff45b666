"""The offline triage reads the node's analysis of the message instead of analysing it again."""

from __future__ import annotations

import pytest

import insurance_offline.triage as offline_triage
from insurance_agent.models.roles import HistoryTurn, Intent, MessageAnalysis, PolicySignals, TriageRequest
from insurance_agent.models.turn import ClarifyOption
from insurance_agent.policy.escalation import load_policy
from insurance_agent.policy.routing import analyse_message
from insurance_agent.text import normalize
from insurance_offline.triage import LocalTriager

QUESTION = "فرانشیز بیمه بدنه چقدر است؟"


@pytest.fixture(scope="module")
def triage(triage_classifier):
    return LocalTriager(classifier=triage_classifier)


def _no_second_analysis(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("the message was analysed again")

    monkeypatch.setattr(offline_triage, "analyse_message", refuse)
    monkeypatch.setattr(offline_triage, "detect_turn_language", refuse)


def test_the_language_and_signals_come_from_the_analysis(triage, monkeypatch):
    analysis = analyse_message(QUESTION, [], load_policy(), "en", True)
    _no_second_analysis(monkeypatch)
    result = triage(TriageRequest(message=QUESTION, analysis=analysis))
    # Detected again, this Persian message would be answered in Persian: the turn's language is kept.
    assert (result.language, result.mixed_language) == ("en", True)
    assert result.intent == Intent.KNOWLEDGE and not result.restricted


def test_a_signal_of_the_analysis_decides_as_the_providers_own_would(triage, monkeypatch):
    signals = PolicySignals(handoff=True)
    analysis = MessageAnalysis(normalized=QUESTION, signals=signals)
    assert analysis.text == normalize(QUESTION) != QUESTION  # built from raw text, it normalises it
    _no_second_analysis(monkeypatch)
    assert triage(TriageRequest(message=QUESTION, analysis=analysis)).intent == Intent.HANDOFF_REQUEST


def test_with_and_without_the_analysis_the_result_is_the_same(triage):
    clarified = HistoryTurn(message="حق بیمه چقدر است؟", status="clarify",
                            options=[ClarifyOption(label="بیمه بدنه"), ClarifyOption(label="بیمه شخص ثالث")])
    for message, history in ((QUESTION, []), ("همون بدنه", [clarified]), ("می‌خواهم با کارشناس صحبت کنم", [])):
        alone = triage(TriageRequest(message=message, history=history))
        analysis = analyse_message(message, history, load_policy(), alone.language, alone.mixed_language)
        assert triage(TriageRequest(message=message, history=history, analysis=analysis)) == alone
