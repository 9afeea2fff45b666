"""Persian replies show Gregorian dates in the Jalali calendar, keeping the source's value; display only."""

from __future__ import annotations

import datetime as dt

import pytest
from agent_local.display import persian_dates, reply_text, to_jalali


@pytest.mark.parametrize(("day", "jalali"), [
    (dt.date(2026, 11, 30), "۱۴۰۵/۰۹/۰۹"),
    (dt.date(2025, 3, 21), "۱۴۰۴/۰۱/۰۱"),  # Nowruz 1404
    (dt.date(2024, 3, 20), "۱۴۰۳/۰۱/۰۱"),  # Nowruz 1403
    (dt.date(2025, 3, 20), "۱۴۰۳/۱۲/۳۰"),  # 1403 is a leap year: Esfand has 30 days
    (dt.date(2026, 3, 20), "۱۴۰۴/۱۲/۲۹"),
])
def test_gregorian_to_jalali(day, jalali):
    assert to_jalali(day) == jalali


@pytest.mark.parametrize(("text", "shown"), [
    ("تاریخ پایان: 2026-11-30.", "تاریخ پایان: ۱۴۰۵/۰۹/۰۹ (2026-11-30)."),
    ("از ۲۰۲۵-۰۳-۲۱ تا 2026/3/20", "از ۱۴۰۴/۰۱/۰۱ (۲۰۲۵-۰۳-۲۱) تا ۱۴۰۴/۱۲/۲۹ (2026/3/20)"),
    ("۱۴۰۵/۰۹/۰۹ و 1405/09/09", "۱۴۰۵/۰۹/۰۹ و 1405/09/09"),  # already Jalali
    ("2026-02-30", "2026-02-30"),  # no such day
    ("کد 12026-11-30", "کد 12026-11-30"),  # part of a longer number
])
def test_dates_in_text(text, shown):
    assert persian_dates(text) == shown


def test_only_persian_replies_and_reply_unchanged():
    reply = {"status": "answer", "language": "fa", "message": "پایان: 2026-03-20"}
    assert reply_text(reply) == "پایان: ۱۴۰۴/۱۲/۲۹ (2026-03-20)"
    assert reply["message"] == "پایان: 2026-03-20"
    assert reply_text({"language": "en", "message": "ends 2026-03-20"}) == "ends 2026-03-20"
