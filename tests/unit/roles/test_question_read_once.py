"""Offline generate reads a draft's question once (question.AnalysedQuestion), whatever the evidence.

Each check of the question (its shape, focus, line of insurance, privative words) and each retrieved
document used to normalise and re-read the question string again: the work grew with the number of
chunks retrieved. One analysed question is now shared by all of them.
"""

from __future__ import annotations

import sys

import insurance_agent.text as text
from insurance_agent.models.roles import GenerateRequest, Intent
from insurance_offline.generate import LocalGenerator
from insurance_offline.question import AnalysedQuestion, focus_concepts, named_lines, privative_concepts, unnamed_by
from insurance_offline.lexical import query_concepts

QUESTION = "فرانشیز بیمه بدنه چقدر است؟"


def _normalisations_of(query: str, run) -> int:
    """How often `run()` normalises `query` from scratch (not counting already normalised text)."""
    count = 0

    def profile(frame, event, arg):
        nonlocal count
        if event == "call" and frame.f_code is text.normalize.__code__:
            value = frame.f_locals.get("text")
            if value == query and type(value) is not text.Normalized:
                count += 1

    previous = sys.getprofile()
    sys.setprofile(profile)
    try:
        result = run()
    finally:
        sys.setprofile(previous)
    assert result.answered  # the draft went through every check of the question
    return count


def test_reading_the_question_does_not_grow_with_the_evidence(body_chunk):
    generate = LocalGenerator(quoting=True)
    copies = [body_chunk.model_copy(update={"chunk_id": f"body-{i}", "score": body_chunk.score - i / 100})
              for i in range(6)]

    def draft(chunks):
        return lambda: generate(GenerateRequest(route=Intent.KNOWLEDGE, message=QUESTION, query=QUESTION, chunks=chunks))

    assert _normalisations_of(QUESTION, draft(copies[:1])) == _normalisations_of(QUESTION, draft(copies)) > 0


def test_the_checks_read_an_analysed_question_as_they_read_its_text():
    for question in ("من بیمه شخص ثالث دارم. فرانشیز بیمه بدنه چقدر است؟", "تخفیف عدم خسارت چند درصد است؟",
                     "چه مدارکی برای خسارت بیمه درمانم لازم است؟"):
        concepts = query_concepts(question)
        analysed = AnalysedQuestion(question)
        for check in (focus_concepts, named_lines, privative_concepts):
            assert check(analysed, concepts) == check(question, concepts)
        present = [True] * len(concepts)
        assert unnamed_by(concepts, present, frozenset(), analysed) == unnamed_by(concepts, present, frozenset(), question)
