"""The long-term memory filter keeps out personal data, in Persian and Latin digits."""

from __future__ import annotations

import pytest

from insurance_agent.policy.memory import extract_facts
from insurance_agent.policy.pii import find_pii, mask_pii

POSITIVE = [
    ("national code latin", "کد ملی من 0499370899 است", "national_code"),
    ("national code persian digits", "کد ملی: ۰۴۹۹۳۷۰۸۹۹", "national_code"),
    ("mobile", "شماره من 09121234567 است", "phone"),
    ("mobile persian spaced", "۰۹۱۲ ۱۲۳ ۴۵۶۷", "phone"),
    ("mobile international", "call me at +98 912 123 4567", "phone"),
    ("landline", "تلفن ثابت ۰۲۱۸۸۷۷۶۶۵۵", "phone"),
    ("card", "کارت 6037-9975-9940-8185", "card"),
    ("card persian", "شماره کارت ۶۰۳۷۹۹۷۵۹۹۴۰۸۱۸۵", "card"),
    ("sheba", "شبا IR062960000000100324200001", "iban"),
    ("sheba spaced", "IR06 2960 0000 0010 0324 2000 01", "iban"),
    ("email", "my mail is ali.rezaei@example.com", "email"),
    ("address fa", "آدرس: تهران، خیابان ولیعصر، کوچه نهم، پلاک ۱۲", "address"),
    ("address en", "I live at 12 Baker Street, apartment 4", "address"),
    ("address numbered street", "خیابان ۱۲ فروردین، پلاک ۵", "address"),
    ("address unit", "ساکن واحد ۳ طبقه ۲ هستم", "address"),
    ("postal code", "my postal code is 1234567891", "address"),
]
NEGATIVE = [
    "حق بیمه سالانه ۱۸٬۴۰۰٬۰۰۰ ریال است",
    "سقف تعهد 2,000,000,000 ریال",
    "پوشش همسر در بیمه تکمیلی",
    "The medical limit is 50,000 EUR",
    "بیمه‌نامه SEP-TP-1403-0012345",
    "1234567890",  # ten digits that fail the national-code checksum
    # a street word without a number locates no home: a motor insurer's customers tell accidents so
    "تو خیابان تصادف کردم، مقصر کیه؟",
    "یارو زد به من و در رفت پلاکشم نفهمیدم",
    "I was hit on the road by a truck. Who pays?",
    "ماشینم کنار میدان پارک بود، با سرعت ۶۰ زد بهش",
]


@pytest.mark.parametrize("case,text,kind", POSITIVE, ids=[p[0] for p in POSITIVE])
def test_personal_data_is_found(case, text, kind):
    assert kind in find_pii(text)


@pytest.mark.parametrize("text", NEGATIVE)
def test_ordinary_insurance_text_is_clean(text):
    assert find_pii(text) == []


def test_masking_keeps_a_question_that_only_mentions_a_street_or_a_plate():
    question = "یارو زد به من و در رفت پلاکشم نفهمیدم، الان هزینه بیمارستان و دیه‌مو کی میده؟"
    assert mask_pii(question) == question
    # a numbered place is masked to the end of its clause, and "12 Baker" goes with the street
    assert mask_pii("I live at 12 Baker Street, apartment 4. Am I covered?") == "I live at [address]. Am I covered?"
    assert mask_pii("آدرس: تهران، خیابان ولیعصر، کوچه نهم، پلاک ۱۲") == "آدرس: تهران، [address]"


RETRIEVED = [
    {"product": "supplementary_health", "title": "بیمه درمان تکمیلی"},
    {"product": "car_body", "title": "بیمه بدنه خودرو"},
]


def test_facts_come_from_closed_vocabularies_only():
    message = "من بیمه تکمیلی درمان دارم و می‌خواهم همسرم و پسرم را هم اضافه کنم. کد ملی 0499370899"
    facts = extract_facts(message, RETRIEVED)
    assert facts == {"products": ["supplementary_health"], "family": ["spouse", "children"]}
    # products are the tenant's own (what was retrieved), never a built-in list
    assert extract_facts(message) == {"family": ["spouse", "children"]}
    assert extract_facts("What about for my wife?") == {"family": ["spouse"]}
    assert extract_facts("حق بیمه چقدر است؟") == {}


def test_a_new_insurers_product_lines_are_remembered():
    retrieved = [
        {"product": "cargo", "title": "شرایط عمومی بیمه باربری کالا"},
        {"product": "engineering", "title": "بیمه مهندسی تمام خطر پیمانکاران"},
        {"product": "cyber", "title": "Cyber insurance policy terms"},
    ]
    assert extract_facts("من بیمه باربری دارم، خسارت رطوبت را می‌دهد؟", retrieved) == {"products": ["cargo"]}
    assert extract_facts("I have cyber insurance with you.", retrieved) == {"products": ["cyber"]}
    assert extract_facts("بیمه مهندسی چه پوشش‌هایی دارد؟", retrieved) == {}  # asked about, not held


# -- long adversarial text: every byte scanned, every finding masked (timing: benchmarks/pii_masking.py)

ADVERSARIAL = {
    "word run": "a" * 100_000,  # the e-mail pattern once rescanned it from every character
    "persian run": "ب" * 100_000,
    "digit run": "۱" * 100_000,
    "dotted run": "a." * 50_000,
    "domain without a dot": "a@" + "b" * 100_000,
    "at signs": "a@" * 50_000,
}


@pytest.mark.parametrize("name", list(ADVERSARIAL))
def test_masking_a_100_kb_adversarial_text_keeps_it_and_masks_what_follows(name):
    run = ADVERSARIAL[name]
    assert find_pii(run) == [] and mask_pii(run) == run
    tail = " ali.rezaei@example.com ۰۹۱۲۳۴۵۶۷۸۹ IR062960000000100324200001"
    assert mask_pii(run + tail) == run + " [email] [phone] [iban]"


def test_an_over_long_local_part_is_masked_whole():
    assert mask_pii("x" * 100 + "@example.com, and y@example.org") == "[email], and [email]"
    assert find_pii("x" * 100 + "@example.com") == ["email"]
