"""What a quote must carry by itself (generate's own-coverage floor and the most specific concept),
checked on a verbatim excerpt of a real bylaw (tests/data/statutes/claims-bylaw-excerpt.md: the
third-party claims bylaw of 1396) with questions written for these tests.

- The most specific concept may be carried by the sentence right next to the quote in its
  paragraph of prose, never by the next item of a list or across a paragraph break.
- Distractors sharing the question's words (another party's deadline, another action) stay refused.
"""

from __future__ import annotations


import pytest
from insurance_offline.lexical import concept_weights, evidence_terms, ground_concepts, query_concepts, text_terms
from insurance_agent.models.chunks import RetrievedChunk
from insurance_agent.models.roles import GenerateRequest, Intent, VerifyRequest
from insurance_offline.generate import (
    LocalGenerator,
    evidence_units,
    neighbour_terms,
    quote_terms,
)
from insurance_agent.quotes import strip_frame
from insurance_offline.question import carries, specific_tier
from insurance_offline.verify import LocalVerifier


@pytest.fixture(scope="module")
def chunks(statute_chunks) -> list[RetrievedChunk]:
    return statute_chunks("claims-bylaw-excerpt.md")


def ask(chunks, question):
    draft = LocalGenerator(quoting=True)(GenerateRequest(route=Intent.KNOWLEDGE, message=question, query=question, chunks=chunks))
    verdict = LocalVerifier()(
        VerifyRequest(answer=draft.answer, claims=draft.claims, chunks=chunks, min_support=1.0, question=question)
    )
    quotes = [strip_frame(claim.text, [chunk.title for chunk in chunks]) for claim in draft.claims]
    return draft, verdict, quotes


def test_the_police_deadline_is_still_the_answer_to_its_own_question(chunks):
    draft, verdict, quotes = ask(chunks, "پلیس راهور به استعلام گواهینامه رانندگی ظرف چه مدتی پاسخ می‌دهد؟")
    assert draft.answered and verdict.grounded
    assert any("ظرف دو هفته" in quote for quote in quotes)


def test_a_deadline_of_another_party_is_still_refused(chunks):
    # The insurer's deadline towards the injured party: the only deadline in the excerpt is the
    # traffic police's, which names neither «بیمه‌گر» answering nor «زیان‌دیده»; the sentence next
    # to it («… موکول به پاسخ راهنمایی و رانندگی نیست») names «زیان‌دیده» but is not a quote of it.
    draft, _, _ = ask(chunks, "مهلت پاسخ بیمه‌گر به زیان‌دیده در بیمه شخص ثالث چقدر است؟")
    assert not draft.answered and not draft.claims
    # and a deadline for something the excerpt sets none for (paying the claim) is still refused
    draft, _, _ = ask(chunks, "بیمه‌گر خسارت مالی را در چه مهلتی پرداخت می‌کند؟")
    assert not draft.answered and not draft.claims


def test_an_action_no_evidence_states_is_still_refused(chunks):
    # «باطل» (revoking a licence) is what is asked; the police's deadline sentence shares the rest
    draft, _, _ = ask(chunks, "راهنمایی و رانندگی در چه مهلتی گواهینامه را باطل می‌کند؟")
    assert not draft.answered and not draft.claims


def test_the_sentence_next_to_a_quote_in_its_paragraph_can_carry_the_most_specific_concept(chunks):
    # Note 2 is one paragraph of two sentences: the deadline of the licence inquiry, then «در هر
    # صورت پرداخت خسارت … موکول به پاسخ راهنمایی و رانندگی نیست» («پاسخ» of that inquiry).
    units = evidence_units(chunks[0])
    second = next(i for i, u in enumerate(units) if u.text.startswith("در هر صورت"))
    assert units[second].paragraph == units[second - 1].paragraph
    question = "آیا پرداخت خسارت زیان‌دیده پس از استعلام گواهینامه است؟"
    documents = evidence_terms(chunks)
    concepts = ground_concepts(query_concepts(question), documents)
    weights = concept_weights(concepts, documents)
    topic = text_terms(f"{chunks[0].title}\n{chunks[0].product}\n{chunks[0].heading}")
    present = [any(c.covered_by(terms) for terms in documents) for c in concepts]
    tier = specific_tier(concepts, weights, topic, present)
    own = quote_terms(units[second])
    assert tier and not any(c.covered_by(own) for c in tier)  # the quote alone lacks it
    beside = own | neighbour_terms(units, second)
    assert carries(own, (), tier, own, beside)
    assert not carries(own, (), tier, own)


def test_a_list_item_never_borrows_from_the_next_item(chunks):
    # Article 3's items («الف ـ بیمه‌نامه …», «ب ـ گزارش کارشناس …», «پ ـ مدرک شناسایی …») are
    # separate cases under one introducing sentence: none of them is the context of another.
    units = evidence_units(chunks[0])
    items = [i for i, u in enumerate(units) if u.lead]
    assert len(items) >= 3
    assert all(neighbour_terms(units, i) == frozenset() for i in items)
    # and a sentence has no neighbour across a paragraph break (article 3 after note 2)
    article = next(i for i, u in enumerate(units) if u.text.startswith("ماده۳"))
    assert not (neighbour_terms(units, article) & text_terms(units[article - 1].text) - text_terms(units[article].text))
