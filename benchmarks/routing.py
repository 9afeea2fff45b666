"""Routing on a labelled set: hand-off requests, restricted intents, frustration, ordinary questions.

    .venv/bin/python benchmarks/routing.py [--show fit] [--json out.json]

The set (tests/data/routing_set.jsonl) is written for an insurer other than the sample corpus's
(cargo, engineering, cyber, fire lines), in formal Persian, colloquial Persian and English. It is
split deterministically by the SHA-256 of each text (first byte even: FIT, odd: REPORT). Rules and
exemplars may be adjusted on FIT failures only (`--show fit` lists them); REPORT is only measured,
and its failures are never printed. tests/data/triage_heldout.jsonl and escalation_cases.jsonl,
whose phrases have been used to write rules, are part of FIT.

Each message goes through what the triage node does on the embedded default: the policy signals
(policy/routing.py), the local triager with the scope of a small corpus of that insurer
(tests/data/routing_corpus, read as a "user": its officer-only document does not count), and the
combination of both. The routed label is `restricted` if a restricted category is set, else
`handoff_request`, else `frustration`, else `ordinary` for knowledge/account, else `out_of_scope`
(out of scope or small talk). Printed per part: precision/recall per label, restricted-category
accuracy, and the false-escalation rate: ordinary questions routed to any escalation.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "layers" / "core"))

from insurance_agent.models.roles import Intent, TriageRequest  # noqa: E402
from insurance_agent.policy.escalation import load_policy  # noqa: E402
from insurance_agent.policy.routing import combine, policy_signals  # noqa: E402
from insurance_search.documents import load_document  # noqa: E402
from insurance_search.topics import CorpusScope, scope_from_payloads  # noqa: E402
from insurance_offline.triage import LocalTriager  # noqa: E402

DATA = ROOT / "tests" / "data"
SET = DATA / "routing_set.jsonl"
CORPUS = DATA / "routing_corpus"
LABELS = ("handoff_request", "restricted", "frustration", "ordinary", "out_of_scope")
ESCALATIONS = ("handoff_request", "restricted", "frustration")
_HELDOUT_LABELS = {
    "knowledge": "ordinary",
    "account": "ordinary",
    "chitchat": "out_of_scope",
    "out_of_scope": "out_of_scope",
    "handoff_request": "handoff_request",
}
_CASE_LABELS = {"none": "ordinary", "handoff": "handoff_request", "frustration": "frustration"}


def part_of(text: str) -> str:
    return "fit" if hashlib.sha256(text.encode("utf-8")).digest()[0] % 2 == 0 else "report"


def _rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def load_set() -> list[dict]:
    """Every labelled message with its part: the routing set split in two, the older files as FIT."""
    items = []
    for row in _rows(SET):
        items.append({**row, "part": part_of(row["text"]), "source": "routing_set"})
    for row in _rows(DATA / "triage_heldout.jsonl"):
        label = _HELDOUT_LABELS[row["intent"]]
        register = "en" if row.get("language") == "en" else "fa"
        items.append({"text": row["text"], "label": label, "register": register, "part": "fit", "source": "heldout"})
    for row in _rows(DATA / "escalation_cases.jsonl"):
        expect = row["expect"]
        label = _CASE_LABELS.get(expect, "restricted")
        item = {"text": row["text"], "label": label, "register": row["language"], "part": "fit", "source": "cases"}
        if label == "restricted":
            item["category"] = expect
        items.append(item)
    return items


def corpus_scope() -> CorpusScope:
    """The scope a "user" of the routing corpus's insurer has (officer-only documents excluded)."""
    payloads = []
    for path in sorted(CORPUS.glob("*.md")):
        doc = load_document(path)
        if "user" in doc.audience or "both" in doc.audience:
            payloads.append({"title": doc.title, "text": doc.text, "product": doc.product, "domain": doc.domain})
    return scope_from_payloads(payloads)


def route(triager: LocalTriager, policy, scope: CorpusScope, text: str) -> tuple[str, str | None]:
    signals = policy_signals(text, [], policy)
    request = TriageRequest(message=text, corpus_topics=list(scope.topics), in_corpus=scope.covers(text))
    decision = combine(triager(request), signals)
    if decision.restricted_category:
        return "restricted", decision.restricted_category
    if decision.route == Intent.HANDOFF_REQUEST.value:
        return "handoff_request", None
    if decision.frustration:
        return "frustration", None
    if decision.route in (Intent.KNOWLEDGE.value, Intent.ACCOUNT.value):
        return "ordinary", None
    return "out_of_scope", None


def measure(items: list[dict]) -> dict:
    confusion: Counter = Counter()
    category_ok = category_total = 0
    ordinary = escalated = 0
    for item in items:
        gold, got = item["label"], item["routed"]
        confusion[(gold, got)] += 1
        if gold == "restricted" and got == "restricted":
            category_total += 1
            category_ok += item["category"] == item["routed_category"]
        if gold == "ordinary":
            ordinary += 1
            escalated += got in ESCALATIONS
    labels = {}
    for label in LABELS:
        tp = confusion[(label, label)]
        predicted = sum(v for (g, p), v in confusion.items() if p == label)
        actual = sum(v for (g, p), v in confusion.items() if g == label)
        labels[label] = {
            "n": actual,
            "precision": round(tp / predicted, 3) if predicted else None,
            "recall": round(tp / actual, 3) if actual else None,
        }
    return {
        "n": len(items),
        "accuracy": round(sum(confusion[(label, label)] for label in LABELS) / len(items), 3) if items else None,
        "labels": labels,
        "restricted_category_accuracy": round(category_ok / category_total, 3) if category_total else None,
        "false_escalation_rate": round(escalated / ordinary, 3) if ordinary else None,
        "false_escalations": f"{escalated}/{ordinary}",
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--show", choices=["fit"], help="list the FIT part's misrouted messages")
    parser.add_argument("--json", type=Path, help="write the figures as JSON")
    args = parser.parse_args()

    policy = load_policy()
    scope = corpus_scope()
    triager = LocalTriager(policy=policy, scope="insurance")
    items = load_set()
    for item in items:
        item["routed"], item["routed_category"] = route(triager, policy, scope, item["text"])

    figures = {}
    for part in ("fit", "report"):
        chosen = [i for i in items if i["part"] == part]
        figures[part] = measure(chosen)
        figures[part]["by_register"] = {
            register: measure([i for i in chosen if i["register"] == register])["accuracy"]
            for register in sorted({i["register"] for i in chosen})
        }
    for part, result in figures.items():
        print(f"\n{part.upper()}  n={result['n']}  accuracy={result['accuracy']}  by register {result['by_register']}")
        print(f"  {'label':16} {'n':>4} {'precision':>10} {'recall':>8}")
        for label, row in result["labels"].items():
            print(f"  {label:16} {row['n']:>4} {row['precision']!s:>10} {row['recall']!s:>8}")
        print(f"  restricted category accuracy (when restricted): {result['restricted_category_accuracy']}")
        print(f"  false escalations of ordinary questions: {result['false_escalations']}"
              f" (rate {result['false_escalation_rate']})")
    if args.show == "fit":
        print("\nFIT misrouted (gold -> routed):")
        for item in items:
            wrong = item["routed"] != item["label"] or (
                item["label"] == "restricted" and item.get("category") != item["routed_category"]
            )
            if item["part"] == "fit" and wrong:
                print(f"  [{item['source']}] {item['label']}/{item.get('category')} -> "
                      f"{item['routed']}/{item['routed_category']}: {item['text']}")
    if args.json:
        args.json.write_text(json.dumps(figures, ensure_ascii=False, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
