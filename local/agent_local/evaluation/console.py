"""What `agent eval` shows on a terminal: a progress bar on stderr while it runs, then tables on stdout."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from typing import Any

from agent_local.evaluation.scoring import MISTAKES, REJECTIONS_LABEL, rejections


class Progress:
    """Ingest and turn progress on stderr (a bar on a terminal, nothing otherwise)."""

    def __init__(self, bar: Any, total_turns: int) -> None:
        self.bar = bar
        self.ingest_task = bar.add_task("embedding chunks", total=None)
        self.turn_task = bar.add_task("turns", total=total_turns, visible=False)
        self.wrong = 0

    def ingest(self, done: int, total: int) -> None:
        self.bar.update(self.ingest_task, completed=done, total=total)

    def turn(self, record: dict[str, Any]) -> None:
        self.wrong += record["verdict"] in MISTAKES
        self.bar.update(self.ingest_task, visible=False)
        self.bar.update(self.turn_task, advance=1, visible=True, description=f"turns ({self.wrong} wrong)")


@contextlib.contextmanager
def progress(total_turns: int) -> Iterator[Progress]:
    from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn
    from rich.progress import Progress as Bar

    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Bar(*columns, transient=True, disable=not sys.stderr.isatty()) as bar:
        yield Progress(bar, total_turns)


def _seconds(value: float | None) -> str:
    return "-" if value is None else f"{value / 1000:.1f}"


def _picks(summary: dict[str, Any]) -> str:
    if not summary.get("picked"):
        return ""
    return (f"; picking it, {summary['picked_correct']} correct and {summary['picked_wrong']} wrong "
            f"of {summary['picked']}")


_NUMERIC = frozenset({"n", "correct", "wrong", "declined", "calls/turn", "p50 s", "p95 s"})


def print_tables(summary: dict[str, Any], console: Any = None) -> None:
    """One table per half (all, FIT, REPORT): a row per kind and a total row."""
    from rich.console import Console
    from rich.table import Table

    # Off a terminal rich assumes 80 columns, too narrow for the reasons column: a log gets room.
    console = console or Console(highlight=False, width=None if sys.stdout.isatty() else 140)
    for name, title in (("all", "all replies"), ("fit", "FIT half"), ("report", "REPORT half")):
        s = summary.get(name)
        if not s or (name != "all" and s["replies"] == summary["all"]["replies"]):
            continue  # a run of one half: its table is the whole run's
        table = Table(title=f"{title}: {s['answerable_correct']}/{s['answerable']} answerable correct, "
                            f"{s['wrong']}/{s['replies']} wrong ({s['wrong_share']:.1%}), unanswerable answered "
                            f"{s['unanswerable_answered']} of {s['unanswerable']}; the answer among the passages "
                            f"offered for {s.get('answerable_offered', 0)}{_picks(s)}", title_justify="left")
        for column in ("kind", "n", "correct", "wrong", "declined", "escalation reasons", REJECTIONS_LABEL,
                       "calls/turn", "p50 s", "p95 s"):
            table.add_column(column, justify="right" if column in _NUMERIC else "left")
        rows = list(s["by_kind"].items()) + [("total", s)]
        for kind, k in rows:
            reasons = ", ".join(f"{reason} {n}" for reason, n in sorted(k["reasons"].items())) or "-"
            table.add_row(kind, str(k["replies"]), str(k["correct"]), str(k["wrong"]), str(k["declined"]), reasons,
                          rejections(k), f"{k['llm_calls_per_turn']:.2f}", _seconds(k["latency_p50_ms"]),
                          _seconds(k["latency_p95_ms"]), end_section=len(rows) > 1 and kind == rows[-2][0])
        console.print(table)
    errors = summary["all"]["system_errors"]
    if errors:
        console.print(f"[bold red]{errors} replies ended in system_error[/]: a failure of the stack or the "
                      "provider, not a judgement of the question; see the page's records")
