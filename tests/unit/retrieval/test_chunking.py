"""Chunking: stable ids, heading paths, the word budget and the overlap of cut paragraphs."""

import pytest
from insurance_agent.errors import InvalidInputError
from insurance_search.chunking import chunk_document, embedding_text, word_count
from insurance_search.documents import Document

TEXT = """Intro paragraph before any heading.

# Body insurance

## Coverage

Collision and fire are covered.

Theft of the whole car is covered.

### Exclusions

Racing is not covered.

```
# not a heading inside a fence
```

## Franchise

The first claim has a 10 percent franchise.
"""


def doc(text=TEXT, **fields):
    return Document(file_id=fields.pop("file_id", "auto"), title=fields.pop("title", "Body insurance"), text=text, **fields)


def test_ids_are_stable_and_sequential():
    first = chunk_document(doc(), "acme")
    second = chunk_document(doc(), "acme")
    assert [c.chunk_id for c in first] == [c.chunk_id for c in second]
    assert [c.chunk_id for c in first] == [f"auto#{i}" for i in range(len(first))]
    assert [c.chunk_index for c in first] == list(range(len(first)))


def test_heading_paths_and_sections():
    chunks = chunk_document(doc(), "acme")
    by_heading = {c.heading: c.text for c in chunks}
    assert by_heading[None] == "Intro paragraph before any heading."
    # Paragraphs of one section are packed together, sections are never mixed.
    assert by_heading["Body insurance > Coverage"] == "Collision and fire are covered.\n\nTheft of the whole car is covered."
    assert by_heading["Body insurance > Coverage > Exclusions"].startswith("Racing is not covered.")
    assert "# not a heading inside a fence" in by_heading["Body insurance > Coverage > Exclusions"]
    # A level-2 heading closes the level-3 one before it.
    assert by_heading["Body insurance > Franchise"] == "The first claim has a 10 percent franchise."
    assert "Body insurance" not in by_heading  # a heading with no text of its own gives no chunk


def test_payload_copies_document_fields():
    chunk = chunk_document(doc(domain="auto", product="p1", audience=["officer"], language="en"), "acme")[0]
    assert (chunk.tenant_id, chunk.domain, chunk.product, chunk.audience, chunk.language, chunk.title) == (
        "acme", "auto", "p1", ["officer"], "en", "Body insurance"
    )


def test_packing_respects_the_budget():
    paragraphs = [" ".join(f"p{i}w{j}" for j in range(40)) for i in range(10)]  # 10 x 40 words
    chunks = chunk_document(doc("\n\n".join(paragraphs)), "acme", max_words=100, overlap_words=10)
    assert all(word_count(c.text) <= 100 for c in chunks)
    assert len(chunks) == 5  # two whole paragraphs per chunk, never a cut paragraph
    assert all(c.text.count("\n\n") == 1 for c in chunks)


def test_long_paragraph_is_cut_with_overlap():
    words = [f"w{i}" for i in range(400)]
    chunks = chunk_document(doc(" ".join(words)), "acme", max_words=180, overlap_words=30)
    pieces = [c.text.split() for c in chunks]
    assert all(len(p) <= 180 for p in pieces)
    for left, right in zip(pieces, pieces[1:]):
        assert left[-30:] == right[:30]
    covered = {w for p in pieces for w in p}
    assert covered == set(words)
    assert pieces[0][0] == "w0" and pieces[-1][-1] == "w399"


def test_default_budget_is_about_180_words():
    chunks = chunk_document(doc(" ".join(["واژه"] * 500)), "acme")
    assert max(word_count(c.text) for c in chunks) == 180


def test_cut_keeps_line_breaks():
    table = "\n".join(f"| row {i} | value {i} |" for i in range(60))
    chunks = chunk_document(doc(table), "acme", max_words=100, overlap_words=10)
    assert len(chunks) > 1
    assert all("\n" in c.text for c in chunks)


def test_embedding_text_has_title_and_heading_once():
    chunks = chunk_document(doc(), "acme")
    franchise = next(c for c in chunks if c.heading == "Body insurance > Franchise")
    text = embedding_text(franchise)
    assert text.startswith("Body insurance\nFranchise\n\n")
    assert text.count("Body insurance") == 1
    intro = chunks[0]
    assert embedding_text(intro) == "Body insurance\n\nIntro paragraph before any heading."


def test_markup_only_paragraphs_are_dropped():
    assert chunk_document(doc("# Title\n\n---\n\n* \n"), "acme") == []


def test_bad_arguments():
    with pytest.raises(InvalidInputError):
        chunk_document(doc(), "")
    with pytest.raises(ValueError):
        chunk_document(doc(), "acme", max_words=10, overlap_words=10)


# The shape of a statute's article whose items are paragraphs of their own («ث ـ …» on its own
# line between blank lines), long enough that the budget cuts the list.
LIST_ARTICLE = """ماده ۶ـ منابع مالی صندوق عبارتند از:

الف ـ هشت درصد از حق بیمه اجباری شخص ثالث که بیمه‌گران به حساب صندوق واریز می‌کنند.

ب ـ مبالغ بازیافتی از مسببان حوادث و دارندگان وسایل نقلیه فاقد بیمه‌نامه.

پ ـ درآمد حاصل از سرمایه‌گذاری وجوه صندوق در بانک‌ها و اوراق مشارکت.

ت ـ بیست درصد از جریمه‌های وصولی راهنمایی و رانندگی در کل کشور.

ث ـ کمک‌های اعطایی از سوی اشخاص حقیقی یا حقوقی.

ماده ۷ـ صندوق دارای شخصیت حقوقی مستقل است.
"""


def test_a_chunk_starting_inside_a_list_repeats_the_sentence_introducing_it():
    chunks = chunk_document(doc(LIST_ARTICLE, title="اساسنامه صندوق"), "acme", max_words=40, overlap_words=5)
    lead = "ماده ۶ـ منابع مالی صندوق عبارتند از:"
    assert [c.text.split("\n\n")[:2] for c in chunks] == [
        [lead, "الف ـ هشت درصد از حق بیمه اجباری شخص ثالث که بیمه‌گران به حساب صندوق واریز می‌کنند."],
        [lead, "پ ـ درآمد حاصل از سرمایه‌گذاری وجوه صندوق در بانک‌ها و اوراق مشارکت."],
        [lead, "ث ـ کمک‌های اعطایی از سوی اشخاص حقیقی یا حقوقی."],
    ]


def test_the_lead_is_not_repeated_after_the_list_ends_or_when_nothing_is_cut():
    whole = chunk_document(doc(LIST_ARTICLE, title="اساسنامه صندوق"), "acme")
    assert len(whole) == 1 and whole[0].text.count("عبارتند از:") == 1
    after = LIST_ARTICLE.replace("ماده ۷ـ صندوق دارای شخصیت حقوقی مستقل است.", " ".join(["متن"] * 30) + ".")
    chunks = chunk_document(doc(after, title="اساسنامه صندوق"), "acme", max_words=40, overlap_words=5)
    assert not chunks[-1].text.startswith("ماده ۶ـ")  # a plain paragraph after the list is no item
