"""report.json (every turn's record, the summaries, the sweep) and report.html, one self-contained page.

The page loads nothing: its style is inline CSS and its charts inline SVG, so it opens from a mail
attachment or a folder without a network.
"""

from __future__ import annotations

import json
from html import escape
from pathlib import Path
from typing import Any

from agent_local.evaluation.runner import EvalRun
from agent_local.evaluation.scoring import (
    CORRECT,
    DECLINED,
    MISTAKES,
    REJECTIONS_LABEL,
    UNANSWERABLE,
    categories_of,
    decline_reason,
    rejections,
)

# Segments of a kind's bar, in drawing order: the verdict for answers, the status for everything else.
SEGMENTS = (
    ("correct", "answer, correct", "#2e7d32"),
    ("wrong", "answer, wrong", "#c62828"),
    ("answer", "answer without citations", "#90a4ae"),
    ("clarify", "clarify", "#f9a825"),
    ("escalate", "escalate", "#3f6fb5"),
    ("refused", "refused", "#6a1b9a"),
)
COLOURS = {key: colour for key, _, colour in SEGMENTS}
BAR_WIDTH, BAR_HEIGHT, LABEL_WIDTH = 600, 22, 120


def write(run: EvalRun, out: Path) -> tuple[Path, Path]:
    """Write both files into `out` (created if needed); returns their paths."""
    out.mkdir(parents=True, exist_ok=True)
    data, page = out / "report.json", out / "report.html"
    data.write_text(json.dumps(as_json(run), ensure_ascii=False, indent=1), encoding="utf-8")
    page.write_text(html(run), encoding="utf-8")
    return data, page


def as_json(run: EvalRun) -> dict[str, Any]:
    return {"meta": run.meta, "summary": run.summary, "sweep": run.sweep, "records": run.records}


def segment_of(record: dict[str, Any]) -> str:
    if record["verdict"] == CORRECT:
        return "correct"
    if record["verdict"] in MISTAKES:
        return "wrong"
    return record["reply"]["status"]


# -- the page ------------------------------------------------------------------------------------------
_STYLE = """
body{font-family:system-ui,-apple-system,"Segoe UI",Tahoma,sans-serif;margin:24px auto;max-width:1100px;
color:#1d2430;background:#fff;line-height:1.45}
h1{font-size:24px;margin:0 0 4px}h2{font-size:19px;margin:28px 0 8px;border-bottom:1px solid #dde2ea}
.meta{color:#566070;font-size:13px}table{border-collapse:collapse;font-size:13px;margin:6px 0}
th,td{border:1px solid #dde2ea;padding:3px 8px;text-align:right}th{background:#f3f5f8}
td.l,th.l{text-align:left}.bad{color:#c62828;font-weight:600}.good{color:#2e7d32;font-weight:600}
.legend span{display:inline-block;margin-right:14px;font-size:13px}
.legend i{display:inline-block;width:12px;height:12px;margin-right:4px;vertical-align:-1px}
.case{border:1px solid #e3c3c3;border-left:4px solid #c62828;padding:8px 12px;margin:10px 0;border-radius:4px}
.case.declined{border-color:#c3cfe3;border-left-color:#3f6fb5}
.case .q{font-size:15px;font-weight:600}.case .r{white-space:pre-wrap;background:#fafafa;padding:6px;margin:6px 0}
blockquote{margin:4px 0 4px 12px;padding:4px 8px;border-left:3px solid #b0bac8;font-size:13px;white-space:pre-wrap}
.cfg{background:#fff6d5;font-weight:600}.note{font-size:13px;color:#566070;max-width:900px}
"""


def html(run: EvalRun) -> str:
    meta, summary = run.meta, run.summary
    body = [
        "<h1>Evaluation report</h1>",
        f'<p class="meta">{escape(_describe(meta))}</p>',
        "<h2>Summary</h2>", _summary_table(summary),
        "<h2>Per kind</h2>", _kind_table(summary["all"]),
        "<h2>Replies per kind</h2>", _legend(), _bars(run.records),
        "<h2>Thresholds: correct against wrong answers</h2>", _sweep(run.sweep),
        f"<h2>Wrong answers ({summary['all']['wrong']})</h2>", _mistakes(run.records),
        f"<h2>Declined answerable questions ({len(_declined(run.records))})</h2>", _declined_cases(run.records),
    ]
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
            f"<title>agent eval: {escape(Path(meta.get('docs', '')).name)}</title><style>{_STYLE}</style></head>"
            f"<body>{''.join(body)}</body></html>\n")


def _describe(meta: dict[str, Any]) -> str:
    ingest = meta.get("ingest", {})
    parameters = " ".join(f"{k}={v}" for k, v in sorted(meta.get("parameters", {}).items())) or "template defaults"
    roles = ", ".join(f"{role} on {name}" for role, name in meta.get("role_providers", {}).items())
    return (f"{meta.get('docs', '')} ({ingest.get('files', 0)} documents, {ingest.get('chunks', 0)} chunks); "
            f"questions {meta.get('questions', '')}; provider {meta.get('provider') or '?'}"
            f"{f' ({roles})' if roles else ''}; "
            f"parameters {parameters}; MinConfidence {meta.get('min_confidence')}, VerifyMinSupport "
            f"{meta.get('min_support')}; started {meta.get('started_at', '')}, {meta.get('seconds', 0)} s")


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value / 1000:.1f} s"


def _summary_table(summary: dict[str, Any]) -> str:
    rows = []
    for name, label in (("all", "all"), ("fit", "FIT half"), ("report", "REPORT half")):
        s = summary.get(name)
        if not s:
            continue
        wrong_class = "bad" if s["wrong"] else "good"
        rows.append(
            f'<tr><td class="l">{label}</td><td>{s["replies"]}</td>'
            f'<td>{s["answerable_correct"]}/{s["answerable"]} ({s["answerable_correct_share"]:.0%})</td>'
            f'<td class="{wrong_class}">{s["wrong"]}/{s["replies"]} ({s["wrong_share"]:.1%})</td>'
            f'<td>{s["unanswerable_answered"]} of {s["unanswerable"]}</td><td>{s["llm_calls_per_turn"]:.2f}</td>'
            f'<td>{_ms(s["latency_p50_ms"])}</td><td>{_ms(s["latency_p95_ms"])}</td></tr>')
    head = ('<tr><th class="l"></th><th>replies</th><th>answerable correct</th><th>wrong answers</th>'
            '<th>unanswerable answered</th><th>model calls / turn</th><th>p50</th><th>p95</th></tr>')
    return f"<table>{head}{''.join(rows)}</table>"


def _kind_table(summary: dict[str, Any]) -> str:
    head = ('<tr><th class="l">kind</th><th>replies</th><th>correct</th><th>wrong</th><th>declined</th>'
            f'<th class="l">escalation reasons</th><th class="l">{REJECTIONS_LABEL}</th><th>model calls / turn</th>'
            '<th>p50</th><th>p95</th></tr>')
    rows = []
    for kind, s in summary["by_kind"].items():
        reasons = ", ".join(f"{reason} {n}" for reason, n in sorted(s["reasons"].items())) or "-"
        rows.append(f'<tr><td class="l">{escape(kind)}</td><td>{s["replies"]}</td><td>{s["correct"]}</td>'
                    f'<td class="{"bad" if s["wrong"] else ""}">{s["wrong"]}</td><td>{s["declined"]}</td>'
                    f'<td class="l">{escape(reasons)}</td><td class="l">{escape(rejections(s))}</td>'
                    f'<td>{s["llm_calls_per_turn"]:.2f}</td>'
                    f'<td>{_ms(s["latency_p50_ms"])}</td><td>{_ms(s["latency_p95_ms"])}</td></tr>')
    return f"<table>{head}{''.join(rows)}</table>"


def _legend() -> str:
    return '<p class="legend">' + "".join(
        f'<span><i style="background:{colour}"></i>{escape(label)}</span>' for _, label, colour in SEGMENTS) + "</p>"


def _bars(records: list[dict[str, Any]]) -> str:
    """One stacked bar per kind, the full width being all of that kind's replies."""
    kinds = categories_of(r["kind"] for r in records)
    height = len(kinds) * (BAR_HEIGHT + 10) + 10
    width = LABEL_WIDTH + BAR_WIDTH + 60
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
             f'shape-rendering="crispEdges" font-size="13" role="img" aria-label="replies per kind">']
    for row, kind in enumerate(kinds):
        mine = [r for r in records if r["kind"] == kind]
        y = 10 + row * (BAR_HEIGHT + 10)
        parts.append(f'<text x="0" y="{y + 16}">{escape(kind)}</text>')
        x = 0
        for index, (key, label, colour) in enumerate(SEGMENTS):
            count = sum(segment_of(r) == key for r in mine)
            # Whole pixels, the last segment taking the rounding, so the bars are exactly as wide.
            end = round(BAR_WIDTH * sum(sum(segment_of(r) == k for r in mine) for k, _, _ in SEGMENTS[: index + 1])
                        / len(mine))
            if count:
                parts.append(f'<rect class="seg" data-kind="{escape(kind)}" data-segment="{key}" '
                             f'data-count="{count}" x="{LABEL_WIDTH + x}" y="{y}" width="{end - x}" '
                             f'height="{BAR_HEIGHT}" fill="{colour}"><title>{escape(label)}: {count}</title></rect>')
            x = end
        parts.append(f'<text x="{LABEL_WIDTH + BAR_WIDTH + 8}" y="{y + 16}">{len(mine)}</text>')
    parts.append("</svg>")
    return "".join(parts)


def _line_chart(points: list[dict[str, Any]], axis: str, configured: float, title: str) -> str:
    """Correct and wrong answers against one threshold (the other at its configured value)."""
    w, h, left, bottom, top = 420, 220, 40, 30, 20
    peak = max([p["correct"] for p in points] + [p["wrong"] for p in points] + [1])

    def x(value: float) -> float:
        return left + value * (w - left - 10)

    def y(value: float) -> float:
        return top + (1 - value / peak) * (h - top - bottom)

    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" font-size="11" '
             f'role="img" aria-label="{escape(title)}"><text x="{left}" y="12" font-weight="600">{escape(title)}</text>',
             f'<line x1="{left}" y1="{y(0)}" x2="{w - 10}" y2="{y(0)}" stroke="#8a94a3"/>',
             f'<line x1="{left}" y1="{top}" x2="{left}" y2="{y(0)}" stroke="#8a94a3"/>',
             f'<text x="{left - 6}" y="{y(peak) + 4}" text-anchor="end">{peak}</text>',
             f'<text x="{left - 6}" y="{y(0) + 4}" text-anchor="end">0</text>',
             f'<line x1="{x(configured):.1f}" y1="{top}" x2="{x(configured):.1f}" y2="{y(0)}" stroke="#b08900" '
             'stroke-dasharray="4 3"><title>configured</title></line>']
    for tick in (0.0, 0.25, 0.5, 0.75, 1.0):
        parts.append(f'<text x="{x(tick):.1f}" y="{h - 12}" text-anchor="middle">{tick:g}</text>')
    for key, colour in (("correct", "#43a047"), ("wrong", "#e53935")):
        line = " ".join(f"{x(p[axis]):.1f},{y(p[key]):.1f}" for p in points)
        parts.append(f'<polyline class="sweep-{key}" points="{line}" fill="none" stroke="{colour}" stroke-width="2"/>')
    parts.append("</svg>")
    return "".join(parts)


def _sweep(sweep: dict[str, Any]) -> str:
    configured = sweep["configured"]
    c0, s0 = configured["min_confidence"], configured["min_support"]
    note = (f'<p class="note">Each verified draft of this run (last draft of its turn; {sweep["drafts"]} drafts) with '
            "its generate confidence and verify support, counted as an answer at a setting when both are at or "
            "above it and nothing else stopped it. Read off this run, not re-run: a regeneration another setting "
            f"would have caused or avoided is not simulated, and {sweep['unverified_drafts']} drafts never verified "
            "(escalated for low confidence or budget) are left out. Green: correct answers; red: wrong answers "
            "(unanswerable questions answered included); the dashed line and the yellow cell are the configured "
            "setting.</p>")
    charts = (_line_chart(sweep["confidence"], "min_confidence", c0, f"MinConfidence (VerifyMinSupport {s0:g})")
              + _line_chart(sweep["support"], "min_support", s0, f"VerifyMinSupport (MinConfidence {c0:g})"))
    supports = [p["min_support"] for p in sweep["grid"][0]] if sweep["grid"] else []
    head = "<tr><th>MinConfidence \\ VerifyMinSupport</th>" + "".join(f"<th>{s:g}</th>" for s in supports) + "</tr>"
    rows = []
    for line in sweep["grid"]:
        cells = []
        for p in line:
            current = p["min_confidence"] == c0 and p["min_support"] == s0
            cells.append(f'<td class="{"cfg" if current else ""}">{p["correct"]} / '
                         f'<span class="{"bad" if p["wrong"] else ""}">{p["wrong"]}</span></td>')
        rows.append(f"<tr><th>{line[0]['min_confidence']:g}</th>{''.join(cells)}</tr>")
    grid = f'<table class="grid">{head}{"".join(rows)}</table><p class="note">Cells: correct / wrong answers.</p>'
    return note + f"<div>{charts}</div>" + grid


def _mistakes(records: list[dict[str, Any]]) -> str:
    wrong = [r for r in records if r["verdict"] in MISTAKES]
    if not wrong:
        return '<p class="good">None.</p>'
    out = []
    for r in wrong:
        expected = ("unanswerable: any answer with citations is wrong" if r["verdict"] == "answered" else
                    f"expected a citation of {', '.join(r['file_ids'])} and one of: "
                    + " | ".join(r["must_contain"]))
        passages = "".join(
            f'<p class="meta">cited {escape(p.get("title") or "")} ({escape(p["chunk_id"])})</p>'
            f'<blockquote dir="auto">{escape(p.get("text") or "(text not stored)")}</blockquote>'
            for p in r.get("passages", []))
        out.append(
            f'<div class="case" id="{escape(r["id"])}"><p class="meta">{escape(r["id"])} · {escape(r["kind"])} · '
            f'{r["half"].upper()} half · verdict {r["verdict"]}</p>'
            f'<p class="q" dir="auto">{escape(r["question"])}</p><p class="meta" dir="auto">{escape(expected)}</p>'
            f'<div class="r" dir="auto">{escape(r["reply"]["message"])}</div>{passages}</div>')
    return "".join(out)


def _declined(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [r for r in records if r["verdict"] == DECLINED and r["kind"] != UNANSWERABLE]


def _expected(record: dict[str, Any]) -> str:
    return (f"expected a citation of {', '.join(record['file_ids'])} and one of: "
            + " | ".join(record["must_contain"]))


def _declined_cases(records: list[dict[str, Any]]) -> str:
    """Every answerable turn that got no scored answer, with why: the recall a stricter setting costs."""
    declined = _declined(records)
    if not declined:
        return '<p class="good">None.</p>'
    out = []
    for r in declined:
        rejected = sorted({guard for d in r.get("drafts", []) for guard in d.get("rejected_by", [])})
        drafts = (f'<p class="meta">drafts rejected by: {escape(", ".join(rejected))}</p>' if rejected else "")
        out.append(
            f'<div class="case declined" id="{escape(r["id"])}"><p class="meta">{escape(r["id"])} · '
            f'{escape(r["kind"])} · {r["half"].upper()} half · <span class="reason">{escape(decline_reason(r))}'
            f'</span></p><p class="q" dir="auto">{escape(r["question"])}</p>'
            f'<p class="meta" dir="auto">{escape(_expected(r))}</p>'
            f'<div class="r" dir="auto">{escape(r["reply"]["message"])}</div>{drafts}</div>')
    return "".join(out)
