"""What pins a question to one passage: the user's pick, or a provision named by number; never shared words."""

from insurance_agent.models.chunks import RetrievedChunk
from insurance_agent.models.scope import Scope
from insurance_agent.policy.options import passage_options
from insurance_agent.policy.provisions import numbered_chunks, pinned_chunks, provision_label, references, stated


def passage(chunk_id, file_id, text, score=0.5, title="قانون بیمه", heading=None):
    return RetrievedChunk(chunk_id=chunk_id, file_id=file_id, title=title, text=text, heading=heading, score=score,
                          tenant_id="t1")


LAW = passage("law-3", "law", "ماده ۱۲- بیمه‌گذار باید حق بیمه را در موعد مقرر بپردازد.\n\nتبصره ۱- مهلت پرداخت ده روز است.")
OTHER = passage("fund-2", "fund", "ماده ۱۲ـ صندوق موظف است ظرف پانزده روز خسارت را بپردازد.", 0.4, "اساسنامه صندوق")
PROSE = passage("law-1", "law", "بیمه عقدی است که به موجب آن یک طرف تعهد می‌کند.", 0.6)


def test_references_are_read_in_both_scripts_and_languages():
    assert references("ماده ۱۲ قانون بیمه چه می‌گوید؟") == {("article", 12)}
    assert references("what does article 12 say, and note 1?") == {("article", 12), ("note", 1)}
    assert references("تبصره 1 ماده‌ی ۱۲") == {("note", 1), ("article", 12)}
    assert references("بیمه بدنه ۱۲ میلیون است") == set()  # a number alone names no provision


def test_a_passage_states_the_provisions_its_paragraphs_open_with():
    assert stated(LAW) == [("article", 12), ("note", 1)]
    assert stated(PROSE) == []
    assert stated(passage("x", "law", "متن", heading="قانون بیمه > ماده ۵")) == [("article", 5)]


def test_shared_words_never_pin_a_question():
    assert pinned_chunks("مهلت پرداخت حق بیمه چند روز است؟", [LAW, OTHER, PROSE]) == []


def test_a_number_with_its_document_pins_the_passage_stating_it_and_a_pick_pins_the_picked_one():
    assert pinned_chunks("تبصره ۱ قانون بیمه درباره مهلت چه می‌گوید؟", [LAW, OTHER, PROSE]) == ["law-3"]
    # the number alone pins nothing: the passages stating it are offered to be confirmed
    assert pinned_chunks("تبصره ۱ درباره مهلت چه می‌گوید؟", [LAW, OTHER, PROSE]) == []
    assert numbered_chunks("تبصره ۱ درباره مهلت چه می‌گوید؟", [LAW, OTHER, PROSE]) == ["law-3"]
    # the same article number in two documents: two passages, a choice, not a pin to one
    assert numbered_chunks("ماده ۱۲ چه می‌گوید؟", [LAW, OTHER, PROSE]) == ["law-3", "fund-2"]
    # article 12 of the fund's statute asked, and only the law's article 12 retrieved: no pin
    assert pinned_chunks("ماده ۱۲ اساسنامه صندوق چه می‌گوید؟", [LAW, PROSE]) == []
    assert pinned_chunks("ماده ۱۲ اساسنامه صندوق چه می‌گوید؟", [LAW, OTHER]) == ["fund-2"]
    assert pinned_chunks("ماده ۱۲ چه می‌گوید؟", [LAW, OTHER], Scope(chunk_id="fund-2")) == ["fund-2"]
    # a pick of a passage retrieval did not return this turn pins nothing
    assert pinned_chunks("هر چیزی", [LAW], Scope(chunk_id="gone-9")) == []


def test_passage_options_name_document_provision_and_opening_words():
    options = passage_options([PROSE, LAW, OTHER], ["law-3", "fund-2"], "fa")
    assert [option.chunk_id for option in options] == ["law-3", "fund-2"]  # best score first, only those asked
    assert options[0].label == "قانون بیمه — ماده ۱۲: «بیمه‌گذار باید حق بیمه را در موعد مقرر بپردازد.»"
    assert options[1].file_id == "fund" and options[1].label.startswith("اساسنامه صندوق — ماده ۱۲: «صندوق موظف")
    long = passage("p", "law", " ".join(["کلمه"] * 30))
    assert provision_label(long).endswith("…»") and provision_label(long, "en").startswith("قانون بیمه: «")
    assert provision_label(LAW, "en").startswith("قانون بیمه — Article 12")


def test_a_provision_in_a_neighbour_merged_for_context_is_not_the_passage_s():
    text = "ماده ۱۱- بیمه‌گر باید خسارت را بپردازد.\n\nماده ۱۲- بیمه‌گذار باید حق بیمه را بپردازد."
    hit = passage("law-5", "law", text).model_copy(update={"own_span": [text.index("ماده ۱۲"), len(text)],
                                                             "expanded_from": ["law-4"]})
    assert stated(hit) == [("article", 12)]
    assert pinned_chunks("ماده ۱۱ قانون بیمه چه می‌گوید؟", [hit]) == []
    assert pinned_chunks("ماده ۱۲ قانون بیمه چه می‌گوید؟", [hit]) == ["law-5"]
