"""The insurance-law-fa set's scoring rule, its FIT/REPORT split, the summaries and the threshold sweep.

- reply and phrase are normalised alike (Arabic ي/ك -> Persian, ZWNJ -> space, Persian/Arabic digits
  -> Latin, whitespace runs -> one space); a soft hyphen, joiner or direction mark between two Persian
  letters stands in for the half-space and is read as one (-> space), elsewhere it is dropped;
- an answerable turn is *correct* iff the reply's status is `answer`, its citations include one of
  the expected `file_ids` and its message contains one of the `must_contain` phrases; any other
  `answer` with citations is *wrong*; every other reply is *declined*;
- an unanswerable question is *answered* (a mistake) iff it gets an `answer` with citations, else
  *declined*. Wrong answers are counted over all replies: answerable turns answered wrongly plus
  unanswerable questions answered.
- a clarifying question whose options are passages *offers the answer* iff one offered passage of an
  expected file contains a `must_contain` phrase: the user's pick of it would show the answer. This
  is how a provider that cannot read (the offline one) helps; it is counted apart, never as correct.
  Outside a chain, the next turn of the thread then picks that passage by its number, and its reply
  is judged as above (`picked`, `picked_correct`, `picked_wrong`), apart from the first turn's.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any, Literal

from insurance_agent.policy.guards import GUARDS

Half = Literal["fit", "report"]
CATEGORIES = ("formal", "colloquial", "english", "chain-first", "follow-up", "unanswerable")
UNANSWERABLE = "unanswerable"
CORRECT, WRONG, DECLINED, ANSWERED = "correct", "wrong", "declined", "answered"
MISTAKES = frozenset({WRONG, ANSWERED})

_ARABIC = str.maketrans("يكىۀة", "یکیهه")
_DIGITS = str.maketrans("۰۱۲۳۴۵۶۷۸۹٠١٢٣٤٥٦٧٨٩", "01234567890123456789")
_INVISIBLE = re.compile("[\u200c\u200f\u200e\u00ad\u200d]")
# Word processors put a direction mark where the half-space belongs («بیمه» RLM «نامه»), and ingest
# shows it as the half-space: the same word either way, as `insurance_agent.text.normalize` reads it.
_HALF_SPACE_STAND_IN = re.compile("(?<=[\u0600-\u06ff])[\u200f\u200e\u00ad\u200d]+(?=[\u0600-\u06ff])")


def half_of(item_id: str) -> Half:
    """FIT or REPORT, fixed by the id's hash (no look at the question text); a chain stays whole."""
    return "fit" if hashlib.sha256(item_id.encode("utf-8")).digest()[0] % 2 == 0 else "report"


def score_text(text: str) -> str:
    """The set's normalisation, applied to replies and phrases alike."""
    text = _HALF_SPACE_STAND_IN.sub(" ", text)
    text = text.translate(_ARABIC).translate(_DIGITS).replace("\u200c", " ")
    text = _INVISIBLE.sub("", text)
    return re.sub(r"\s+", " ", text).strip()


def judge(category: str, file_ids: Sequence[str], must_contain: Sequence[str], status: str, message: str,
          cited_files: Iterable[str]) -> str:
    """The verdict on one reply: correct / wrong / declined, or answered / declined for an unanswerable one."""
    cited = set(cited_files)
    answered = status == "answer" and bool(cited)
    if category == UNANSWERABLE:
        return ANSWERED if answered else DECLINED
    if not answered:
        return DECLINED
    text = score_text(message)
    phrase = any(score_text(p) in text for p in must_contain)
    return CORRECT if phrase and cited & set(file_ids) else WRONG


def offers_answer(file_ids: Sequence[str], must_contain: Sequence[str], passages: Iterable[dict[str, Any]]) -> bool:
    """Whether one offered passage (`file_id`, `text`) of an expected file holds an expected phrase."""
    phrases = [score_text(p) for p in must_contain]
    return any(passage.get("file_id") in file_ids and any(p in score_text(passage.get("text", "")) for p in phrases)
               for passage in passages)


def categories_of(kinds: Iterable[str]) -> list[str]:
    """The set's categories first in their usual order, then any other label in order of appearance."""
    seen = list(dict.fromkeys(kinds))
    return [c for c in CATEGORIES if c in seen] + [k for k in seen if k not in CATEGORIES]


def percentile(values: Sequence[float], q: float) -> float | None:
    """Nearest-rank percentile (q in 0..100); None without values."""
    if not values:
        return None
    ordered = sorted(values)
    return ordered[max(math.ceil(q / 100 * len(ordered)) - 1, 0)]


def _share(part: int, whole: int) -> float:
    return round(part / whole, 4) if whole else 0.0


def _reason(record: dict[str, Any]) -> str | None:
    """Why a turn was not answered: the escalation reason, or the refusal code (a chain's thread handed off)."""
    if record["reply"].get("reason"):
        return record["reply"]["reason"]
    return f"refused: {record['refusal']}" if record.get("refusal") else None


def kind_summary(records: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Counts for one group of replies: verdicts, statuses, escalation reasons, model calls, latency."""
    verdicts = Counter(r["verdict"] for r in records)
    latencies = [r["latency_ms"] for r in records]
    drafts = [d for r in records for d in r.get("drafts", []) if d.get("answered")]
    return {
        "replies": len(records),
        "correct": verdicts[CORRECT],
        "wrong": verdicts[WRONG] + verdicts[ANSWERED],
        "declined": verdicts[DECLINED],
        "statuses": dict(Counter(r["reply"]["status"] for r in records)),
        "reasons": dict(Counter(_reason(r) for r in records if _reason(r))),
        # Every answered draft of the turns (a turn may draft again after a rejection), and what rejected them.
        "drafts": len(drafts),
        "rejected_by": {guard: n for guard in GUARDS
                        if (n := sum(guard in d.get("rejected_by", []) for d in drafts))},
        "llm_calls_per_turn": round(sum(r["llm_calls"] for r in records) / len(records), 2) if records else 0.0,
        "latency_p50_ms": percentile(latencies, 50),
        "latency_p95_ms": percentile(latencies, 95),
    }


REJECTIONS_LABEL = "drafts rejected, by guard"


def rejections(summary: dict[str, Any]) -> str:
    """«numbers 3, verify 5 of 12»: how many answered drafts each guard rejected, of how many drafts
    («none of 12» when every draft passed, «-» without drafts)."""
    drafts = summary.get("drafts", 0)
    if not drafts:
        return "-"
    rejected = ", ".join(f"{guard} {n}" for guard, n in summary.get("rejected_by", {}).items())
    return f"{rejected or 'none'} of {drafts}"


def decline_reason(record: dict[str, Any]) -> str:
    """Why a turn got no scored answer: the escalation reason or refusal code, a clarifying question,
    or an answer without citations."""
    reason = _reason(record)
    status = record["reply"]["status"]
    if reason:
        return reason if reason.startswith(f"{status}:") else f"{status}: {reason}"
    if status == "clarify":
        return "clarify: asked a clarifying question"
    if status == "answer":
        return "answer without citations"
    return status


def summarize(records: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The figures of one run (or one half): totals, then one summary per category."""
    answerable = [r for r in records if r["kind"] != UNANSWERABLE]
    unanswerable = [r for r in records if r["kind"] == UNANSWERABLE]
    total = kind_summary(records)
    correct = sum(r["verdict"] == CORRECT for r in answerable)
    answered = sum(r["verdict"] == ANSWERED for r in unanswerable)
    return total | {
        "answerable": len(answerable),
        "answerable_correct": correct,
        "answerable_correct_share": _share(correct, len(answerable)),
        "wrong_share": _share(total["wrong"], len(records)),
        "unanswerable": len(unanswerable),
        "unanswerable_answered": answered,
        "answerable_offered": sum(bool(r.get("offers_answer")) for r in answerable),
        # The turns that then picked that passage, and what their replies were worth.
        "picked": len(picked := [r["pick"] for r in answerable if r.get("pick")]),
        "picked_correct": sum(p["verdict"] == CORRECT for p in picked),
        "picked_wrong": sum(p["verdict"] == WRONG for p in picked),
        "system_errors": total["reasons"].get("system_error", 0),
        "by_kind": {kind: kind_summary([r for r in records if r["kind"] == kind])
                    for kind in categories_of(r["kind"] for r in records)},
    }


def summaries(records: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The whole run and each FIT/REPORT half that has replies."""
    out = {"all": summarize(records)}
    for half in ("fit", "report"):
        part = [r for r in records if r["half"] == half]
        if part:
            out[half] = summarize(part)
    return out


# -- threshold sweep ---------------------------------------------------------------------------------
STEPS = tuple(round(n / 10, 2) for n in range(11))


def _answers_at(draft: dict[str, Any], min_confidence: float, min_support: float) -> bool:
    return (draft["eligible"] and draft["confidence"] >= min_confidence - 1e-9
            and draft["support"] >= min_support - 1e-9)


def sweep(records: Sequence[dict[str, Any]], min_confidence: float, min_support: float) -> dict[str, Any]:
    """Correct against wrong answers at other MinConfidence / VerifyMinSupport settings, read off this run.

    Each turn's last verified draft is kept with its generate confidence, its verify support and the
    verdict its text and citations get. A draft is *eligible* when no guard failed and nothing but
    these two thresholds stood between it and an answer (a draft that met both and still did not
    answer was stopped by something else). At a setting, the eligible drafts at or above both
    thresholds count as answers. Not simulated: a regeneration a setting would have avoided or
    needed, and drafts never verified (escalated for low confidence or budget), whose support is
    unknown.
    """
    drafts = [r["draft"] for r in records if r.get("draft") and r["draft"].get("support") is not None]

    def point(confidence: float, support: float) -> dict[str, Any]:
        chosen = [d for d in drafts if _answers_at(d, confidence, support)]
        return {"min_confidence": confidence, "min_support": support,
                "correct": sum(d["verdict"] == CORRECT for d in chosen),
                "wrong": sum(d["verdict"] in MISTAKES for d in chosen)}

    confidences = sorted(set(STEPS) | {round(min_confidence, 4)})
    supports = sorted(set(STEPS) | {round(min_support, 4)})
    return {
        "configured": {"min_confidence": min_confidence, "min_support": min_support},
        "drafts": len(drafts),
        "unverified_drafts": sum(1 for r in records if r.get("draft") and r["draft"].get("support") is None),
        "confidence": [point(c, min_support) for c in confidences],
        "support": [point(min_confidence, s) for s in supports],
        "grid": [[point(c, s) for s in supports] for c in confidences],
    }
