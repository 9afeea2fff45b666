"""The guards against a real model's drafts: the generate and verify roles on a real model server,
the rest of each turn decided offline.

    make model-up      # or any OpenAI-compatible server: --upstream URL --model NAME
                       # (MODEL=reader: --model qwen2.5-coder-1.5b-instruct, docs/resilience.md)
    .venv/bin/python benchmarks/guards_real_model.py --data <insurance-law-fa folder> [--out DIR]

A model too small to route (SmolLM2-135M-Instruct hands every turn over at triage) never drafts on
whole turns, so `agent eval` with it measures routing, not the guards. Here every turn still runs
through the real graph with `ModelProvider=openai` (the provider, langchain-openai, the prompts and
tool schemas, the guards, the ASL's loops), but the model server is tools/agent_harness/openai_endpoint.py
relaying only GroundedAnswer (generate; QuotedAnswer with `--answer-format quote`) and ClaimCheck
(verify) to the real server and answering triage, contextualize, grade and clarify with the offline
provider's decisions. What the figures
say: of the real model's drafts, how many each deterministic guard rejected, how many its own
verify rejected, and how many reached the user, scored by the set's rule (a wrong answer shown is
one the guards let through). The report (report.json, report.html) is `agent eval`'s.

Cost: a draft's prompt holds the graded chunks, about 9,200 tokens for six expanded Persian chunks,
past SmolLM2's 8,192-token window; on these 2 cores llama.cpp read it at 32 tokens/s (325 s a draft).
With `--top-k 2` and `AGENT_CONTEXT_WINDOW=0` in the environment the prompt is 3,000-3,800 tokens and
a draft takes 50-120 s: the run of docs/resilience.md (12 questions) took about 20 minutes.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections import Counter
from pathlib import Path

from agent_local import moto_patches
from agent_local.evaluation import console, report, runner
from agent_local.evaluation.questions import load_questions
from agent_harness.openai_endpoint import OpenAIEndpoint
from agent_local.stack import LocalStack

RELAYED = frozenset({"GroundedAnswer", "QuotedAnswer", "ClaimCheck"})
DEFAULT_MODEL = "smollm2-135m-instruct"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, required=True, help="folder with corpus/ and questions.json")
    parser.add_argument("--questions", type=Path, help="question file (default: the folder's questions.json)")
    parser.add_argument("--upstream", default=os.environ.get("OPENAI_BASE_URL", "http://127.0.0.1:8731/v1"),
                        help="the real server's base URL (default $OPENAI_BASE_URL, else make model-up's)")
    parser.add_argument("--model", default=DEFAULT_MODEL, help="the served model's name (small and main roles)")
    parser.add_argument("--structured-output", default="function_calling", choices=("function_calling", "json_schema"))
    parser.add_argument("--timeout", type=int, default=60, help="ModelTimeoutSeconds: a tiny model on 2 cores is slow")
    parser.add_argument("--half", choices=("fit", "report"), help="only this half (default: every item)")
    parser.add_argument("--limit", type=int, help="only the first N items (of the half), in file order")
    parser.add_argument("--top-k", help="TopK: fewer chunks make a shorter draft prompt for a slow server")
    parser.add_argument("--answer-format", choices=("compose", "quote"), default="compose",
                        help="AnswerFormat: the model writes the answer, or picks the sentence that is quoted")
    parser.add_argument("--offline-verify", action="store_true",
                        help="verify by the offline provider's check instead of the real model (ClaimCheck not relayed)")
    parser.add_argument("--out", type=Path, default=Path("guards-real-model"))
    args = parser.parse_args(argv)

    # A draft on a CPU server can outlast the 60 s each in-process Lambda is told it has: give every
    # invocation room for one whole request and a retry, and the turn room for its nodes.
    moto_patches.LAMBDA_SECONDS = max(moto_patches.LAMBDA_SECONDS, 2 * args.timeout + 10)
    moto_patches.MAX_SYNC_SECONDS = max(moto_patches.MAX_SYNC_SECONDS, 8 * moto_patches.LAMBDA_SECONDS)
    # The ASL's own limits too (Generate's Task 90 s, the execution 280 s): a 1.5B model on one CPU
    # thread takes 90-200 s to read a draft prompt, and each such Task ended in States.Timeout, a
    # `system_error` before any draft reached the guards.
    definition = LocalStack.definition
    LocalStack.definition = lambda self, parameters=None: stretch_timeouts(
        definition(self, parameters), moto_patches.LAMBDA_SECONDS, moto_patches.MAX_SYNC_SECONDS)
    questions = load_questions(args.questions or args.data / "questions.json").half(args.half)
    if args.limit:
        questions = type(questions)(items=questions.items[: args.limit])
    if not questions.items:
        print(f"no item of the question file is in the {(args.half or '').upper()} half", file=sys.stderr)
        return 2
    relayed_tools = RELAYED - {"ClaimCheck"} if args.offline_verify else RELAYED
    with OpenAIEndpoint([("127.0.0.1", 0)], upstream=args.upstream, relay_tools=relayed_tools) as endpoint:
        overrides = {"ModelProvider": "openai", "OpenAIBaseUrl": endpoint.url, "OpenAISmallModel": args.model,
                     "OpenAIMainModel": args.model, "OpenAIStructuredOutput": args.structured_output,
                     "ModelTimeoutSeconds": str(args.timeout), "AnswerFormat": args.answer_format}
        overrides |= {"TopK": args.top_k} if args.top_k else {}
        with console.progress(questions.turn_count) as shown:
            run = runner.run((args.data / "corpus").resolve(), questions, overrides=overrides,
                             on_ingest=shown.ingest, on_turn=shown.turn)
        endpoint.wait_idle(30)
        calls = endpoint.calls()
    run.meta |= {"questions": str(args.questions or args.data / "questions.json"), "relayed_roles": sorted(relayed_tools),
                 "upstream_model": args.model, "answer_format": args.answer_format}
    data, page = report.write(run, args.out)
    console.print_tables(run.summary)

    relayed = Counter(c["tool"] for c in calls if c.get("relayed"))
    failed = Counter(c["tool"] for c in calls if c.get("relayed") and (c.get("status") != 200 or c.get("abandoned")))
    print(f"requests to the real model: {dict(relayed)} (failed or timed out: {dict(failed) or 0}); "
          f"answered offline: {dict(Counter(c['tool'] for c in calls if not c.get('relayed')))}")
    for name in ("all", "fit", "report"):
        s = run.summary.get(name)
        if not s:
            continue
        drafts = [d for r in run.records if name == "all" or r["half"] == name
                  for d in r.get("drafts", []) if d.get("answered")]
        passed = sum(not d.get("rejected_by") for d in drafts)
        print(f"{name}: {s['drafts']} drafts; rejected by {s['rejected_by'] or 'none'}; "
              f"{passed} passed every guard and verify; wrong answers shown {s['wrong']}/{s['replies']} "
              f"({s['wrong_share']:.1%}); unanswerable answered {s['unanswerable_answered']} of {s['unanswerable']}")
    written = _model_answers(calls, args.out / "model_answers.jsonl")
    print(f"wrote {data}, {page} and {written}")
    return 0


def stretch_timeouts(definition: str, task_seconds: int, execution_seconds: int) -> str:
    """The ASL with every state's TimeoutSeconds raised to at least `task_seconds` and the
    execution's to at least `execution_seconds`; nothing else changes."""
    asl = json.loads(definition)

    def stretch(states: dict) -> None:
        for state in states.values():
            if "TimeoutSeconds" in state:
                state["TimeoutSeconds"] = max(state["TimeoutSeconds"], task_seconds)
            for branch in state.get("Branches", []):
                stretch(branch["States"])
            for key in ("Iterator", "ItemProcessor"):
                if key in state:
                    stretch(state[key]["States"])

    stretch(asl["States"])
    if "TimeoutSeconds" in asl:
        asl["TimeoutSeconds"] = max(asl["TimeoutSeconds"], execution_seconds)
    return json.dumps(asl, ensure_ascii=False)


def _model_answers(calls: list[dict], path: Path) -> Path:
    """One JSON line per request the real model answered: the request, the tool, its arguments as
    written, and whether they fit the tool's schema (what the provider's parser would say)."""
    from pydantic import ValidationError

    from insurance_llm import wire

    schema_errors: Counter = Counter()
    with path.open("w", encoding="utf-8") as out:
        for call in calls:
            if not call.get("relayed"):
                continue
            # The request too: a prompt or schema change can then be tried on the same requests (replayed
            # against the server) before a whole run.
            row = {"tool": call["tool"], "status": call.get("status"), "arguments": None, "problem": None,
                   "request": call.get("request")}
            try:
                message = json.loads(call.get("answer") or "{}")["choices"][0]["message"]
                row["arguments"] = message["tool_calls"][0]["function"]["arguments"]
                getattr(wire, call["tool"]).model_validate_json(row["arguments"])
            except ValidationError as error:
                row["problem"] = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['type']}" for e in error.errors()[:4])
            except (KeyError, IndexError, TypeError, ValueError) as error:
                row["problem"] = f"no tool call: {type(error).__name__}"
            schema_errors[(call["tool"], "fits" if row["problem"] is None else "does not fit")] += 1
            out.write(json.dumps(row, ensure_ascii=False) + "\n")
    print("the real model's answers against their schema: "
          + ", ".join(f"{tool} {verdict} {n}" for (tool, verdict), n in sorted(schema_errors.items())))
    return path


if __name__ == "__main__":
    sys.exit(main())
