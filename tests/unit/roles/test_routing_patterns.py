"""Regression tests of the routing failure patterns, on excerpts of another insurer's documents.

1. scope comes from the tenant's corpus (and a short follow-up on a thread is in scope);
2. a question about a rule that shares words with a restricted intent is not escalated;
7. the policy runs before a pick of a clarifying question's options;
8. the triage exemplars name no product of the sample corpus, and a new insurer's lines are knowledge.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from insurance_agent.models.roles import HistoryTurn, Intent, TriageRequest
from insurance_agent.models.turn import ClarifyOption
from insurance_search.topics import scope_from_payloads
from insurance_offline.triage import EXEMPLARS_FILE, POLICY_EXEMPLARS_FILE, LocalTriager

ROOT = Path(__file__).resolve().parents[3]

# Excerpts written like a real insurer's terms (not the sample corpus).
THIRD_PARTY = {
    "title": "شرایط عمومی بیمه شخص ثالث",
    "heading": "انتقال وسیله نقلیه",
    "text": "در صورت انتقال مالکیت وسیله نقلیه، تخفیف عدم خسارت متعلق به فروشنده است و به خریدار منتقل نمی‌شود. "
    "فروشنده می‌تواند تخفیف را به خودروی جدید خود منتقل کند. هزینه صدور الحاقیه انتقال رایگان است. "
    "در حوادث منجر به فوت، دیه بر اساس نرخ سال وقوع حادثه پرداخت می‌شود.",
    "product": "third_party",
    "domain": "motor",
}
GENERAL = {
    "title": "شرایط عمومی بیمه‌نامه‌ها",
    "heading": "فسخ، اعتراض و مرور زمان",
    "text": "بیمه‌گذار می‌تواند قرارداد را در هر زمان فسخ کند و حق بیمه مدت باقی‌مانده مسترد می‌شود. بیمه‌گر در صورت "
    "عدم پرداخت حق بیمه حق فسخ یا ابطال قرارداد را دارد. اعتراض به نظر کارشناس ارزیاب ظرف سی روز پذیرفته می‌شود. "
    "مرور زمان دعاوی و شکایت ناشی از بیمه‌نامه دو سال است. هزینه وکیل و دادرسی تا سقف تعهدات پرداخت می‌شود.",
}
FLEET_INTERNAL = {
    "title": "دستورالعمل داخلی فروش ناوگان",
    "text": "کد تخفیف داخلی مشتریان ناوگان حمل‌ونقل برای شرکت‌های دارای بیش از بیست دستگاه کامیون صادر می‌شود.",
}


@pytest.fixture(scope="module")
def triage(triage_classifier):
    return LocalTriager(classifier=triage_classifier, scope="insurance")


def ask(triage, message, scope=None, history=()):
    request = TriageRequest(
        message=message,
        history=list(history),
        corpus_topics=list(scope.topics) if scope else [],
        in_corpus=scope.covers(message) if scope else None,
    )
    return triage(request)


# -- 1. scope from the corpus -----------------------------------------------------------------------


def test_a_question_the_corpus_covers_is_in_scope_without_the_word_insurance(triage):
    user = scope_from_payloads([THIRD_PARTY])
    assert user.covers("هزینه‌اش چقدر است؟")
    for message in ("ماشینمو فروختم، تخفیف عدم خسارتم مال منه یا خریدار؟", "هزینه‌اش چقدر است؟"):
        assert ask(triage, message, user).intent in (Intent.KNOWLEDGE, Intent.ACCOUNT), message


def test_an_officers_question_is_in_scope_only_with_the_officers_documents(triage):
    officer = scope_from_payloads([THIRD_PARTY, FLEET_INTERNAL])
    user = scope_from_payloads([THIRD_PARTY])
    message = "کد تخفیف داخلی مشتریان ناوگان چیست؟"
    assert officer.covers(message) and not user.covers(message)
    assert ask(triage, message, officer).intent == Intent.KNOWLEDGE


def test_a_short_follow_up_on_an_answered_thread_is_in_scope(triage):
    history = [HistoryTurn(message="دیه در بیمه شخص ثالث چقدر است؟", reply="…", query="دیه بیمه شخص ثالث")]
    result = ask(triage, "در حوادث منجر به فوت چطور؟", scope_from_payloads([THIRD_PARTY]), history)
    assert result.intent == Intent.KNOWLEDGE
    # with no corpus information at all, a follow-up is still taken as one
    assert ask(triage, "در حوادث منجر به فوت چطور؟", None, history).intent == Intent.KNOWLEDGE


def test_unrelated_topics_stay_out_of_scope(triage):
    scope = scope_from_payloads([THIRD_PARTY])
    for message in ("قیمت طلا امروز چقدر شد؟", "Who painted the Mona Lisa?", "یه جوک بامزه بگو"):
        assert not scope.covers(message), message
        assert ask(triage, message, scope).intent in (Intent.OUT_OF_SCOPE, Intent.CHITCHAT), message


def test_coverage_counts_the_messages_own_words_not_question_words():
    scope = scope_from_payloads([THIRD_PARTY])
    found, total = scope.coverage("هزینه‌اش چقدر است؟")
    assert (found, total) == (1, 1)
    assert scope.coverage("چقدره؟") == (0, 0) and not scope.covers("چقدره؟")
    assert "third party" in scope.topics and "motor" in scope.topics


# -- 2. asking about a rule is not asking us to act ---------------------------------------------------

RULE_QUESTIONS = [
    "مرور زمان شکایت از بیمه چند ساله؟",
    "مهلت اعتراض به نظر کارشناس ارزیاب چند روز است؟",
    "شرایط فسخ قرارداد از طرف بیمه‌گر چیست؟",
    "اگه قرارداد رو وسط سال کنسل کنم چقدر برمیگرده؟",
    "هزینه وکیل در بیمه مسئولیت پرداخت می‌شود؟",
    "How long do I have to appeal a rejected claim?",
    "Can the insurer cancel a policy for non-payment?",
    "Does liability cover pay court costs?",
    "Is the crane operator insured under the contractors' policy?",
]
REQUESTS = [
    ("می‌خواهم از نماینده شما شکایت کنم", "complaint"),
    ("قراردادمو فسخ کنید", "cancellation"),
    ("به نظر ارزیاب اعتراض دارم", "claim_dispute"),
    ("اگه پولمو ندید میرم دادگاه", "legal"),
    ("I want to appeal the decision on my claim", "claim_dispute"),
    ("Please cancel our cargo policy", "cancellation"),
    ("I'm going to sue you", "legal"),
]


@pytest.mark.parametrize("message", RULE_QUESTIONS)
def test_a_question_about_a_rule_is_not_escalated(triage, message):
    result = ask(triage, message, scope_from_payloads([GENERAL, THIRD_PARTY]))
    assert not result.restricted and result.intent in (Intent.KNOWLEDGE, Intent.ACCOUNT), result


@pytest.mark.parametrize("message, category", REQUESTS)
def test_a_request_to_act_is_escalated(triage, message, category):
    result = ask(triage, message)
    assert result.restricted and result.restricted_category == category, result


def test_paraphrases_no_lexicon_was_written_for_are_recognised(triage):
    assert ask(triage, "رئیس واحد رو صدا کنید بیاد").intent == Intent.HANDOFF_REQUEST
    assert ask(triage, "We're going in circles here").frustration
    assert ask(triage, "See you tomorrow!").restricted is False


# -- 7. policy before picks ------------------------------------------------------------------------


def _clarified():
    options = [ClarifyOption(label="بیمه شخص ثالث", file_id="a"), ClarifyOption(label="بیمه بدنه", file_id="b")]
    return [HistoryTurn(message="فرانشیز چنده؟", reply="کدام؟", status="clarify", query="فرانشیز", options=options)]


def test_a_restricted_request_that_names_an_option_escalates_as_on_a_fresh_thread(triage):
    fresh = ask(triage, "شخص ثالث رو فسخ کنید")
    after = ask(triage, "شخص ثالث رو فسخ کنید", history=_clarified())
    assert fresh.restricted and fresh.restricted_category == "cancellation"
    assert (after.restricted, after.restricted_category) == (fresh.restricted, fresh.restricted_category)
    assert ask(triage, "شخص ثالث", history=_clarified()).intent == Intent.KNOWLEDGE


def test_the_triage_node_checks_the_policy_before_taking_a_pick(monkeypatch):
    from insurance_agent.models.parts import TurnParts
    from insurance_agent.models.state import TurnState
    from insurance_agent.nodes import triage as node

    history = _clarified()
    monkeypatch.setattr(node, "parts", lambda state: TurnParts(history=history, query=state.require_turn().message))
    monkeypatch.setattr(node, "corpus_context", lambda turn: ([], None))

    def state(message):
        turn = {"thread_id": "t-1", "turn_id": "turn-2", "user_id": "u-1", "tenant_id": "arman", "message": message}
        return TurnState.model_validate({"input": turn, "turn": turn})

    picked = node.run(state("شخص ثالث"))
    assert picked.route == Intent.KNOWLEDGE.value and picked.counters.llm_calls == 0
    cancel = node.run(state("شخص ثالث رو فسخ کنید"))
    assert cancel.triage.restricted and cancel.triage.restricted_category == "cancellation"
    assert cancel.counters.llm_calls == 1  # triaged like any fresh message
    human = node.run(state("دومی، ولی اول با یه اپراتور وصلم کنید"))
    assert human.route == Intent.HANDOFF_REQUEST.value


# -- 8. no sample vocabulary in the triage data; a new insurer's lines are knowledge ------------------


def _sample_names() -> set[str]:
    """The sample corpus's insurers, file ids and plan names (quoted «...» in its documents)."""
    names = {"sepehr", "kavir", "سپهر", "کویر"}
    for path in (ROOT / "samples" / "corpus").rglob("*.md"):
        text = path.read_text(encoding="utf-8")
        match = re.search(r"^file_id:\s*(\S+)", text, re.MULTILINE)
        if match:
            names.add(match.group(1).lower())
        names.update(plan.lower() for plan in re.findall(r"«([^»]{3,30})»", text) if re.search("کویر|سپهر", plan))
        names.update(plan.lower() for plan in re.findall(r"\b([A-Z][a-z]+) plan\b", text))
        names.update(f"طرح {plan}" for plan in re.findall(r"طرح (\S+(?:ای|ایی))(?=\s|\|)", text))
    return names


def test_triage_data_names_no_product_or_insurer_of_the_sample_corpus():
    names = _sample_names()
    assert "sepehr" in names and len(names) > 6
    texts = []
    for path in (EXEMPLARS_FILE, POLICY_EXEMPLARS_FILE):
        texts += [json.loads(line)["text"].lower() for line in path.read_text(encoding="utf-8").splitlines() if line]
    policy = (ROOT / "layers/core/insurance_agent/policy/data/escalation_policy.yaml").read_text(encoding="utf-8")
    for name in names:
        assert not any(re.search(rf"(?<!\w){re.escape(name)}(?!\w)", text) for text in texts), name
        assert not re.search(rf"(?<!\w){re.escape(name)}(?!\w)", policy.lower()), name


@pytest.mark.parametrize(
    "message",
    [
        "بیمه باربری کالای صادراتی از چه زمانی شروع می‌شود؟",
        "بیمه مهندسی تمام خطر نصب شامل چه خطراتی است؟",
        "Does cyber insurance cover a ransomware attack?",
        "Is damage to goods in a marine cargo policy covered during unloading?",
    ],
)
def test_a_new_insurers_lines_route_as_knowledge(triage, message):
    assert ask(triage, message).intent == Intent.KNOWLEDGE
