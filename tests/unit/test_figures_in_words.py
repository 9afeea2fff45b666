"""Figures written in words, read back to their values: checked against num2words, an independent speller."""

import pytest
from num2words import num2words

from insurance_agent.text import figure_forms, figures_in

VALUES = [*range(0, 1001), 1_005, 1_500, 2_025, 12_500, 50_000, 99_999, 100_001, 250_000, 1_000_000, 2_500_000,
          12_500_000, 300_000_000, 1_250_000_000]


@pytest.mark.parametrize("language", ["fa", "en"])
def test_every_spelling_reads_back_to_its_value(language):
    wrong = {value: num2words(value, lang=language) for value in VALUES
             if set(figure_forms(num2words(value, lang=language))[1]) != {str(value)}}
    assert not wrong, list(wrong.items())[:5]


def test_spellings_inside_sentences():
    cases = {
        "ظرف مدت شصت روز از تاریخ تسلیم": {"60"},
        "ظرف سه روز کاری پس از دریافت مدارک": {"3"},
        "یک‌صد و بیست میلیون ریال": {"120000000"},  # the half-space of «یک‌صد» is a space after normalisation
        "سه، پنج و هفت درصد": {"3", "5", "7"},  # a list is several figures
        "بین سه و پنج سال": {"3", "5"},  # parts of one number fall in value
        "۵۰ میلیون ریال و ۵۰ روز": {"50000000", "50"},
        "twenty-one days, or thirty": {"21", "30"},
        "one thousand five hundred and twenty rials": {"1520"},
    }
    for text, expected in cases.items():
        assert figures_in(text) == expected, text


def test_words_that_are_rarely_figures_alone():
    assert figures_in("نه، این یک شرط است و one of them applies") == set()
    assert set(figure_forms("نه، این یک شرط است")[1]) == {"9", "1"}
    assert figures_in("میلیون‌ها نفر") == set()
    assert figures_in("ماده ۳۸ و ۳۹") == {"38", "39"}


def test_scales_multiply_and_digits_take_a_scale():
    assert figures_in("۵ هزار میلیارد ریال") == {"5000000000000"}
    assert figures_in("2.5 million rials") == {"2500000"}
