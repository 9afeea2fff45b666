"""Each events/*.json drives its handler (the same files `sam local invoke -e` takes on a laptop).

Node events are real inputs recorded from executions (python -m agent_local.record_events); the
knowledge chain is replayed node by node in graph order, so each handler also produces the
working data the next one reads.
"""

from __future__ import annotations

import importlib.util
import json

import pytest

from agent_local.template import REPO_ROOT
from insurance_agent.models.state import TurnState
from insurance_agent.models.turn import TurnReply
from insurance_agent.store import threads, turns
from probes import Context

pytestmark = pytest.mark.stack
EVENTS = REPO_ROOT / "events"
CHAIN = ["load_memory", "triage", "contextualize", "retrieve", "grade", "generate", "verify", "write_memory"]
STATE_NAMES = {"load_memory": "LoadMemory", "triage": "Triage", "contextualize": "Contextualize",
               "retrieve": "Retrieve", "grade": "Grade", "generate": "Generate", "verify": "Verify",
               "write_memory": "WriteMemory", "clarify": "Clarify", "account": "Account", "escalate": "Escalate"}


def handler(folder):
    spec = importlib.util.spec_from_file_location(f"event_test_{folder}", REPO_ROOT / "functions" / folder / "app.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.lambda_handler


def event(name):
    return json.loads((EVENTS / f"{name}.json").read_text(encoding="utf-8"))


def test_there_is_one_event_per_function():
    folders = {p.name for p in (REPO_ROOT / "functions").iterdir() if p.is_dir()}
    assert {p.stem for p in EVENTS.glob("*.json")} == folders


def test_knowledge_chain_replays_node_by_node(stack):
    # The chain is the pick of a passage the question before it was offered (agent_local/record_events.py).
    offer = TurnReply.model_validate(stack.run_turn(json.loads((EVENTS / "turns" / "knowledge_fa.json").read_text(
        encoding="utf-8"))))
    assert offer.status == "clarify" and offer.options[0].chunk_id
    outputs = {}
    for folder in CHAIN:
        incoming = event(folder)
        result = handler(folder)(incoming, Context())
        state = TurnState.model_validate(result)
        assert state.trace.path[-1] == STATE_NAMES[folder]
        assert len(json.dumps(result, ensure_ascii=False).encode()) < 8 * 1024
        outputs[folder] = state
    assert outputs["load_memory"].turn.message == "۱" and outputs["triage"].route == "knowledge"
    assert outputs["grade"].grade == "sufficient"
    assert outputs["generate"].generate.answered is True
    assert outputs["verify"].verify.grounded is True
    reply = outputs["write_memory"].reply
    assert reply.status == "answer" and [c.chunk_id for c in reply.citations] == [offer.options[0].chunk_id]
    turn = outputs["load_memory"].turn
    record = threads.get_thread(turn.thread_id)
    assert record is not None and turn.turn_id in record.turn_ids
    assert turns.get_parts(turn.turn_id, turn.thread_id)["reply"]["status"] == "answer"


@pytest.mark.parametrize("folder,turn", [("clarify", "ambiguous"), ("account", "account"), ("escalate", "handoff")])
def test_branch_events_drive_their_handlers(stack, folder, turn):
    # The whole turn runs first so that the working data the node reads exists.
    whole = json.loads((EVENTS / "turns" / f"{turn}.json").read_text(encoding="utf-8"))
    stack.run_turn(whole)
    result = TurnState.model_validate(handler(folder)(event(folder), Context()))
    assert result.trace.path[-1] == STATE_NAMES[folder]
    if folder == "clarify":
        assert result.reply.status == "clarify" and len(result.reply.options) >= 2
    if folder == "account":
        parts = turns.get_parts(whole["turn_id"], whole["thread_id"])
        assert parts["account_chunks"] and all(c["chunk_id"].startswith("account:") for c in parts["account_chunks"])
    if folder == "escalate":
        assert result.reply.status == "escalate" and result.reply.reason == "user_requested"


@pytest.mark.parametrize("turn", ["knowledge_en", "invalid"])
def test_whole_turn_inputs_produce_the_contract(stack, turn):
    reply = TurnReply.model_validate(stack.run_turn(json.loads((EVENTS / "turns" / f"{turn}.json").read_text(encoding="utf-8"))))
    expected = {"knowledge_en": "clarify", "invalid": "refused"}[turn]
    assert reply.status == expected
