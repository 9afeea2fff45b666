"""Split a document into chunks along Markdown headings and paragraphs, within a word budget.

Sizes are counted in whitespace-separated words: cheap, model-independent, and close enough to
sub-word tokens for a budget (180 words of Persian stay well under a 512-token encoder window).
Paragraphs are packed whole; only a paragraph longer than the budget is cut, into overlapping
windows so that a sentence on a cut is whole in one of the two pieces. A chunk that starts inside an
enumerated list («ث ـ بیست درصد …») repeats the sentence introducing the list («منابع مالی صندوق
عبارتند از:»): without it an item states a rule of an unknown subject, and cannot be quoted.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from insurance_agent.models.chunks import ChunkPayload
from insurance_search.access import require_tenant
from insurance_search.documents import Document

MAX_WORDS = 180
OVERLAP_WORDS = 30
HEADING_SEPARATOR = " > "
# Hard bounds whatever the markup (a document without spaces or blank lines is one "word"): what an
# encoder and a turn record ever see of one chunk. 180 Persian words are about 1,100 characters.
MAX_CHUNK_CHARS = 1600
MAX_HEADING_CHARS = 300
# The dense tokenizer is super-linear in the length of one whitespace-free run (10,000 characters
# took over a minute); encoders only ever see runs of at most this length.
MAX_RUN_CHARS = 64

_HEADING = re.compile(r"^ {0,3}(#{1,6})\s+(.+?)\s*#*\s*$")
_FENCE = re.compile(r"^ {0,3}(```|~~~)")
_WORD_WITH_SPACE = re.compile(r"\S+\s*")
# An enumerated list item: «الف-», «ب ـ», «۱ـ», «۲ –», "2)".
_ENUMERATED = re.compile(r"^(?:[\u0600-\u06ff]{1,3}|[\d\u06f0-\u06f9]{1,3})\s*[-ـ–—.)]\s*\S")
_INTRODUCES = (":", "：")


@dataclass
class _Section:
    heading: tuple[str, ...]
    paragraphs: list[str] = field(default_factory=list)


def word_count(text: str) -> int:
    return len(text.split())


def chunk_document(
    doc: Document, tenant_id: str, *, max_words: int = MAX_WORDS, overlap_words: int = OVERLAP_WORDS
) -> list[ChunkPayload]:
    """Chunks of `doc` in document order; ids `f"{file_id}#{index}"` are stable for the same file."""
    require_tenant(tenant_id)
    if max_words < 1 or not 0 <= overlap_words < max_words:
        raise ValueError("need max_words >= 1 and 0 <= overlap_words < max_words")
    chunks: list[ChunkPayload] = []
    for section in _sections(doc.text):
        heading = (HEADING_SEPARATOR.join(section.heading) or "")[:MAX_HEADING_CHARS] or None
        for text, flags in bound_chunks(_pack(section.paragraphs, max_words, overlap_words)):
            index = len(chunks)
            chunks.append(
                ChunkPayload(
                    chunk_id=f"{doc.file_id}#{index}",
                    file_id=doc.file_id,
                    title=doc.title,
                    domain=doc.domain,
                    product=doc.product,
                    chunk_index=index,
                    language=doc.language or "fa",
                    audience=list(doc.audience),
                    tenant_id=tenant_id,
                    text=text,
                    heading=heading,
                    flags=flags,
                )
            )
    return chunks


def embedding_text(chunk: ChunkPayload) -> str:
    """What the encoders see: title and heading path give a short chunk its context."""
    heading = chunk.heading or ""
    # The H1 is usually the title itself; do not say it twice.
    if heading == chunk.title or heading.startswith(chunk.title + HEADING_SEPARATOR):
        heading = heading[len(chunk.title) :].removeprefix(HEADING_SEPARATOR)
    prefix = "\n".join(part for part in (chunk.title, heading) if part)
    return f"{prefix}\n\n{chunk.text}" if prefix else chunk.text


def _sections(text: str) -> list[_Section]:
    """Sections with their heading path and paragraphs; headings inside code fences are text."""
    sections = [_Section(heading=())]
    stack: list[tuple[int, str]] = []
    paragraph: list[str] = []
    fence: str | None = None

    def end_paragraph() -> None:
        body = "\n".join(paragraph).strip("\n")
        # A paragraph without a letter or digit (a rule, a lone bullet) carries nothing to retrieve.
        if any(ch.isalnum() for ch in body):
            sections[-1].paragraphs.append(body)
        paragraph.clear()

    for line in text.split("\n"):
        fence_match = _FENCE.match(line)
        if fence is not None:
            paragraph.append(line)
            if fence_match and fence_match.group(1) == fence:
                fence = None
            continue
        if fence_match:
            fence = fence_match.group(1)
            paragraph.append(line)
            continue
        heading = _HEADING.match(line)
        if heading:
            end_paragraph()
            level = len(heading.group(1))
            while stack and stack[-1][0] >= level:
                stack.pop()
            stack.append((level, heading.group(2)))
            sections.append(_Section(heading=tuple(title for _, title in stack)))
        elif line.strip():
            paragraph.append(line.rstrip())
        else:
            end_paragraph()
    end_paragraph()
    return [section for section in sections if section.paragraphs]


def _pack(paragraphs: list[str], max_words: int, overlap_words: int) -> list[str]:
    """Greedy packing of whole paragraphs; an over-long paragraph becomes overlapping windows. A
    chunk that starts with an item of a list begun in the previous chunk starts with the list's
    introducing sentence (when short enough to repeat)."""
    out: list[str] = []
    current: list[str] = []
    current_words = 0
    lead: str | None = None  # the sentence introducing the list being packed
    for paragraph in paragraphs:
        words = word_count(paragraph)
        if words > max_words:
            if current:
                out.append("\n\n".join(current))
                current, current_words = [], 0
            out.extend(_windows(paragraph, max_words, overlap_words))
            lead = None
            continue
        if current and current_words + words > max_words:
            out.append("\n\n".join(current))
            current, current_words = [], 0
            if lead and _ENUMERATED.match(paragraph.lstrip()) and word_count(lead) <= max_words // 3:
                current, current_words = [lead], word_count(lead)
        current.append(paragraph)
        current_words += words
        last_line = paragraph.rstrip().splitlines()[-1].strip() if paragraph.strip() else ""
        if last_line.endswith(_INTRODUCES):
            lead = last_line
        elif not _ENUMERATED.match(paragraph.lstrip()):
            lead = None
    if current:
        out.append("\n\n".join(current))
    return out


def _windows(paragraph: str, max_words: int, overlap_words: int) -> list[str]:
    # Keep each word's trailing whitespace so that line breaks (lists, tables) survive the cut.
    pieces = _WORD_WITH_SPACE.findall(paragraph)
    step = max_words - overlap_words
    windows = []
    for start in range(0, len(pieces), step):
        windows.append("".join(pieces[start : start + max_words]).strip())
        if start + max_words >= len(pieces):
            break
    return windows


# -- the final size-bounding step ---------------------------------------------------------------
_SENTENCE_BREAK = re.compile(r"(?<=[.!?؟;])\s+|\n+")
_LONG_RUN = re.compile(rf"\S{{{MAX_RUN_CHARS + 1},}}")


def bound_chunks(texts: list[str], max_chars: int = MAX_CHUNK_CHARS) -> list[tuple[str, list[str]]]:
    """Every packed text within `max_chars`, cleaned of citation look-alikes and flagged.

    Runs after packing whatever the parser did: an over-long text is split at sentence ends, a
    sentence longer than the bound at whitespace, and a whitespace-free run by characters.
    Linear in the text's length.
    """
    from insurance_agent.policy.untrusted import CITATION_MARKERS, INSTRUCTION_LIKE, is_instruction_like, strip_markers

    out: list[tuple[str, list[str]]] = []
    for text in texts:
        cleaned, markers = strip_markers(text)
        for piece in _split_bounded(cleaned.strip(), max_chars):
            if not any(ch.isalnum() for ch in piece):
                continue
            flags = [CITATION_MARKERS] if markers else []
            if is_instruction_like(piece):
                flags.append(INSTRUCTION_LIKE)
            out.append((piece, flags))
    return out


def _split_bounded(text: str, max_chars: int) -> list[str]:
    if len(text) <= max_chars:
        return [text] if text else []
    pieces: list[str] = []
    current = ""
    position = 0
    for match in [*_SENTENCE_BREAK.finditer(text), None]:
        end = match.start() if match else len(text)
        sentence = text[position:end].strip()
        position = match.end() if match else len(text)
        if not sentence:
            continue
        for part in _hard_split(sentence, max_chars):
            if current and len(current) + 1 + len(part) > max_chars:
                pieces.append(current)
                current = ""
            current = f"{current} {part}" if current else part
    if current:
        pieces.append(current)
    return pieces


def _hard_split(sentence: str, max_chars: int) -> list[str]:
    """A sentence longer than `max_chars`: cut at the last whitespace before the bound, else anywhere."""
    parts = []
    while len(sentence) > max_chars:
        cut = sentence.rfind(" ", max_chars // 2, max_chars + 1)
        cut = cut if cut > 0 else max_chars
        parts.append(sentence[:cut].strip())
        sentence = sentence[cut:].strip()
    if sentence:
        parts.append(sentence)
    return parts


def encoder_text(text: str) -> str:
    """What encoders may see of `text`: whitespace-free runs longer than MAX_RUN_CHARS are broken up."""
    return _LONG_RUN.sub(lambda m: " ".join(m.group(0)[i : i + MAX_RUN_CHARS] for i in range(0, len(m.group(0)), MAX_RUN_CHARS)), text)
