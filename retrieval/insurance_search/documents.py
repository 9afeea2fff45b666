"""Source documents: a Markdown or text file with optional YAML front matter.

Other formats (PDF, DOCX, HTML) are read by the separate `insurance_ingest` package, which turns
them into the same Markdown-shaped text and builds the Document with `make_document`; nothing
here imports a parsing library, so no Lambda handler ever loads one.

Front matter keys: file_id, title, domain, product, audience, language. Another key (`source:`,
`author:`, an exporter's own fields) is ignored with a warning (`Document.ignored_keys`, reported by
ingest), so one extra field never stops a whole ingest. A key that looks like a misspelt `audience`
is rejected instead: ignoring it would silently publish an officer-only document to every user.
"""

from __future__ import annotations

import os
import re
import stat
import unicodedata
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from insurance_agent.errors import InvalidInputError
from insurance_search.access import AUDIENCES
from insurance_agent.text import ZWNJ, detect_language

MAX_DOCUMENT_BYTES = 1_048_576
# Unicode letters and digits so that Persian file names work; no '#' (the chunk id separator).
FILE_ID_PATTERN = re.compile(r"^\w[\w.\-]{0,127}$")
_FIELD_PATTERN = re.compile(r"^[^\n\r\t]{1,128}$")
_HEADING = re.compile(r"^ {0,3}#{1,6}\s+(.+?)\s*#*\s*$", re.MULTILINE)
_FRONT_MATTER_CLOSE = re.compile(r"^(?:---|\.\.\.)[ \t]*$", re.MULTILINE)
FRONT_MATTER_KEYS = ("file_id", "title", "domain", "product", "audience", "language")


class DocumentError(InvalidInputError):
    """A document that cannot be ingested; `reason` is one of the REASONS codes."""

    EMPTY = "empty"
    FRONT_MATTER = "front_matter"
    TOO_LARGE = "too_large"
    ENCODING = "encoding"
    INVALID_FIELD = "invalid_field"
    UNREADABLE = "unreadable"
    NOT_REGULAR = "not_regular_file"
    NOT_TEXT = "not_text"
    REASONS = (EMPTY, FRONT_MATTER, TOO_LARGE, ENCODING, INVALID_FIELD, UNREADABLE, NOT_REGULAR, NOT_TEXT)

    def __init__(self, reason: str, detail: str = "") -> None:
        super().__init__(f"{reason}: {detail}" if detail else reason)
        self.reason = reason
        self.detail = detail


class Document(BaseModel):
    """One source document, validated; `text` is the body without front matter."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)

    file_id: str
    title: str = Field(min_length=1, max_length=300)
    domain: str | None = None
    product: str | None = None
    audience: list[str] = Field(default_factory=lambda: ["user", "officer", "admin"], min_length=1)
    language: Literal["fa", "en"] | None = None
    text: str = Field(min_length=1)
    source: str | None = None
    # Front-matter keys the loader does not know; ignored, and reported by ingest as a warning.
    ignored_keys: list[str] = Field(default_factory=list)
    # Where the text came from: md, txt, pdf, docx, html; pages of a PDF; what extraction noticed
    # ("page 3 had no text layer: OCR"); the content hash that incremental ingest compares.
    format: str = "md"
    pages: int | None = None
    warnings: list[str] = Field(default_factory=list)
    content_hash: str | None = None

    @field_validator("file_id")
    @classmethod
    def _file_id_shape(cls, value: str) -> str:
        if not FILE_ID_PATTERN.match(value):
            raise ValueError("file_id must be 1-128 letters, digits, '.', '_' or '-'")
        return value

    @field_validator("domain", "product")
    @classmethod
    def _label_shape(cls, value: str | None) -> str | None:
        if value is not None and not _FIELD_PATTERN.match(value):
            raise ValueError("must be a single line of 1-128 characters")
        return value

    @field_validator("audience", mode="before")
    @classmethod
    def _audience_values(cls, value: Any) -> Any:
        if isinstance(value, str):  # `audience: officer` in front matter
            value = [value]
        if isinstance(value, list):
            unknown = [v for v in value if v not in AUDIENCES]
            if unknown:
                raise ValueError(f"unknown audience {unknown!r}; allowed: {list(AUDIENCES)}")
            return list(dict.fromkeys(value))
        return value

    @model_validator(mode="after")
    def _detect_language(self) -> Document:
        if self.language is None:
            self.language = detect_language(self.text)
        return self


def load_document(path: str | Path, max_bytes: int = MAX_DOCUMENT_BYTES) -> Document:
    """Read and validate one document; raises DocumentError with the reason it cannot be used."""
    path = Path(path)
    meta, body = text_parts(read_regular(path, max_bytes))
    return make_document(body, meta, path, format="txt" if path.suffix.lower() == ".txt" else "md")


def text_parts(raw: bytes) -> tuple[dict[str, Any], str]:
    """(front matter, body) of a Markdown or text file's bytes; DocumentError when it is not text."""
    try:
        content = raw.decode("utf-8-sig")  # tolerate a BOM, refuse every other encoding
    except UnicodeDecodeError as exc:
        raise DocumentError(DocumentError.ENCODING, f"not UTF-8 at byte {exc.start}") from exc
    if "\x00" in content:
        raise DocumentError(DocumentError.ENCODING, "contains NUL bytes")
    if not _looks_like_text(content):
        raise DocumentError(DocumentError.NOT_TEXT, "mostly control characters or symbols")
    content = content.replace("\r\n", "\n").replace("\r", "\n")
    return _split_front_matter(content)


def make_document(
    body: str, meta: dict[str, Any], path: Path, *, title_hint: str | None = None, **extra: Any
) -> Document:
    """Validate a document from its text and metadata (front matter or sidecar keys).

    Unknown keys are ignored (`ignored_keys`), except one that looks like a misspelt `audience`.
    Without a title: `title_hint` (the file's own properties), else the first heading, else the
    file name. `extra` sets the other Document fields (format, pages, warnings, content_hash).
    """
    body = body.strip()
    if not body or not any(ch.isalnum() for ch in body):
        raise DocumentError(DocumentError.EMPTY, "no text")

    unknown = [key for key in meta if key not in FRONT_MATTER_KEYS]
    for key in unknown:
        if looks_like_audience(key):
            raise DocumentError(
                DocumentError.INVALID_FIELD, f"{key}: unknown front-matter key; did you mean 'audience'?"
            )
    fields: dict[str, Any] = {k: _scalar_to_str(k, v) for k, v in meta.items() if k in FRONT_MATTER_KEYS}
    fields.setdefault("file_id", _default_file_id(path))
    fields.setdefault("title", title_hint or _first_heading(body) or path.stem)
    try:
        return Document(**fields, text=body, source=str(path), ignored_keys=unknown, **extra)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'document'}: {e['msg']}" for e in exc.errors())
        raise DocumentError(DocumentError.INVALID_FIELD, problems) from exc


def read_regular(path: Path, max_bytes: int) -> bytes:
    """The bytes of a regular file, never through a symlink, never more than `max_bytes`."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        if path.is_symlink():
            raise DocumentError(DocumentError.NOT_REGULAR, "symbolic link (not followed)")
        fd = os.open(path, flags)
    except DocumentError:
        raise
    except OSError as exc:
        raise DocumentError(DocumentError.UNREADABLE, type(exc).__name__) from exc
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise DocumentError(DocumentError.NOT_REGULAR, "not a regular file")
        # Check the size before reading so that a huge file is never loaded into memory.
        if info.st_size > max_bytes:
            raise DocumentError(DocumentError.TOO_LARGE, f"more than {max_bytes} bytes")
        raw = handle.read(max_bytes + 1)
    if len(raw) > max_bytes:  # the file grew between stat and read
        raise DocumentError(DocumentError.TOO_LARGE, f"more than {max_bytes} bytes")
    return raw


def _looks_like_text(content: str, sample: int = 65_536) -> bool:
    """Prose or Markdown: letters, digits and whitespace make up a fair share of the characters."""
    head = content[:sample]
    if not head:
        return True
    control = sum(1 for ch in head if unicodedata.category(ch) in ("Cc", "Cs", "Co", "Cn") and ch not in "\n\t\r")
    wordish = sum(1 for ch in head if ch.isalnum() or ch.isspace())
    return control / len(head) < 0.01 and wordish / len(head) >= 0.3


def _split_front_matter(content: str) -> tuple[dict[str, Any], str]:
    first_line, _, rest = content.partition("\n")
    if first_line.rstrip() != "---":
        return {}, content
    close = _FRONT_MATTER_CLOSE.search(rest)
    if close is None:
        raise DocumentError(DocumentError.FRONT_MATTER, "front matter is not closed")
    try:
        meta = yaml.safe_load(rest[: close.start()])
    except yaml.YAMLError as exc:
        raise DocumentError(DocumentError.FRONT_MATTER, f"invalid YAML ({type(exc).__name__})") from exc
    if meta is None:
        meta = {}
    if not isinstance(meta, dict) or not all(isinstance(k, str) for k in meta):
        raise DocumentError(DocumentError.FRONT_MATTER, "front matter must be a mapping")
    return meta, rest[close.end():]


def looks_like_audience(key: str) -> bool:
    """A key one or two edits from `audience` (or a plural/abbreviation of it): an access-control typo."""
    folded = key.strip().lower().replace("-", "_")
    if folded.startswith(("audien", "audiance", "audence")) or folded in {"audiences", "roles", "role", "visibility"}:
        return True
    return _edit_distance(folded, "audience") <= 2


def _edit_distance(a: str, b: str) -> int:
    previous = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        current = [i]
        for j, y in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (x != y)))
        previous = current
    return previous[-1]


def _scalar_to_str(key: str, value: Any) -> Any:
    # YAML reads `title: 2024` or `product: 110` as numbers; they are labels here.
    if key in {"file_id", "title", "domain", "product"} and isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    return value


def _default_file_id(path: Path) -> str:
    # Persian file names often contain half-spaces and spaces; fold them into '-' for an id.
    stem = unicodedata.normalize("NFC", path.stem)
    return re.sub(rf"[\s{ZWNJ}]+", "-", stem).strip("-")


def _first_heading(body: str) -> str | None:
    match = _HEADING.search(body)
    return match.group(1).strip() if match else None
