"""Frustration: explicit dissatisfaction (policy lexicon) or a near-repeat of a recent message."""

import pytest
from insurance_agent.policy.frustration import is_frustrated, near_duplicate

HISTORY = [
    "سلام",
    "فرانشیز بیمه بدنه خودرو چقدر است؟",
    "1",
]


@pytest.mark.parametrize(
    "message",
    [
        "جواب سوالم رو ندادی!",
        "چند بار باید بگم؟",
        "این ربات به درد نمی‌خوره",
        "خسته‌ام کردی، اصلاً نمی‌فهمی",
        "You're not helping at all",
        "This is useless",
        "I already asked that",
        "how many times do I have to explain this",
    ],
)
def test_explicit_dissatisfaction(message):
    assert is_frustrated(message, [])


@pytest.mark.parametrize(
    "message, previous",
    [
        # same question again, with a different spelling of the same words
        ("فرانشیز بیمه بدنه خودرو چقدر است؟", HISTORY),
        ("فرانشيز بيمه بدنه خودرو چقدر است", HISTORY),  # Arabic yeh, no question mark
        ("فرانشیز بیمه‌ی بدنه‌ی خودرو چقدره؟", HISTORY),  # colloquial ending, ezafe
        ("فرانشیز  بیمه بدنه خودرو چقدر است؟؟؟", HISTORY),
        ("what is the deductible for car body insurance?", ["hi", "What is the deductible for car body insurance"]),
        ("What's the deductible for the car body insurance?", ["What is the deductible for car body insurance?"]),
    ],
)
def test_near_duplicate_of_a_recent_message(message, previous):
    assert is_frustrated(message, previous)


@pytest.mark.parametrize(
    "message, previous",
    [
        ("سلام", ["سلام"]),
        ("ok", ["ok", "ok"]),
        ("yes", ["yes"]),
        ("1", ["1"]),
        ("۲", ["2"]),
        ("دومی", ["دومی"]),
        ("the second one", ["the second one"]),
        ("ممنون", ["ممنون"]),
        # different questions about the same product are not repeats
        ("حق بیمه بدنه خودرو چقدر است؟", ["فرانشیز بیمه بدنه خودرو چقدر است؟"]),
        ("What does car body insurance cover?", ["What is the deductible for car body insurance?"]),
        # a repeat older than the last three messages does not count
        ("فرانشیز بیمه بدنه خودرو چقدر است؟", ["فرانشیز بیمه بدنه خودرو چقدر است؟", "سلام", "مرسی", "بیمه عمر چیست؟"]),
        ("بیمه درمان تکمیلی برای همسرم چه شرایطی دارد؟", []),
    ],
)
def test_not_frustrated(message, previous):
    assert not is_frustrated(message, previous)


def test_near_duplicate_is_symmetric_enough():
    a, b = "دوره انتظار زایمان در بیمه تکمیلی چند ماه است؟", "دوره انتظار زایمان بیمه تکمیلی چند ماهه؟"
    assert near_duplicate(a, b) and near_duplicate(b, a)
