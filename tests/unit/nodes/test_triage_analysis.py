"""The triage node analyses the message once and hands the analysis to the provider.

The provider's triage needs the same readings as the node (the turn's language, the policy
signals, the pick of an option of our clarifying question); computed by both they doubled the
turn's text work, and a language detected again could disagree with the one load_memory chose.
"""

from __future__ import annotations

from types import SimpleNamespace

from insurance_agent.models.roles import HistoryTurn, Intent, TriageResult
from insurance_agent.models.state import TurnState
from insurance_agent.models.turn import ClarifyOption
from insurance_agent.nodes import triage
from insurance_agent.policy import routing

CLARIFIED = HistoryTurn(
    message="حق بیمه چقدر است؟",
    status="clarify",
    options=[ClarifyOption(label="بیمه بدنه"), ClarifyOption(label="بیمه شخص ثالث")],
)


class RecordingModel:
    """Stands in for the provider at its boundary: records the request, routes to knowledge."""

    def __init__(self) -> None:
        self.requests = []

    def triage(self, request):
        self.requests.append(request)
        return TriageResult(intent=Intent.KNOWLEDGE, language=request.analysis.language,
                            mixed_language=request.analysis.mixed_language)


def _counting(monkeypatch, module, name):
    calls = []
    original = getattr(module, name)

    def counted(*args, **kwargs):
        calls.append(args)
        return original(*args, **kwargs)

    monkeypatch.setattr(module, name, counted)
    return calls


def _run(monkeypatch, message, history, language="fa", mixed=False):
    model = RecordingModel()
    monkeypatch.setattr(triage, "get_provider", lambda: model)
    monkeypatch.setattr(triage, "parts", lambda state: SimpleNamespace(history=history))
    monkeypatch.setattr(triage, "corpus_context", lambda turn: ([], None))
    turn = {"thread_id": "t-1", "turn_id": "turn-1", "user_id": "u-1", "tenant_id": "sepehr", "message": message}
    state = TurnState.model_validate({"turn": turn, "language": language, "mixed_language": mixed})
    return triage.run(state), model


def test_the_provider_gets_the_nodes_analysis_with_load_memorys_language(monkeypatch):
    signals = _counting(monkeypatch, routing, "policy_signals")
    picks = _counting(monkeypatch, routing, "pick_option")
    # A Persian message in a turn load_memory found mixed and answers in English: carried, not re-detected.
    state, model = _run(monkeypatch, "حق بیمه بدنه برای خانواده چقدره؟", [CLARIFIED], language="en", mixed=True)
    (request,) = model.requests
    assert request.analysis is not None
    assert (request.analysis.language, request.analysis.mixed_language) == ("en", True)
    assert (state.language, state.mixed_language) == ("en", True)
    assert request.analysis.normalized == routing.normalize("حق بیمه بدنه برای خانواده چقدره؟")
    assert not request.analysis.picks_option and not request.analysis.signals.any
    assert len(signals) == 1 and len(picks) == 1
    assert state.route == Intent.KNOWLEDGE.value


def test_a_pick_is_recognised_once_and_needs_no_model(monkeypatch):
    picks = _counting(monkeypatch, routing, "pick_option")
    state, model = _run(monkeypatch, "دومی", [CLARIFIED])
    assert model.requests == [] and state.route == Intent.KNOWLEDGE.value
    assert len(picks) == 1


def test_a_pick_that_asks_for_an_action_goes_to_the_model_with_its_signals(monkeypatch):
    state, model = _run(monkeypatch, "بیمه شخص ثالث رو فسخ کنید", [CLARIFIED])
    (request,) = model.requests
    assert request.analysis.signals.restricted_category is not None
    assert state.triage.restricted
