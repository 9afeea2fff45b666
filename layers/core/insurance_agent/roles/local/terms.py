"""The local provider's word analysis for policy code: Persian/English stems, glossary concepts."""

from __future__ import annotations

from insurance_agent import lexical, text


class LexicalTerms:
    """policy.terms.Terms backed by the stemmer and the bilingual glossary (lexical.py)."""

    def content_terms(self, value: str) -> list[str]:
        return text.content_terms(value)

    def text_terms(self, value: str) -> frozenset[str]:
        return lexical.text_terms(value)

    def query_concepts(self, value: str) -> list[lexical.Concept]:
        return lexical.query_concepts(value)


LEXICAL_TERMS = LexicalTerms()
