"""Regenerate events/<node>.json: the real input each node Lambda received in a recorded execution.

Run after changing the execution state's shape:  python -m agent_local.record_events
(needs the sample corpus ingested and the accounts loaded under $AGENT_HOME, as `make demo` does).
Node events are recorded in graph order from the whole-turn inputs in events/turns/, so replaying
them in that order (tests/integration/test_events.py) rebuilds the same working data. The knowledge
chain is the user's pick of a passage the offline provider offered (knowledge_pick), the turn that
reaches generate and verify: the question that offered it (knowledge_fa) runs first, unrecorded.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from agent_local.stack import LocalStack
from agent_local.template import REPO_ROOT, function_folder, load_template, resources_of_type

EVENTS = REPO_ROOT / "events"
# Whole-turn inputs run first and not recorded: the turns the recorded ones follow on their thread.
BEFORE = ["knowledge_fa"]
# Which whole-turn input records which nodes (the first turn that reaches a node wins).
TURNS = ["knowledge_pick", "ambiguous", "account", "handoff"]


def state_to_folder() -> dict[str, str]:
    functions = resources_of_type(load_template(), "AWS::Serverless::Function")
    return {name.removesuffix("Function"): function_folder(name, f).name for name, f in functions.items()}


def record(stack: LocalStack) -> dict[str, dict]:
    folders = state_to_folder()
    recorded: dict[str, dict] = {}
    for turn in BEFORE:
        stack.run_turn(json.loads((EVENTS / "turns" / f"{turn}.json").read_text(encoding="utf-8")))
    for turn in TURNS:
        payload = json.loads((EVENTS / "turns" / f"{turn}.json").read_text(encoding="utf-8"))
        # A fixed execution name: the recorded execution_id is then the same at every recording.
        response = stack.client("stepfunctions").start_sync_execution(
            stateMachineArn=stack.state_machine_arn, name=f"evt-{turn}", input=json.dumps(payload, ensure_ascii=False)
        )
        for event in stack.history(response["executionArn"]):
            details = event.get("stateEnteredEventDetails")
            if event["type"] == "TaskStateEntered" and details and details["name"] in folders:
                recorded.setdefault(folders[details["name"]], json.loads(details["input"]))
    return recorded


def main() -> int:
    home = Path(os.environ.get("AGENT_HOME", ".agent")).resolve()
    with LocalStack(home, persist=False) as stack:
        recorded = record(stack)
    for folder, event in sorted(recorded.items()):
        (EVENTS / f"{folder}.json").write_text(json.dumps(event, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    missing = sorted(set(state_to_folder().values()) - set(recorded))
    print(f"wrote {len(recorded)} node events" + (f"; never reached: {', '.join(missing)}" if missing else ""))
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
