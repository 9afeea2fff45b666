"""Local generate: extractive, cites exactly what it quotes, abstains when the evidence does not answer."""

from insurance_agent.models.roles import GenerateRequest, Intent
from insurance_offline.generate import LocalGenerator

generate = LocalGenerator(quoting=True)


def draft(query, chunks, language="fa", route=Intent.KNOWLEDGE, feedback=()):
    return generate(
        GenerateRequest(
            route=route, message=query, query=query, chunks=chunks, language=language, feedback=list(feedback)
        )
    )


def quoted_in(text, chunks):
    return any(text in chunk.text for chunk in chunks)


def test_quotes_the_supporting_sentence_verbatim_and_cites_its_chunk(body_chunk, third_party_chunk):
    result = draft("فرانشیز بیمه بدنه چقدر است؟", [third_party_chunk, body_chunk])
    assert result.answered and result.confidence == 1.0
    assert result.citations == ["body-1"]
    assert [c.chunk_ids for c in result.claims] == [["body-1"]]
    assert "فرانشیز خسارت اول در بیمه بدنه ۱۰ درصد مبلغ خسارت است." in result.answer
    assert result.answer == "\n".join(c.text for c in result.claims)


def test_citations_are_exactly_the_quoted_chunks(body_chunk, third_party_chunk, health_chunk):
    chunks = [body_chunk, third_party_chunk, health_chunk]
    result = draft("حق بیمه درمان تکمیلی برای هر نفر چقدر است؟", chunks)
    assert result.answered
    quoted = {cid for claim in result.claims for cid in claim.chunk_ids}
    assert set(result.citations) == quoted == {"health-1"}
    for position, claim in enumerate(result.claims):
        # only the first quote of a document names it; the others are the bare quote
        quote = claim.text.split("»: ", 1)[1] if position == 0 else claim.text
        assert quote in health_chunk.text
    assert 1 <= len(result.claims) <= 3


def test_abstains_when_the_evidence_does_not_answer(body_chunk, third_party_chunk):
    result = draft("بیمه حیوانات خانگی چه شرایطی دارد؟", [body_chunk, third_party_chunk])
    assert not result.answered and result.answer == "" and result.claims == [] and result.citations == []
    assert draft("فرانشیز بیمه بدنه چقدر است؟", []).answered is False


def test_english_user_gets_the_persian_quote_framed_in_english(body_chunk, third_party_chunk):
    result = draft("What is the deductible for car body insurance?", [body_chunk, third_party_chunk], language="en")
    assert result.answered
    # English framing around the Persian source, which is quoted as it is
    assert result.answer.startswith(
        "According to «بیمه بدنه خودرو» (quoted from the Persian source): «فرانشیز خسارت اول"
    )
    assert result.citations == ["body-1"]


def test_feedback_drops_the_unsupported_sentence(health_chunk):
    first = draft("حق بیمه درمان تکمیلی برای هر نفر چقدر است؟", [health_chunk])
    dropped = first.claims[0].text
    second = draft("حق بیمه درمان تکمیلی برای هر نفر چقدر است؟", [health_chunk], feedback=[dropped])
    assert dropped not in second.answer
    assert all(claim.text != dropped for claim in second.claims)


def test_chitchat_and_out_of_scope_replies_have_no_citations():
    hello = draft("سلام", [], route=Intent.CHITCHAT)
    assert hello.answered and hello.answer.startswith("سلام") and hello.citations == []
    thanks = draft("thanks a lot", [], route=Intent.CHITCHAT, language="en")
    assert thanks.answer.startswith("You're welcome")
    refusal = draft("فردا هوا چطور است؟", [], route=Intent.OUT_OF_SCOPE)
    assert "فقط" in refusal.answer and "بیمه" in refusal.answer and refusal.citations == []
    refusal_en = draft("Who won the football match?", [], route=Intent.OUT_OF_SCOPE, language="en")
    assert "only answer questions about insurance" in refusal_en.answer


def test_table_rows_are_quoted_but_never_the_header_row(chunk_factory):
    chunk = chunk_factory(
        "body-5",
        "f-body",
        "بیمه بدنه خودرو",
        "فرانشیز بخشی از هر خسارت است که بر عهده بیمه‌گذار می‌ماند و به ترتیب خسارت‌ها افزایش می‌یابد:\n\n"
        "| ترتیب خسارت در سال بیمه‌ای | فرانشیز |\n|---|---|\n"
        "| خسارت اول | ۱۰ درصد مبلغ خسارت (حداقل ۵٬۰۰۰٬۰۰۰ ریال) |\n"
        "| خسارت دوم | ۲۰ درصد مبلغ خسارت |\n"
        "| **سرقت کلی** | ۲۰ درصد |",
        0.03,
        product="car_body",
    )
    result = draft("فرانشیز خسارت دوم در بیمه بدنه چند درصد است؟", [chunk])
    assert result.answered
    quotes = [claim.text.split("»: ", 1)[-1] for claim in result.claims]
    assert "ترتیب خسارت در سال بیمه‌ای | فرانشیز" not in quotes
    assert quotes[0] == "خسارت دوم | ۲۰ درصد مبلغ خسارت"
    # "how much" questions prefer rows with numbers over the sentence that introduces the table
    assert not any(quote.endswith(":") for quote in quotes)
    assert all(claim.chunk_ids == ["body-5"] for claim in result.claims)


def test_abstains_when_a_named_domain_notion_is_in_no_evidence(chunk_factory):
    travel = chunk_factory(
        "travel-8",
        "f-travel",
        "Sepehr Travel Insurance",
        "Trip cancellation cover reimburses prepaid costs if the trip is cancelled because of serious damage "
        "to the insured's home.",
        0.03,
        domain="travel",
        language="en",
    )
    # "home", "insurance", "cover" and "damage" are all there, "earthquake" is not: not an answer
    assert not draft("Does home insurance cover earthquake damage?", [travel], language="en").answered


def test_english_glossary_reaches_persian_evidence(health_chunk):
    result = draft("What is the waiting period for childbirth in supplementary health insurance?", [health_chunk], "en")
    assert result.answered and result.citations == ["health-1"]
    assert (
        "According to «بیمه درمان تکمیلی» (quoted from the Persian source): «دوره انتظار برای زایمان ۹ ماه است.»"
        in result.answer
    )


def account_record(chunk_factory, number, title, product, lines):
    chunk = chunk_factory(f"account:{number}", f"account:{number}", f"{title} ({number})", "\n".join(lines), 1.0)
    return chunk.model_copy(update={"product": product, "domain": None})


def test_account_questions_quote_the_asked_fields_of_the_named_policy(chunk_factory, third_party_chunk):
    tp = account_record(
        chunk_factory,
        "SEP****2345",
        "بیمه شخص ثالث خودرو",
        "third_party",
        ["بیمه شخص ثالث خودرو (SEP****2345)", "وضعیت: active", "تاریخ پایان: 2026-03-20", "فرانشیز: ندارد"],
    )
    health = account_record(
        chunk_factory,
        "SEP****5678",
        "بیمه تکمیلی درمان",
        "supplementary_health",
        ["بیمه تکمیلی درمان (SEP****5678)", "تاریخ پایان: 2026-06-21", "حق بیمه: 168,000,000 IRR"],
    )
    chunks = [tp, health, third_party_chunk]
    result = draft("بیمه‌نامه شخص ثالث من کی تمام می‌شود؟", chunks, route=Intent.ACCOUNT)
    assert result.answered and result.citations == ["account:SEP****2345"]
    assert result.answer == "بر اساس «بیمه شخص ثالث خودرو (SEP****2345)»: تاریخ پایان: 2026-03-20"

    premium = draft("حق بیمه سالانه تکمیلی من چقدره؟", chunks, route=Intent.ACCOUNT)
    assert premium.citations == ["account:SEP****5678"] and "168,000,000" in premium.answer

    # a line of insurance the user holds no policy of: no answer from someone else's document
    assert not draft("بیمه عمر من کی تمام می‌شود؟", chunks, route=Intent.ACCOUNT).answered

    everything = draft("What is the status of my policies?", chunks, route=Intent.ACCOUNT, language="en")
    assert set(everything.citations) == {"account:SEP****2345", "account:SEP****5678"}


def test_a_quote_without_the_questions_most_specific_word_is_no_answer(body_chunk, third_party_chunk, health_chunk):
    # «همسر» is in the health document, but not in its premium sentence: the premium "per person"
    # may not be the spouse's, so the turn goes to a person rather than quoting beside the point.
    result = draft("حق بیمه درمان تکمیلی برای همسرم چقدر است؟", [body_chunk, third_party_chunk, health_chunk])
    assert not result.answered and result.claims == []
