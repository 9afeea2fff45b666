"""How a reply quotes its documents: the frame that names the source, short titles, quotable sentences.

Every provider that answers by quoting (the offline one, and a language model asked to pick the
sentence that answers instead of writing one: MODEL_ANSWER_FORMAT=quote) frames its quotes the same
way, so that verify, whichever provider serves it, can take the frame off again (`strip_frame`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from insurance_agent.models.chunks import RetrievedChunk
from insurance_agent.models.roles import Claim
from insurance_agent.policy.untrusted import is_instruction_like
from insurance_agent.text import detect_language, display_text, split_sentences

FRAMES = {
    "en": "According to {title}: {quote}",
    "fa": "بر اساس «{title}»: {quote}",
}
# An English answer quoting the Persian source says so, and marks where the quote starts and ends.
SOURCE_FRAME_EN = "According to «{title}» (quoted from the Persian source): «{quote}»"
MAX_TITLE_CHARS = 48

_EMPHASIS = re.compile(r"\*\*|__|`")
TABLE_SEPARATOR = re.compile(r"^\|?\s*:?-{2,}:?\s*(?:\|\s*:?-{2,}:?\s*)*\|?$")
#: a sentence this short is a label («ماده ۳۶.», "Article 4.") that belongs to the sentence after it
_LABEL_WORDS = 3


def plain(text: str) -> str:
    """`text` without Markdown emphasis; a marker between two words becomes a space, never glue."""
    text = re.sub(r"(?<=\w)(?:\*\*|__|`)+(?=\w)", " ", text)
    return _EMPHASIS.sub("", text)


def table_cells(line: str) -> list[str]:
    """The cells of a Markdown table row, stripped (empty ones too: their position is their column)."""
    return [cell.strip() for cell in line.strip().strip("|").split("|")]


def short_title(title: str) -> str:
    """A document's title as a reply cites it: whole when short, else without a trailing parenthesis
    («(مصوب ۱۳۹۶)») and cut at a word. Quoting a long statute title before every sentence made it
    a quarter of the reply."""
    title = display_text(" ".join(title.split()))
    if len(title) <= MAX_TITLE_CHARS:
        return title
    bare = re.sub(r"\s*[(（][^()（）]*[)）]\s*$", "", title).strip() or title
    if len(bare) <= MAX_TITLE_CHARS:
        return bare
    kept: list[str] = []
    for word in bare.split():
        if len(" ".join([*kept, word])) > MAX_TITLE_CHARS - 1:
            break
        kept.append(word)
    return " ".join(kept or bare.split()[:1]) + "…"


def strip_frame(text: str, titles: list[str]) -> str:
    """The quote inside a framed claim ("According to <title>: <quote>"), else the text unchanged."""
    for title in titles:
        for name in dict.fromkeys([title, short_title(title)]):
            for frame in (*FRAMES.values(), SOURCE_FRAME_EN):
                prefix = frame.format(title=name, quote="")
                if frame.endswith("»"):
                    prefix = prefix[:-1]
                if text.startswith(prefix):
                    body = text[len(prefix) :]
                    return body[:-1] if frame.endswith("»") and body.endswith("»") else body
    return text


def quote_claim(chunk: RetrievedChunk, quote: str, language: str, framed: bool = True) -> Claim:
    """One verbatim quote as a claim citing `chunk`; framed, it names the document first. Arabic ي/ك
    and direction marks of the source are shown in Persian form."""
    quote = display_text(quote)
    if not framed:
        return Claim(text=quote, chunk_ids=[chunk.chunk_id])
    title = short_title(chunk.title.strip() or chunk.file_id)
    frame = FRAMES[language]
    if language == "en" and detect_language(quote) == "fa":
        frame = SOURCE_FRAME_EN
    return Claim(text=frame.format(title=title, quote=quote), chunk_ids=[chunk.chunk_id])


@dataclass(frozen=True)
class Sentence:
    """A quotable sentence or table row of a chunk, by its reading order in the chunk."""

    chunk: RetrievedChunk
    text: str
    #: a table row's header row, quoted before it: a row's figures mean nothing without their columns
    header: str | None = None


def quotable_sentences(chunk: RetrievedChunk) -> list[Sentence]:
    """The chunk's sentences and table rows, verbatim (Markdown emphasis aside), in reading order.

    A label too short to state anything («ماده ۳۶.», or «ماده ۱» on a line of its own) is kept with
    the sentence it introduces and is never a sentence alone; a table's separator row is left out;
    text addressed to an assistant is never quotable."""
    sentences: list[Sentence] = []
    lines = [line.strip() for line in chunk.text.splitlines() if line.strip()]
    header: str | None = None
    label = ""  # carried to the next line too: a heading line «ماده ۱» introduces the sentence under it
    for index, line in enumerate(lines):
        if line.startswith("|"):
            if TABLE_SEPARATOR.match(line):
                continue
            row = plain(" | ".join(cell for cell in table_cells(line) if cell))
            if index + 1 < len(lines) and TABLE_SEPARATOR.match(lines[index + 1]):
                header = row
            elif row:
                sentences.append(Sentence(chunk, row, header))
            continue
        header = None
        for sentence in split_sentences(line):
            sentence = plain(sentence).strip()
            if len(sentence.split()) <= _LABEL_WORDS:
                label = f"{label} {sentence}".strip()
                continue
            sentences.append(Sentence(chunk, f"{label} {sentence}".strip()))
            label = ""
    # A label left at the end states nothing: quoted alone («ماده ۱») it answered a question.
    return [sentence for sentence in sentences if not is_instruction_like(sentence.text)]
