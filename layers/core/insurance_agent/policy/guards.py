"""Deterministic guards on a drafted answer, applied whatever model wrote it.

ADR-0006, "Grounding and citation contract" (docs/adr/ADR-0006-conversational-agent-graph.md).

- Citations must be a subset of the chunk ids retrieved this turn (the grievance system's source
  intersection): a model cannot cite a document it was not shown.
- Every figure in the answer, in digits or in words («پانزده سال»), must be one a cited chunk states,
  as the chunk writes it (Persian and Latin digits and thousands separators normalised by
  `numbers_in`; a figure in words is read as its value, text.written_figures), or be the output of
  the deterministic money calculator (policy/money.py): the model never does arithmetic on money.
  A calculation whose operand is not in the chunk it cites failed, and a failed calculation is a
  violation. The right figure in another form («۶۰ روز» for «شصت روز») is a violation whose
  feedback names the chunk's wording: a customer looks for the document's words.
- No sentence of the answer reads as instructions addressed to the assistant (policy/untrusted.py):
  documents are data, and such text in a draft means a document steered the model.
- The answer is written in the language of the user's turn: what it says in its own words (the
  words its cited chunks do not contain) is mostly in that language's script. A verbatim quote of a
  document in the other language is not the answer's own language.
- The groundedness floor: the answer says something the question does not. A draft whose answer
  only restates the question (every word of it is the question's), however well its claims quote
  the evidence, tells the user nothing, and a small model's verify passes it: the reader
  (Qwen2.5-Coder-1.5B) answered «… حداکثر چه میزان سود … قابل منظور شدن است؟» with the question
  itself and two verbatim claims, and its verify found the claims supported. The same holds for
  each claim: a claim worded as the question, citing chunks, is the reader's most frequent way of
  answering without stating anything (its verify passes it as well), and it cites chunks for what
  they do not say.
"""

from __future__ import annotations

from collections.abc import Iterable

from insurance_agent.models.chunks import RetrievedChunk
from insurance_agent.models.roles import Calculation, GenerateResult
from insurance_agent.policy.money import calculation_violations
from insurance_agent.policy.untrusted import instruction_sentences
from insurance_agent.analysis import PLAIN_TERMS
from insurance_agent.text import detect_language, figure_forms, figures_in, numbers_in, tokens

# Letters of its own words past which an answer in the other script is in the wrong language (a
# product name or a short term of the other language is not).
WRONG_SCRIPT_MIN_LETTERS = 12

#: What can reject a draft, as the turn's draft log (nodes/generate.py, nodes/verify.py) and the
#: evaluation count them: the deterministic guards of this module, then the verify role's verdict.
GUARDS = ("citations", "numbers", "calculations", "instructions", "language", "grounding", "verify")


class Violation(str):
    """One guard's finding on a draft: the text the model is shown as feedback, and the guard's name."""

    guard: str

    def __new__(cls, guard: str, text: str) -> Violation:
        if guard not in GUARDS:
            raise ValueError(f"unknown guard {guard!r}")
        violation = super().__new__(cls, text)
        violation.guard = guard
        return violation


def guards_of(violations: Iterable[str]) -> list[str]:
    """The guards that found `violations`, in GUARDS order, without repeats."""
    found = {getattr(violation, "guard", "") for violation in violations}
    return [guard for guard in GUARDS if guard in found]


def citation_guard(cited_ids: Iterable[str], retrieved_ids: Iterable[str]) -> list[str]:
    """Cited ids that were not retrieved this turn, in citation order, without repeats."""
    retrieved = set(retrieved_ids)
    missing: list[str] = []
    for chunk_id in cited_ids:
        if chunk_id not in retrieved and chunk_id not in missing:
            missing.append(chunk_id)
    return missing


def _stated_figures(cited_chunks: Iterable[RetrievedChunk],
                    calculator_results: Iterable[object] = ()) -> tuple[set[str], dict[str, str]]:
    """The figures an answer may state: those the cited chunks (title and text) write in digits, with
    the calculator's, and those they write in words, each with the chunk's wording. A Calculation
    counts only when it succeeded, with its operands (each was found in its source: a chunk, or a
    count the user stated)."""
    digits: set[str] = set()
    words: dict[str, str] = {}
    for chunk in cited_chunks:
        for text in (chunk.text, chunk.title):
            stated_digits, stated_words = figure_forms(text)
            digits |= stated_digits
            for value, wording in stated_words.items():
                words.setdefault(value, wording)
    for result in calculator_results:
        if isinstance(result, Calculation):
            if result.result is not None and not result.error:
                digits |= numbers_in(result.result)
                for operand in result.operands:
                    digits |= numbers_in(operand.value)
        else:
            digits |= numbers_in(str(result))
    return digits, words


def figure_findings(
    answer: str, cited_chunks: Iterable[RetrievedChunk], calculator_results: Iterable[object] = ()
) -> dict[str, str | None]:
    """The figures of `answer` that no cited chunk or calculator result states as the answer writes
    them. None for a value none of them states (invented: «پانزده سال» for a chunk's «پنج سال»);
    the source's own wording for a value a chunk writes in words and the answer only in digits, or
    the other way round («۶۰ روز» for the chunk's «شصت روز»): the right figure, to be quoted as
    the document writes it so the customer finds it there."""
    digits, words = _stated_figures(cited_chunks, calculator_results)
    written_digits, written_words = figure_forms(answer, alone=False)
    findings: dict[str, str | None] = {}
    for value in sorted(written_digits | set(written_words)):
        if (value in written_digits and value in digits) or (value in written_words and value in words):
            continue
        findings[value] = words.get(value) or (value if value in digits else None)
    return findings


def number_guard(
    answer: str, cited_chunks: Iterable[RetrievedChunk], calculator_results: Iterable[object] = ()
) -> list[str]:
    """Figures of `answer` (canonical form, sorted) that no cited chunk or calculator result states as
    the answer writes them (`figure_findings`)."""
    return sorted(figure_findings(answer, cited_chunks, calculator_results))


def _figure_violation(value: str, wording: str | None, where: str) -> Violation:
    if wording is None:
        return Violation("numbers", f"number {value} in {where} appears in no cited chunk")
    return Violation("numbers", f"number {value} in {where} is written «{wording}» in its chunk: quote the figure "
                                "as the chunk writes it")


def language_guard(answer: str, cited_chunks: Iterable[RetrievedChunk], language: str) -> bool:
    """True when the answer's own words (those of no cited chunk) in the other language's script
    outweigh everything it writes in the turn's language."""
    quoted = {word for chunk in cited_chunks for word in tokens(f"{chunk.title} {chunk.text}")}
    own_other = written = 0
    for word in tokens(answer):
        letters = sum(ch.isalpha() for ch in word)  # digits and marks count for neither script
        if detect_language(word) == language:
            written += letters
        elif word not in quoted:
            own_other += letters
    return own_other >= WRONG_SCRIPT_MIN_LETTERS and own_other > written


def _adds_to_question(text: str, asked: set[str], asked_figures: set[str], evidence: list[RetrievedChunk]) -> bool:
    """Whether `text` says something the question does not: a content word or a figure beyond the
    question's, and, written in its evidence's language, one its evidence states. The reader restated
    a question with a garbled word in it («در مهلتی چه ماهتی»), which no document states; a
    cross-language answer is only held to the first half (its own words cannot be its evidence's)."""
    new_words = {word for word in PLAIN_TERMS.content_terms(text) if word not in asked}
    new_figures = figures_in(text) - asked_figures
    if not new_words and not new_figures:
        return False
    evidence_text = "\n".join(f"{chunk.title}\n{chunk.text}" for chunk in evidence)
    if not evidence or detect_language(text) != detect_language(evidence_text):
        return True
    digits, words = _stated_figures(evidence)
    return bool(new_words & set(tokens(evidence_text))) or bool(new_figures & (digits | set(words)))


def check_draft(
    result: GenerateResult,
    chunks: Iterable[RetrievedChunk],
    calculator_results: Iterable[object] = (),
    language: str | None = None,
    question: Iterable[str] = (),
) -> list[Violation]:
    """Human-readable violations of the guards by a drafted answer (empty when clean), each naming its guard.

    `chunks` are the chunks retrieved this turn; `calculator_results` the draft's calculations as
    the calculator filled them (or bare figures). Checked: every cited id (answer-level citations and
    per-claim ids) was retrieved; an answer that claims to answer from evidence cites something;
    every calculation succeeded (its operands are in the chunks they cite) and no placeholder is
    left without a result; every number of the answer is in a cited chunk or a calculator result;
    every number of a claim is in one of the chunks that claim cites or a calculator result; with
    `language` (the turn's), the answer is written in it; with `question` (the user's message and
    the retrieval query), the answer and each of its claims have a word that none of them has.
    """
    chunks = list(chunks)
    by_id = {chunk.chunk_id: chunk for chunk in chunks}
    cited = list(dict.fromkeys([*result.citations, *(cid for claim in result.claims for cid in claim.chunk_ids)]))
    violations = [Violation("citations", f"cited chunk {chunk_id} was not retrieved this turn")
                  for chunk_id in citation_guard(cited, by_id)]

    if result.answered and result.answer.strip() and chunks and not cited:
        violations.append(Violation("citations", "the answer cites none of the retrieved chunks"))

    cited_chunks = [by_id[chunk_id] for chunk_id in cited if chunk_id in by_id]
    calculator_results = list(calculator_results)
    calculations = [c for c in calculator_results if isinstance(c, Calculation)]
    texts = "\n".join([result.answer, *(claim.text for claim in result.claims)])
    violations += [Violation("calculations", text) for text in calculation_violations(texts, calculations)]
    unsupported = figure_findings(result.answer, cited_chunks, calculator_results)
    violations += [_figure_violation(number, wording, "the answer") for number, wording in unsupported.items()]

    if result.answered and instruction_sentences(result.answer):
        violations.append(Violation("instructions", "the answer repeats instruction-like text from a document"))
    if language and result.answered and language_guard(result.answer, cited_chunks, language):
        violations.append(Violation("language", f"the answer is not written in the language of the question ({language})"))
    question = list(question)
    asked = {word for text in question for word in tokens(text)}
    if asked and result.answered:
        asked_figures = {figure for text in question for figure in figures_in(text)}

        def restates(text: str, evidence: list[RetrievedChunk]) -> bool:
            return not _adds_to_question(text, asked, asked_figures, evidence)

        if result.answer.strip() and restates(result.answer, cited_chunks):
            violations.append(Violation("grounding", "the answer only restates the question: it says nothing the "
                                                     "question does not; state what the evidence says"))
        violations += [Violation("grounding", f"claim {claim.text!r} only restates the question: a claim states what "
                                              "its chunks say")
                       for claim in result.claims
                       if restates(claim.text, [by_id[chunk_id] for chunk_id in claim.chunk_ids if chunk_id in by_id])]

    reported = set(unsupported)
    for claim in result.claims:
        claim_chunks = [by_id[chunk_id] for chunk_id in claim.chunk_ids if chunk_id in by_id]
        for number, wording in figure_findings(claim.text, claim_chunks, calculator_results).items():
            if number not in reported:
                reported.add(number)
                violations.append(Violation(
                    "numbers", f"number {number} in claim {claim.text!r} appears in none of the chunks it cites"
                    if wording is None else
                    f"number {number} in claim {claim.text!r} is written «{wording}» in the chunks it cites: quote "
                    "the figure as the chunk writes it"))
    return violations
