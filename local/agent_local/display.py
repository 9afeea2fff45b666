"""How replies are shown in the terminal. Display only: the stored reply is never changed."""

from __future__ import annotations

import contextlib
import datetime as dt
import re
import sys
from collections.abc import Callable, Iterator

import jdatetime

_PERSIAN_DIGITS = str.maketrans("0123456789", "۰۱۲۳۴۵۶۷۸۹")
_LATIN_DIGITS = str.maketrans("۰۱۲۳۴۵۶۷۸۹٠١٢٣٤٥٦٧٨٩", "01234567890123456789")
_DIGIT = r"[0-9۰-۹٠-٩]"
# A Gregorian date written year first (2026-11-30, 2026/11/30, with Latin or Persian digits), not part
# of a longer number or of an already shown "(2026-11-30)".
_GREGORIAN = re.compile(rf"(?<![0-9۰-۹٠-٩/\-(])({_DIGIT}{{4}})([-/])({_DIGIT}{{1,2}})\2({_DIGIT}{{1,2}})(?![0-9۰-۹٠-٩/\-])")


def to_jalali(day: dt.date) -> str:
    """The Jalali date as a Persian reader writes it: year/month/day in Persian digits."""
    jalali = jdatetime.date.fromgregorian(date=day)
    return f"{jalali.year:04d}/{jalali.month:02d}/{jalali.day:02d}".translate(_PERSIAN_DIGITS)


def persian_dates(text: str) -> str:
    """Show each Gregorian date as «Jalali (source value)», e.g. 2026-11-30 -> ۱۴۰۵/۰۹/۰۹ (2026-11-30).

    Year-first dates whose year is not a plausible Gregorian year (such as 1405/09/09, already Jalali)
    and impossible dates are left as written.
    """

    def replace(match: re.Match[str]) -> str:
        year, _, month, day = (part.translate(_LATIN_DIGITS) for part in match.groups())
        if not 1800 <= int(year) <= 2200:
            return match.group(0)
        try:
            day_value = dt.date(int(year), int(month), int(day))
        except ValueError:
            return match.group(0)
        return f"{to_jalali(day_value)} ({match.group(0)})"

    return _GREGORIAN.sub(replace, text)


def reply_text(reply: dict) -> str:
    """The reply's message as shown to the user: Persian replies get Jalali dates."""
    message = str(reply.get("message", ""))
    return persian_dates(message) if reply.get("language") == "fa" else message


@contextlib.contextmanager
def ingest_progress() -> Iterator[Callable[[int, int], None]]:
    """A progress bar with the files done, elapsed time and ETA on a terminal's stderr; silent otherwise."""
    from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn,
                               TimeRemainingColumn)

    columns = (TextColumn("ingesting"), BarColumn(), MofNCompleteColumn(), TextColumn("files"),
               TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn())
    with Progress(*columns, transient=True, disable=not sys.stderr.isatty()) as progress:
        task = progress.add_task("ingest", total=None)
        yield lambda done, total: progress.update(task, completed=done, total=total)


def documents_table(documents: list[dict]) -> str:
    """`agent documents`: one line per document, then its warnings indented below it."""
    header = ("file_id", "format", "pages", "chunks", "title")
    rows = [(d["file_id"], d.get("format") or "-", "-" if d.get("pages") is None else str(d["pages"]),
             str(d["chunks"]), d.get("title") or "") for d in documents]
    widths = [max(len(header[i]), *(len(row[i]) for row in rows)) for i in range(4)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(header[:4], widths, strict=True)) + "  " + header[4]]
    for doc, row in zip(documents, rows, strict=True):
        lines.append("  ".join(value.ljust(w) for value, w in zip(row[:4], widths, strict=True)) + "  " + row[4])
        lines.extend(f"    warning: {warning}" for warning in doc.get("warnings") or [])
    return "\n".join(lines)
