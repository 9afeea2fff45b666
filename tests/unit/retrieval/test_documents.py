"""Loading documents: front matter, defaults, and every reason a document is refused."""

import pytest
from insurance_search.documents import Document, DocumentError, load_document


def write(tmp_path, name, content, encoding="utf-8"):
    path = tmp_path / name
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding=encoding)
    return path


def test_front_matter_sets_every_field(tmp_path):
    path = write(
        tmp_path,
        "x.md",
        "---\nfile_id: auto-body\ntitle: Body cover\ndomain: auto\nproduct: 110\naudience: [officer, admin]\nlanguage: en\n---\n# Heading\n\nText.\n",
    )
    doc = load_document(path)
    assert (doc.file_id, doc.title, doc.domain, doc.product) == ("auto-body", "Body cover", "auto", "110")
    assert doc.audience == ["officer", "admin"]
    assert doc.language == "en"
    assert doc.text == "# Heading\n\nText."
    assert doc.source == str(path)


def test_defaults_from_heading_stem_and_language(tmp_path):
    doc = load_document(write(tmp_path, "franchise.md", "# فرانشیز بیمه بدنه\n\nفرانشیز خسارت اول ده درصد است.\n"))
    assert doc.file_id == "franchise"
    assert doc.title == "فرانشیز بیمه بدنه"
    assert doc.language == "fa"
    assert doc.audience == ["user", "officer", "admin"]
    assert doc.domain is None


def test_title_falls_back_to_stem_and_persian_names_make_ids(tmp_path):
    doc = load_document(write(tmp_path, "بیمه\u200cنامه بدنه.txt", "Plain text without a heading."))
    assert doc.title == "بیمه\u200cنامه بدنه"
    assert doc.file_id == "بیمه-نامه-بدنه"
    assert doc.language == "en"


def test_bom_crlf_and_single_audience(tmp_path):
    path = write(tmp_path, "a.md", b"\xef\xbb\xbf---\r\naudience: officer\r\n---\r\nBody text\r\n")
    doc = load_document(path)
    assert doc.audience == ["officer"]
    assert doc.text == "Body text"


def test_empty_front_matter_is_allowed(tmp_path):
    assert load_document(write(tmp_path, "a.md", "---\n---\nBody")).text == "Body"


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        ("", DocumentError.EMPTY),
        ("   \n\n  ", DocumentError.EMPTY),
        ("---\ntitle: Only meta\n---\n\n", DocumentError.EMPTY),
        ("---\n---\n***\n- \n", DocumentError.EMPTY),  # markup without a word
        ("---\ntitle: x\nBody without a closing line", DocumentError.FRONT_MATTER),
        ("---\ntitle: [unclosed\n---\nBody", DocumentError.FRONT_MATTER),
        ("---\n- a list\n- not a mapping\n---\nBody", DocumentError.FRONT_MATTER),
        ("---\naudience: [customer]\n---\nBody", DocumentError.INVALID_FIELD),
        ("---\naudience: []\n---\nBody", DocumentError.INVALID_FIELD),
        ("---\nfile_id: 'a#1'\n---\nBody", DocumentError.INVALID_FIELD),
        ("---\nlanguage: de\n---\nBody", DocumentError.INVALID_FIELD),
        ("---\naudiance: officer\n---\nBody", DocumentError.INVALID_FIELD),  # a typo never publishes
        ("---\ndomain: {a: 1}\n---\nBody", DocumentError.INVALID_FIELD),
    ],
)
def test_bad_documents_are_refused_with_their_reason(tmp_path, content, reason):
    with pytest.raises(DocumentError) as caught:
        load_document(write(tmp_path, "doc.md", content))
    assert caught.value.reason == reason


def test_bad_file_name_gives_invalid_field(tmp_path):
    with pytest.raises(DocumentError) as caught:
        load_document(write(tmp_path, "a#b.md", "Body"))
    assert caught.value.reason == DocumentError.INVALID_FIELD


def test_over_the_size_limit(tmp_path):
    path = write(tmp_path, "big.md", "word " * 100)
    with pytest.raises(DocumentError) as caught:
        load_document(path, max_bytes=100)
    assert caught.value.reason == DocumentError.TOO_LARGE
    assert load_document(path, max_bytes=1000).text.startswith("word")


@pytest.mark.parametrize(
    "raw",
    ["بيمه بدنه".encode("cp1256"), "Prämie".encode("latin-1"), "Body".encode("utf-16"), b"Body\x00text"],
)
def test_undecodable_bytes(tmp_path, raw):
    with pytest.raises(DocumentError) as caught:
        load_document(write(tmp_path, "enc.txt", raw))
    assert caught.value.reason == DocumentError.ENCODING


def test_missing_file_is_unreadable(tmp_path):
    with pytest.raises(DocumentError) as caught:
        load_document(tmp_path / "absent.md")
    assert caught.value.reason == DocumentError.UNREADABLE


def test_document_model_detects_language_and_refuses_bad_values():
    assert Document(file_id="a", title="t", text="Coverage limits").language == "en"
    with pytest.raises(ValueError):
        Document(file_id="a", title="t", text="x", audience=["everyone"])


def test_unknown_front_matter_key_is_ignored_with_a_warning(tmp_path):
    # `source:` used to collide with the loader's own `source` argument and crash the whole ingest.
    path = tmp_path / "law.md"
    path.write_text(
        "---\ntitle: قانون نمونه\nsource: https://example.org/law\nauthor: someone\n---\nماده ۱- متن ماده.",
        encoding="utf-8",
    )
    doc = load_document(path)
    assert doc.title == "قانون نمونه"
    assert doc.source == str(path)  # the loader's own value, not the front matter's
    assert doc.ignored_keys == ["source", "author"]


@pytest.mark.parametrize("key", ["audiance", "Audiences", "roles", "audence"])
def test_a_key_that_looks_like_audience_is_still_refused(tmp_path, key):
    path = tmp_path / "doc.md"
    path.write_text(f"---\n{key}: officer\n---\nBody", encoding="utf-8")
    with pytest.raises(DocumentError) as caught:
        load_document(path)
    assert caught.value.reason == DocumentError.INVALID_FIELD


def test_ingest_reports_ignored_keys_and_keeps_going(tmp_path, corpus):
    from insurance_search.ingest import ingest_directory

    (tmp_path / "a.md").write_text("---\nsource: scraped\n---\nماده ۱- بیمه‌گر مکلف است.", encoding="utf-8")
    (tmp_path / "b.md").write_text("ماده ۲- بیمه‌گذار مکلف است.", encoding="utf-8")
    report = ingest_directory(tmp_path, "t-warn")
    assert report.files == 2 and not report.skipped
    assert [(w.path, w.detail) for w in report.warnings] == [("a.md", "ignored front-matter keys: source")]
