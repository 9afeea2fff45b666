"""English questions against Persian evidence through the offline provider: the glossary (insurance_offline/glossary.py),
its lookup (insurance_offline/lexical.py), the scope, and answers on real statute excerpts (tests/data/statutes) that are
not the sample corpus. An answer must quote the sentence that holds the fact, framed in English; a
question the excerpt does not answer must be abstained from."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from insurance_offline.glossary import GENERIC_NOTIONS, GLOSSARY, LIGHT_NOTIONS
from insurance_offline.lexical import VERB_WEIGHT, _stems, glossary_entry, noise_terms, query_concepts, terms_of
from insurance_agent.models.chunks import RetrievedChunk
from insurance_agent.models.roles import ContextualizeRequest, GenerateRequest, GradeRequest, Intent, VerifyRequest
from insurance_search.topics import scope_from_payloads
from insurance_offline.contextualize import LocalContextualizer
from insurance_offline.generate import LocalGenerator
from insurance_offline.grade import LocalGrader
from insurance_offline.verify import LocalVerifier

STATUTES = Path(__file__).resolve().parents[2] / "data" / "statutes"
# Renderings that name a field of the account node's policy records, which are written in English.
ACCOUNT_FIELDS = {"end date", "start date", "status"}


# -- the glossary ---------------------------------------------------------------------------------


def test_every_rendering_is_persian_and_yields_stems():
    """A rendering whose words the stemmer drops (a stopword, a question word) could never be covered."""
    bad = []
    for english, phrases in GLOSSARY.items():
        for phrase in phrases:
            if phrase in ACCOUNT_FIELDS:
                continue
            stems = _stems(phrase)
            if phrase.isascii() or not stems or stems & noise_terms():
                bad.append((english, phrase))
    assert not bad


def test_generic_and_light_terms_are_glossary_terms():
    english = {word for word in GENERIC_NOTIONS if word.isascii()}
    assert not english - set(GLOSSARY)
    assert not set(LIGHT_NOTIONS) - set(GLOSSARY)


def test_generic_and_light_terms_are_never_key():
    bad = []
    for term in sorted(word for word in GENERIC_NOTIONS | LIGHT_NOTIONS if word.isascii()):
        label = " ".join(re.split(r"[-' ]", term))  # "by-law" is read as "by law"
        concepts = [c for c in query_concepts(f"{term} something") if c.label == label]
        light = term in LIGHT_NOTIONS
        if not concepts or any(c.key or (light and c.weight != VERB_WEIGHT) for c in concepts):
            bad.append(term)
    assert not bad


def test_a_word_is_looked_up_as_written_before_its_stem():
    # "insurer" and "insurance" share the stem "insur" but not their renderings
    insurer = glossary_entry(["insurers"])
    insurance = glossary_entry(["insurance"])
    assert insurer is not None and "بیمه گر" in insurer.phrases
    assert insurance is not None and "بیمه گر" not in insurance.phrases
    # an inflection the entry does not list falls back to the stem
    assert "تمدید" in glossary_entry(["renewing"]).phrases


def test_specific_notions_are_key_and_unknown_words_stay_english():
    concepts = {c.label: c for c in query_concepts("Does the fund have to pay tax on its zorbification?")}
    assert concepts["tax"].key and concepts["tax"].covered_by(frozenset(terms_of("مالیات")))
    assert not concepts["have to"].key and concepts["have to"].weight == VERB_WEIGHT
    unknown = concepts["zorbification"]
    assert len(unknown.alternatives) == 1 and unknown.stems <= {"zorbif"}
    assert not {"does", "the", "its", "on"} & set(concepts)


def test_an_english_question_searches_with_persian_renderings():
    query = LocalContextualizer()(
        ContextualizeRequest(message="Is the fund's income exempt from tax?")
    ).standalone_query
    assert query.startswith("Is the fund's income exempt from tax?")
    for rendering in ("صندوق", "درآمد", "معاف", "مالیات"):
        assert rendering in query


def test_an_english_question_is_in_the_scope_of_a_persian_corpus():
    scope = scope_from_payloads(
        [{"title": "اساسنامه", "text": "درآمدهای صندوق از پرداخت مالیات معاف است و بیمه‌گر مکلف است خسارت را بپردازد."}]
    )
    assert scope.covers("Is the fund's income exempt from tax?")
    assert not scope.covers("Which football team won the league yesterday?")


def test_the_particles_and_irregular_pasts_of_a_story_do_not_put_a_question_out_of_scope():
    """"The dealer took back my faulty car … straight away?": "took", "away", "straight" are no topic;
    counted as words the corpus lacks, they outnumbered the car consumer law's own words."""
    scope = scope_from_payloads(
        [
            {
                "title": "قانون حمایت از حقوق مصرف‌کنندگان خودرو",
                "text": "عرضه‌کننده مکلف است خودروی معیوب را مسترد و خودروی نو تحویل دهد و فروش مجدد آن ممنوع است.",
            }
        ]
    )
    question = "The dealer took my faulty car away and gave me a new one. Can they turn around and sell it straight away?"
    assert scope.covers(question)
    assert not scope.covers("The neighbour took my bike and went away to the football game straight away.")
    returned = next(c for c in query_concepts("The dealer took back my faulty car.") if c.label == "took back")
    assert returned.covered_by(frozenset(terms_of("خودرو را مسترد کند")))


# -- answers on real statute excerpts -------------------------------------------------------------


@pytest.fixture(scope="module")
def claims_bylaw(statute_chunks) -> list[RetrievedChunk]:
    return statute_chunks("claims-bylaw-excerpt.md", "t-en")


@pytest.fixture(scope="module")
def insurance_act(statute_chunks) -> list[RetrievedChunk]:
    return statute_chunks("insurance-act-excerpt.md", "t-en")


def ask(chunks, question):
    grade = LocalGrader(quoting=True)(GradeRequest(query=question, chunks=chunks))
    draft = LocalGenerator(quoting=True)(
        GenerateRequest(route=Intent.KNOWLEDGE, message=question, query=question, chunks=chunks, language="en")
    )
    verdict = LocalVerifier()(
        VerifyRequest(answer=draft.answer, claims=draft.claims, chunks=chunks, min_support=1.0, question=question)
    )
    return grade, draft, verdict


@pytest.mark.parametrize(
    ("question", "sentence"),
    [
        (
            "Within how many weeks must the traffic police answer the insurer's inquiries about a driving licence?",
            "راهنمایی و رانندگی موظف است استعلام‌های مربوط به گواهینامه رانندگی از سوی بیمه‌گر مربوط را ظرف دو هفته پاسخ دهد.",
        ),
        (
            "Does the payment of my claim depend on the traffic police answering the insurer?",
            "در هر صورت پرداخت خسارت به زیان‌دیده موکول به پاسخ راهنمایی و رانندگی نیست.",
        ),
        (
            "Can the driver who caused the accident file the property damage claim himself?",
            "راننده مسبب حادثه می‌تواند با ارایه مدارک موضوع این ماده",
        ),
        ("What documents do I need to claim property damage from the insurer?", "پ ـ مدرک شناسایی راننده مسبب حادثه."),
        (  # "supposed to" is the bylaw's «موظف است»: a modal, not a notion the quote must name
            "Is the traffic police supposed to reply within two weeks?",
            "ظرف دو هفته پاسخ دهد.",
        ),
    ],
)
def test_english_questions_on_the_claims_bylaw_quote_the_sentence_that_answers(claims_bylaw, question, sentence):
    grade, draft, verdict = ask(claims_bylaw, question)
    assert grade.verdict.value == "sufficient", grade
    assert draft.answered, draft
    assert sentence in draft.answer
    assert draft.answer.startswith("According to «") and "(quoted from the Persian source): «" in draft.answer
    assert verdict.grounded, verdict


def test_a_documents_question_is_answered_by_the_documents_list_not_by_the_conditions_list(claims_bylaw):
    _, draft, _ = ask(claims_bylaw, "Which documents are required for a property damage claim?")
    assert draft.answered, draft
    assert "مدارک زیر" in draft.answer and "مدرک شناسایی راننده مسبب حادثه" in draft.answer
    assert "شرایط زیر" not in draft.answer


def test_an_english_question_on_the_insurance_act_gets_the_figure(insurance_act):
    grade, draft, verdict = ask(
        insurance_act, "How long is the limitation period for lawsuits arising from an insurance contract?"
    )
    assert draft.answered, (grade, draft)
    assert "مدت مرور زمان دعاوی ناشیه از بیمه دو سال است" in draft.answer
    assert verdict.grounded, verdict


@pytest.mark.parametrize(
    ("excerpt", "question"),
    [
        # a line of insurance the excerpt never mentions
        ("claims-bylaw-excerpt.md", "Does the insurer pay for earthquake damage to my house?"),
        # the excerpt speaks of property damage and two weeks, never of bodily-injury payment days
        ("claims-bylaw-excerpt.md", "How many days does the insurer have to pay bodily injury claims?"),
        ("claims-bylaw-excerpt.md", "What is the deadline for reporting a car accident to the insurer?"),
        # the act's notice period (article 15) is not in the excerpt; its two-year limitation is no answer
        ("insurance-act-excerpt.md", "How many days does the policyholder have to report an accident to the insurer?"),
        ("insurance-act-excerpt.md", "Can the insurer cancel the policy if I pay the premium late?"),
        # the act names the premium but says nothing of who sets it
        ("insurance-act-excerpt.md", "Who sets the premium of an insurance policy?"),
    ],
)
def test_english_questions_the_excerpt_does_not_answer_are_not_answered(statute_chunks, excerpt, question):
    _, draft, _ = ask(statute_chunks(excerpt, "t-en"), question)
    assert not draft.answered, draft.answer


def test_every_specific_notion_of_an_english_question_must_be_in_the_quote(chunk_factory):
    """A sentence naming the premium and the insurer's duty, but not the tax asked about, is another
    question's answer: with the tax named only elsewhere, nothing is quoted."""
    chunks = [
        chunk_factory(
            "r-1",
            "f-rules",
            "مقررات صدور بیمه‌نامه",
            "بیمه‌گر موظف است حق بیمه را پیش از صدور بیمه‌نامه به متقاضی اعلام کند. "
            "مالیات بر ارزش افزوده طبق قوانین مربوط محاسبه می‌شود.",
            0.03,
        )
    ]
    question = "Does the insurer have to tell the customer the tax on the premium?"
    concepts = {c.label: c for c in query_concepts(question)}
    assert concepts["tax"].key and concepts["premium"].key
    _, draft, _ = ask(chunks, question)
    assert not draft.answered or "مالیات" in draft.answer, draft.answer


def test_english_terms_are_not_respelled_into_neighbouring_persian_words():
    """«مجاز» (allowed) is one prefix away from «مجازات» (penalty): an English term's renderings are
    the documents' written forms and are matched as they are."""
    from insurance_offline.lexical import ground_concepts

    evidence = [frozenset(terms_of("بیمه‌گر مجاز است قرارداد را فسخ کند."))]
    penalty = next(c for c in ground_concepts(query_concepts("Is there a penalty?"), evidence) if c.label == "penalty")
    assert not penalty.covered_by(evidence[0])


@pytest.mark.parametrize(
    ("question", "negated"),
    [
        ("How much is the no-claims discount for each year without a claim?", False),
        ("Who pays if the car that hit me had no insurance?", False),
        ("What does the policy not cover?", True),
        ("Which damages are excluded?", True),
        ("Why doesn't the fund pay?", True),
    ],
)
def test_no_and_without_state_a_condition_not_a_negated_question(question, negated):
    from insurance_offline.question import question_shape

    assert question_shape(question, query_concepts(question), frozenset()).negated is negated


def test_a_customers_circumstances_and_phrasal_particles_are_not_what_a_quote_must_name():
    concepts = {c.label: c for c in query_concepts("If the carmaker and I end up in court over a defect, who pays?")}
    assert not {"up", "over"} & set(concepts)  # particles of "end up", not notions
    told = {c.label: c for c in query_concepts("I'm leasing a car that belongs to someone else. Who has to insure it?")}
    # everyday words with the statutes' renderings («متصرف», «مالکیت»), never key notions
    assert told["leasing"].covered_by(frozenset(terms_of("مالک وسیله نقلیه یا متصرف آن")))
    assert not told["leasing"].key and not told["belongs"].key


def test_function_words_and_irregular_past_forms_are_read_as_a_customer_means_them():
    """"were", "but", "lot" and "stuff" are no notions; "took back" and "gave" are the glossary's "take
    back" and "give": a stemmer leaves irregular past forms apart from their verb."""
    concepts = {
        c.label: c
        for c in query_concepts(
            "The dealer took back my car and gave me a lot of stuff, but what if I were a government employee?"
        )
    }
    assert not {"were", "but", "lot", "stuff"} & set(concepts)
    assert concepts["took back"].covered_by(frozenset(terms_of("خودروی مسترد شده")))
    assert concepts["gave"].covered_by(frozenset(terms_of("ارائه")))
    assert glossary_entry(["given"]) == glossary_entry(["give"])
    assert "شفاهی" in glossary_entry(["verbally"]).phrases and "کتبی" in glossary_entry(["in", "writing"]).phrases
    # "found out" is "find out", words of the story; a dispute told as "arguing" is the statutes' «اختلاف»
    told = {c.label: c for c in query_concepts("I found out they keep arguing about it. Who settles that?")}
    assert "found" not in told
    assert told["arguing"].covered_by(frozenset(terms_of("پرونده‌های مورد اختلاف")))
    assert told["settles"].covered_by(frozenset(terms_of("مرجع رسیدگی")))


def test_buying_a_policy_is_obtaining_it_and_being_allowed_is_answered_by_a_ban():
    """Statutes say a policy is «تحصیل» (obtained), and answer "am I allowed to …?" by «ممنوع است»,
    as a Persian «اجازه دارم؟» is answered."""
    buy = next(c for c in query_concepts("Who has to buy the third-party insurance?") if c.label == "buy")
    assert buy.covered_by(frozenset(terms_of("هر کدام که بیمه نامه را تحصیل کند")))
    allowed = next(c for c in query_concepts("Am I allowed to drive without insurance?") if c.label == "allowed")
    assert allowed.covered_by(frozenset(terms_of("حرکت وسیله نقلیه بدون بیمه نامه ممنوع است")))


def test_a_car_company_a_government_agency_and_an_expired_policy_in_the_statutes_words():
    def covered(question, label, evidence):
        found = next(c for c in query_concepts(question) if c.label == label)
        return found.covered_by(frozenset(terms_of(evidence)))

    assert covered("Does the car company have to give me the terms?", "car company", "عرضه‌کننده مکلف است")
    assert covered("Is it a government agency?", "government agency", "نهاد عمومی غیردولتی است")
    assert covered("Can I drive if my insurance has expired?", "expired", "بدون بیمه نامه معتبر")
    assert covered("Can I drive if my insurance has expired?", "drive", "حرکت وسیله نقلیه ممنوع است")
    assert "special" not in {c.label for c in query_concepts("Is there a special fund for injuries?")}


def test_a_yes_no_question_about_stating_a_figure_is_answered_by_the_rule_that_requires_it(chunk_factory):
    """"Should the policy say how much each payment is?" asks whether a figure must be stated: the rule
    requiring it answers, though it states no figure. Asked for the figure itself, the same sentence is
    no answer."""
    chunks = [
        chunk_factory(
            "p-8",
            "f-premium",
            "آیین‌نامه تعیین سقف حق بیمه شخص ثالث",
            "ماده۸ ـ بیمه‌گر مجاز است با رعایت شرایط زیر حق بیمه شخص ثالث بیمه‌نامه‌های یک ساله را به صورت "
            "اقساطی دریافت نماید.\n\n"
            "تبصره۱ـبیمه‌گر موظف است در بیمه‌نامه قسطی مبلغ هر قسط و سررسید آن را درج نماید.\n\n"
            "تبصره۲ـدر صورت انتقال مالکیت وسیله نقلیه به دیگری، انتقال گیرنده مسئول پرداخت اقساط باقیمانده "
            "حق بیمه (اعم از سررسید شده یا سررسید نشده) خواهد بود.",
            0.03,
        )
    ]
    _, draft, verdict = ask(
        chunks, "I pay my third-party insurance in installments. Should the policy say how much each installment is?"
    )
    assert draft.answered, draft
    assert "مبلغ هر قسط و سررسید آن را درج نماید" in draft.answer
    assert verdict.grounded, verdict
    _, asked_for_figure, _ = ask(chunks, "How much is each installment of my third-party insurance?")
    assert "مبلغ هر قسط و سررسید آن را درج نماید" not in asked_for_figure.answer


def test_a_bound_and_an_idiom_of_delay_in_the_statutes_words():
    """"Up to what percentage" asks for a figure («تا بیست درصد» states the maximum without the word),
    so the bound weighs as a modal does; "dragging its feet" is a delay, not feet."""
    up_to = next(c for c in query_concepts("Up to what percentage can foreigners own?") if c.label == "up to")
    assert up_to.weight == VERB_WEIGHT and not up_to.key
    concepts = {c.label: c for c in query_concepts("My insurance company is dragging its feet on my claim.")}
    assert "feet" not in concepts
    assert concepts["dragging its feet"].covered_by(frozenset(terms_of("تأخیر در پرداخت خسارت")))


def test_how_fast_asks_for_a_time_and_names_no_notion():
    """"How fast does the insurer have to pay?" asks for a deadline as "how long" does; weighed as a
    word no Persian sentence has, "fast" was the question's heaviest notion."""
    from insurance_offline.question import question_shape

    for question in ("How fast does the insurer have to pay?", "How quickly must the fund pay me?"):
        concepts = query_concepts(question)
        assert not {"fast", "quickly"} & {c.label for c in concepts}
        shape = question_shape(question, concepts, frozenset())
        assert shape.needs_number and shape.measure == "time"


def test_a_broken_limb_is_a_bodily_injury_and_a_relative_is_no_notion():
    """"A car hit my sister and broke her arm": the statutes name a bodily injury, never the limb or
    the relative; each weighed as a word no Persian sentence has, they outweighed what is asked."""
    concepts = query_concepts("A car hit my sister and broke her arm. How much does the insurer pay?")
    labels = {c.label for c in concepts}
    assert "sister" not in labels
    injury = terms_of("خسارت بدنی زیان‌دیده")
    broke = next(c for c in concepts if c.label == "broke")
    arm = next(c for c in concepts if c.label == "arm")
    assert broke.covered_by(frozenset(injury)) and arm.covered_by(frozenset(injury))
    assert broke.key and not arm.key  # the injury is a notion; the limb only a circumstance
