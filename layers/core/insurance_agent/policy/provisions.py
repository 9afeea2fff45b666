"""Provisions: what pins a question to one retrieved passage by structure, not by shared words.

A reply that quotes a passage as the answer asserts that the passage answers the question. A provider
that cannot read (the offline one) may only do so when something other than shared topic words ties
the question to that passage:

- the user picked it: a clarifying question offered retrieved passages (options with a `chunk_id`)
  and the user chose one, so retrieval was scoped to it (`Scope.chunk_id`);
- the question names it by number («ماده ۱۲», «تبصره ۲», "article 12") and its document by title
  («قانون بیمه»), and a retrieved passage of that document states that provision (a paragraph or its
  heading opens with the same number).

A number without the document's name pins nothing (the same article of another law may be all that
was retrieved): the passages stating it are offered, to be confirmed (`numbered_chunks`), as are
those of several documents named at once. Deterministic and shared by every provider.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from insurance_agent.models.chunks import RetrievedChunk
from insurance_agent.models.scope import Scope
from insurance_agent.text import display_text, normalize

# «ماده ۱۲», «ماده‌ی 12», «تبصره ۲», «بند ۳», "article 12", "section 4"; normalised text has Latin digits.
_KINDS = {"ماده": "article", "مادهی": "article", "article": "article", "art": "article", "section": "article",
          "تبصره": "note", "note": "note", "بند": "clause", "clause": "clause"}
_REFERENCE = re.compile(r"(?<!\w)(ماده ?ی|ماده|تبصره|بند|article|art\.?|section|note|clause)\s*(\d{1,3})(?!\d)",
                        re.IGNORECASE)
# A provision opening a paragraph: «ماده ۱۲-», «ماده ۱۲ ـ», «تبصره ۲:», "Article 12."
_OPENING = re.compile(r"^\W*(ماده|تبصره|article|section)\s*(\d{1,3})(?!\d)", re.IGNORECASE)
_PARAGRAPH_BREAK = re.compile(r"\n\s*\n|\n(?=\W*(?:ماده|تبصره|article|section)\s*\d)", re.IGNORECASE)


def _kind(word: str) -> str:
    return _KINDS.get(normalize(word).replace(" ", "").rstrip(".").lower(), "article")


def references(text: str) -> set[tuple[str, int]]:
    """The provisions `text` names by number: {("article", 12), ("note", 2)}. Clauses («بند ۳») are
    kept apart: a clause number alone names no provision of a document."""
    return {(_kind(kind), int(number)) for kind, number in _REFERENCE.findall(normalize(text))}


def stated(chunk: RetrievedChunk) -> list[tuple[str, int]]:
    """The provisions a passage states, in order: the paragraphs of its own text (not the neighbours
    merged in for context) and the heading parts that open with a numbered article or note."""
    found: list[tuple[str, int]] = []
    lines = [*(chunk.heading or "").split(" > "), *_PARAGRAPH_BREAK.split(own_text(chunk))]
    for line in lines:
        match = _OPENING.match(normalize(line))
        if match:
            provision = (_kind(match.group(1)), int(match.group(2)))
            if provision not in found:
                found.append(provision)
    return found


def pinned_chunks(query: str, chunks: Sequence[RetrievedChunk], scope: Scope | None = None) -> list[str]:
    """The ids of the retrieved passages the question is pinned to, best first (see the module doc).

    One id: the question is pinned. Several: the user's number fits passages of several documents
    (or the user picked several). None: nothing but words ties the question to any passage. A
    number pins a passage only when the question also names its document by its title: article 36
    of another law than the one meant (whose article 36 retrieval did not return) is no answer."""
    ids = [chunk.chunk_id for chunk in chunks]
    if scope is not None and scope.chunk_id:
        return [chunk_id for chunk_id in ids if chunk_id in scope.chunk_id]
    asked = normalize(query)
    return [chunk_id for chunk_id in numbered_chunks(query, chunks)
            if (title := bare_title(next(c for c in chunks if c.chunk_id == chunk_id))) and title in asked]


def numbered_chunks(query: str, chunks: Sequence[RetrievedChunk]) -> list[str]:
    """The ids of the retrieved passages stating a provision the question names by number."""
    named = {ref for ref in references(query) if ref[0] != "clause"}
    if not named:
        return []
    return [chunk.chunk_id for chunk in chunks if named & set(stated(chunk))]


def bare_title(chunk: RetrievedChunk) -> str:
    """The document's title as a question names it: normalised, without a closing parenthesis
    («(مصوب ۱۳۱۶)»)."""
    return normalize(re.sub(r"\s*[(（][^()（）]*[)）]\s*$", "", chunk.title or "")).strip()


_KIND_LABEL = {("article", "fa"): "ماده", ("note", "fa"): "تبصره", ("article", "en"): "Article", ("note", "en"): "Note"}
_EXCERPT_WORDS = 12
_PERSIAN_DIGITS = str.maketrans("0123456789", "۰۱۲۳۴۵۶۷۸۹")


def provision_label(chunk: RetrievedChunk, language: str = "fa") -> str:
    """How an option names one passage: its document, the provision it states (when it states one),
    and the words it opens with, so the user can tell the passages apart without reading them whole."""
    title = display_text(" ".join((chunk.title or chunk.file_id).split()))
    provisions = stated(chunk)
    name = ""
    if provisions:
        kind, number = provisions[0]
        shown = str(number) if language == "en" else str(number).translate(_PERSIAN_DIGITS)
        name = f"{_KIND_LABEL[(kind, 'en' if language == 'en' else 'fa')]} {shown}"
    else:
        parts = [part.strip() for part in (chunk.heading or "").split(" > ") if part.strip()]
        if parts and parts[-1] != chunk.title.strip():
            name = display_text(parts[-1])
    words = _opening_words(chunk, bool(provisions)).split()
    excerpt = " ".join(words[:_EXCERPT_WORDS]) + ("…" if len(words) > _EXCERPT_WORDS else "")
    head = f"{title} — {name}" if name else title
    return f"{head}{_EXCERPT_OPEN}{excerpt}»" if excerpt else head


_EXCERPT_OPEN = ": «"


def named_part(label: str) -> str:
    """An option's label without a passage's opening words: the names a user may pick it by."""
    return label.split(_EXCERPT_OPEN, 1)[0]


_MARKER = re.compile(r"^\W*(?:(?:ماده|تبصره|article|section)\s*[\d۰-۹]{1,3}\s*[-ـ–—.:)]*\s*)?", re.IGNORECASE)


def own_text(chunk: RetrievedChunk) -> str:
    """The passage's own text: retrieval merges its neighbours into `text` for context (`own_span`
    says where it is), and an option offers, and a pick shows, the passage itself."""
    if len(chunk.own_span) == 2 and 0 <= chunk.own_span[0] < chunk.own_span[1] <= len(chunk.text):
        return chunk.text[chunk.own_span[0]:chunk.own_span[1]]
    return chunk.text


def _opening_words(chunk: RetrievedChunk, at_provision: bool) -> str:
    """The passage's first line of text (the provision's, when it states one), without its marker: not a
    heading, not the title again, not a list bullet or a table's rule."""
    lines = [line.strip() for line in own_text(chunk).splitlines() if line.strip()]
    if at_provision:
        lines = [line for line in lines if _OPENING.match(normalize(line))] or lines
    names = {normalize(chunk.title), *(normalize(part) for part in (chunk.heading or "").split(" > "))}
    rule = re.compile(r"^\|?[\s:|-]*-{2,}[\s:|-]*$")
    for index, line in enumerate(lines):
        header = index + 1 < len(lines) and bool(rule.match(lines[index + 1]))
        if header or line.startswith("#") or normalize(line) in names or not re.search(r"\w", line.strip("|-: ")):
            continue
        return display_text(" ".join(_MARKER.sub("", re.sub(r"\*\*|__|`|\|", " ", line)).split()))
    return ""


def distinct_passages(chunks: Iterable[RetrievedChunk], ids: Iterable[str]) -> list[RetrievedChunk]:
    """The chunks among `chunks` whose ids are in `ids`, best score first, each passage once."""
    wanted = set(ids)
    seen: set[str] = set()
    chosen = []
    for chunk in sorted(chunks, key=lambda c: -c.score):
        if chunk.chunk_id in wanted and chunk.chunk_id not in seen:
            seen.add(chunk.chunk_id)
            chosen.append(chunk)
    return chosen
