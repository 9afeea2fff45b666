"""Everyday words and phrases matched to the words of bylaws and statutes (lexical.REGISTER): «مقصر»
is the bylaw's «مسبب», «طرف مقابل» its «زیان‌دیده». A phrase is one concept: its words must not be
matched one by one («طرف» alone is any party, «طرفین» included)."""

from insurance_offline.lexical import query_concepts, text_terms


def concept(query, label):
    return next(c for c in query_concepts(query) if c.label == label)


def test_a_phrase_is_one_concept_covered_by_its_rendering_not_by_its_words():
    other_party = concept("راننده طرف مقابل چه مدارکی باید بیاورد؟", "طرف مقابل")
    assert other_party.covered_by(text_terms("خسارت مالی زیان‌دیده را پرداخت نماید"))
    assert not other_party.covered_by(text_terms("بین طرفین اختلافی نباشد"))
    assert other_party.key  # a notion: when no evidence mentions it, the evidence does not answer
    # its words are not concepts of their own
    assert not any(c.label in {"طرف", "مقابل"} for c in query_concepts("راننده طرف مقابل چه مدارکی باید بیاورد؟"))


def test_a_lone_party_word_is_no_concept_and_the_role_beside_it_is():
    """«حق بیمه طرف مقصر», «ماشین طرفو»: the other party, whom the bylaws name by role. Weighed as the
    rarest word no chunk contains, «طرف» kept the bylaw's sentence on the one at fault from answering."""
    found = query_concepts("حق بیمه طرف مقصر گران می‌شود؟")
    assert "طرف" not in {c.label for c in found}
    assert concept("حق بیمه طرف مقصر گران می‌شود؟", "مقصر").covered_by(text_terms("راننده مسبب حادثه"))
    assert not any(c.covered_by(text_terms("زیان دیده")) for c in found)


def test_everyday_words_match_the_bylaws_words():
    at_fault = concept("راننده مقصر چه باید بکند؟", "مقصر")
    assert at_fault.covered_by(text_terms("راننده مسبب حادثه می‌تواند به بیمه‌گر مراجعه کند"))
    bodily = concept("خسارت جانی را چه کسی می‌دهد؟", "جانی")
    assert bodily.covered_by(text_terms("پرداخت خسارت بدنی"))
    maker = concept("خودروساز تا کی باید قطعه بدهد؟", "خودروساز")
    assert maker.covered_by(text_terms("عرضه‌کننده موظف به تأمین قطعات یدکی است"))
    truck = concept("کامیون توقیف شده چه می‌شود؟", "کامیون")
    assert truck.covered_by(text_terms("وسایل نقلیه باربری"))
    insurer = concept("حداقل سهامداران یک شرکت بیمه", "شرکت بیمه")
    assert insurer.covered_by(text_terms("سهامداران یک مؤسسه بیمه ایرانی"))


def test_a_conjunction_opening_a_condition_is_not_asked_about():
    labels = [c.label for c in query_concepts("چنانچه خسارت بیش از سقف تعهدات باشد، صندوق چه باید بکند؟")]
    assert "چنانچه" not in labels and "خسارت" in labels


def test_a_stated_cause_is_neither_a_why_question_nor_a_negated_one():
    from insurance_offline.question import question_shape

    def shape(question):
        return question_shape(question, query_concepts(question), frozenset())

    stated = shape("رفع توقیف خودرویی که به علت نداشتن بیمه‌نامه توقیف شده، منوط به چیست؟")
    assert not stated.needs_reason and not stated.negated
    assert shape("چرا خسارت من پرداخت نشد؟").needs_reason
    assert shape("به چه دلیل خسارت پرداخت نشد؟").needs_reason
    assert shape("کدام خسارت‌ها پرداخت نمی‌شود؟").negated
    # «منوط به …؟» is answered by «مستلزم …»
    depends = next(c for c in query_concepts("رفع توقیف منوط به چیست؟") if c.label == "منوط")
    assert depends.covered_by(text_terms("رفع هرگونه توقیف مستلزم احراز دارا بودن بیمه نامه است"))


def test_a_spoken_verb_the_evidence_never_uses_weighs_as_little_as_a_common_one():
    from insurance_offline.lexical import concept_weights

    concepts = query_concepts("یکی زده به ماشینم، برای خسارت مالی چه مدارکی لازم است؟")
    documents = [text_terms("برای دریافت خسارت مالی مدارک زیر لازم است"), text_terms("مدارک شناسایی راننده")]
    weights = dict(zip([c.label for c in concepts], concept_weights(concepts, documents), strict=True))
    # «مالی» is in one document of two, «زده» in none: the noun must weigh more than the spoken verb
    assert weights["زده"] < weights["مالی"]
    # an absent noun is still exactly what the evidence misses: it weighs the most
    nouns = query_concepts("خسارت زلزله چه مدارکی لازم دارد؟")
    noun_weights = dict(zip([c.label for c in nouns], concept_weights(nouns, documents), strict=True))
    assert noun_weights["زلزله"] == max(noun_weights.values())


def test_a_continuous_verb_is_a_verb_with_or_without_its_joiner():
    from insurance_offline.lexical import VERB_WEIGHT

    weights = {c.label: c.weight for c in query_concepts("اگر پلیس نگهم دارد ماشین را میبرن پارکینگ؟")}
    assert weights["میبرن"] == VERB_WEIGHT and weights["پارکینگ"] == 1.0
    # «می‌خورد» split at its joiner leaves «خورد», which alone would be read as a noun
    weights = {c.label: c.weight for c in query_concepts("هر سال چقدر تخفیف به من می‌خورد؟")}
    assert weights["خورد"] == VERB_WEIGHT and weights["تخفیف"] == 1.0
    # a common word that starts like one is not a verb: «میزان» is "amount"
    assert {c.label: c.weight for c in query_concepts("میزان خسارت چقدر است؟")}["میزان"] == 1.0


def test_a_broken_plural_meets_its_singular():
    car = concept("ماشینش توقیف شده، چه کنم؟", "ماشینش")
    assert car.covered_by(text_terms("ناشی از وسایل نقلیه"))  # «وسایل» is the plural of «وسیله»
    documents = concept("چه مدرکی لازم است؟", "مدرکی")
    assert documents.covered_by(text_terms("ارایه مدارک زیر"))
    # a plural that also means something else is left alone: «حقوق» (salary, law) is not «حق»
    assert "حق" not in text_terms("حقوق و مزایا")


def test_an_ordinal_adjective_meets_the_ordinal():
    # «در اولین مراجعه» (claims bylaw art. 5) is the customer's «مراجعه اول»; «اولین» is a stopword
    first = concept("در مراجعه اول به بیمه چه چیزی باید بگیرم؟", "اول")
    assert first.covered_by(text_terms("صندوق یا بیمه‌گر مکلفند در اولین مراجعه زیان‌دیده …"))
    assert text_terms("دومین بار") == text_terms("بار دوم")
    assert "اخر" in text_terms("آخرین خودرو")
    # a word that merely ends like one is left alone: «تضمین» is a guarantee, «تأمین» a provision
    assert "تضمین" in text_terms("دوره تضمین") and "تامین" in text_terms("تأمین قطعات")


def test_what_becomes_of_someone_is_answered_by_who_is_obliged_to_do_what():
    duty = concept("تکلیف مسافران چه می‌شود؟", "تکلیف")
    assert duty.covered_by(text_terms("شرکت مربوط موظفند نسبت به انتقال مسافران اقدام نمایند"))


def test_depreciation_is_one_notion_not_a_price_and_a_drop():
    depreciation = concept("طرف مقابل افت قیمت ماشینم را گرفته، سال بعد بیمه‌اش گران‌تر می‌شود؟", "افت قیمت")
    assert depreciation.covered_by(text_terms("هر گونه افزایش حق بیمه بابت پرداخت خسارت کسر قیمت وسیله نقلیه"))
    # «قیمت» alone is also the premium («حق بیمه») and «افت» any decrease: neither is depreciation
    assert not depreciation.covered_by(text_terms("کاهش حق بیمه و هزینه‌های صدور بیمه‌نامه"))


def test_insurers_split_at_the_joiner_are_not_expensive():
    # «بیمه‌گرانی» (insurers) split at its joiner used to give «گران» (expensive)
    expensive = concept("سال بعد حق بیمه گران‌تر می‌شود؟", "گران")
    for text in ("اطلاعات کلیه بیمه‌گرانی که در بیمه شخص ثالث فعالیت داشته‌اند", "بيمه‌گران موظفند"):
        assert not expensive.covered_by(text_terms(text))
        assert "گر" in text_terms(text)  # as «بیمه‌گر» is
    assert expensive.covered_by(text_terms("حق بیمه گران است"))
    assert expensive.covered_by(text_terms("حق بیمه‌گران‌تر شد"))


def test_a_plural_possessive_is_stripped_and_a_plural_in_an_meets_its_singular():
    from insurance_offline.lexical import terms_of

    assert terms_of("درمانمون کارشان") == ["درمان", "کار"]
    assert terms_of("سازمان ساختمان") == ["سازمان", "ساختمان"]  # words of their own
    # written after a half-space, the spoken possessive is a word of its own, and no notion
    assert [c.label for c in query_concepts("اداره‌مون با یه بیمه خصوصی قرارداد داره")][:3] == ["اداره", "بیمه", "خصوصی"]
    assert [c.label for c in query_concepts("ماشین‌تونو بیمه کردید؟")][:2] == ["ماشین", "بیمه"]
    villagers = concept("بیمه درمانمون مثل روستایی‌ها حساب می‌شود؟", "روستایی")
    assert villagers.covered_by(text_terms("عشایر کوچ رو از مزایای روستاییان برخوردارند."))


def test_spoken_adverbs_are_not_concepts():
    found = [c.label for c in query_concepts("ما هی کوچ می‌کنیم، اصلا بیمه داریم؟ حتما باید کارت داشته باشد؟")]
    assert not {"هی", "اصلا", "حتما"} & set(found)
    assert {"کوچ", "کارت"} <= set(found)


def test_an_absent_word_meets_the_evidence_word_of_its_arabic_root():
    from insurance_offline.lexical import ground_concepts

    documents = [text_terms("در صورت وجود نقص در مدارک ارایه شده، بیمه‌گر موظف است مراتب را ظرف سه روز اعلام کند.")]
    question = "اگر مدارک ناقص باشد بیمه‌گر ظرف چه مدتی باید اطلاع دهد؟"
    incomplete = next(c for c in ground_concepts(query_concepts(question), documents) if c.label == "ناقص")
    assert incomplete.covered_by(documents[0])  # «ناقص» and «نقص»: one root
    # a word the evidence has keeps its own meaning only
    kept = next(c for c in ground_concepts(query_concepts("نقص مدارک"), documents) if c.label == "نقص")
    assert kept.alternatives == (frozenset({"نقص"}),)


def test_a_word_the_evidence_has_also_meets_its_suffixed_derivation_elsewhere():
    from insurance_offline.lexical import ground_concepts

    documents = [
        text_terms("شرکت بیمه به پرداخت جزای نقدی محکوم شد"),
        text_terms("هرگاه ظرف پنج سال پس از محکومیت تخلفی از همان نوع ارتکاب یابد"),
    ]
    convicted = next(c for c in ground_concepts(query_concepts("شرکتی که قبلا محکوم شده"), documents) if c.label == "محکوم")
    assert convicted.covered_by(documents[1])
    # short words stay as they are: «سال» is not «سالم»
    year = next(c for c in ground_concepts(query_concepts("هر سال"), [text_terms("سال و سالم")]) if c.label == "سال")
    assert year.alternatives == (frozenset({"سال"}),)


def test_spoken_verbs_with_an_object_clitic_or_of_coming_and_bringing_are_verbs():
    from insurance_offline.colloquial import is_verb_form

    # «بگیرنش», «بخرمش»: a verb and its object; «بیاد», «بیارن», «میاره»: «آمدن» and «آوردن»
    assert all(is_verb_form(word) for word in ("بگیرنش", "بخرمش", "بیاد", "بیاید", "بیارن", "میاره", "نیاد"))
    # nouns that look like them are not: statement, between, ancestor, its damage
    assert not any(is_verb_form(word) for word in ("بیان", "میان", "نیا", "خسارتش", "قسطش"))


def test_a_verb_whose_stem_begins_with_alef_is_a_verb_written_or_spoken():
    """«بیندازد», «نیفتد» and the spoken «بندازه», «میندازن»; read as «بنداز» + «است» it met «بند» (a
    clause of the statute). «بیستم» (twentieth) is not «ایستادن»."""
    from insurance_offline.colloquial import formal_word, is_verb_form

    assert all(is_verb_form(word) for word in ("بیندازد", "بیاندازد", "نیفتد", "بندازه", "میندازن"))
    assert not any(is_verb_form(word) for word in ("بیستم", "بیست", "میزان"))
    assert formal_word("بندازه") == ["بندازه"]
    assert formal_word("چنده") == ["چند", "است"]  # the copula on a word that is not a verb
    weights = {c.label: c.weight for c in query_concepts("میخواد شرکت بیمه راه بندازه")}
    assert weights.get("بندازه", 0.0) < 1.0


def test_a_spoken_comparative_is_its_adjective():
    # «گرونتر میشه؟»: "does it get dearer", which a rule says as an increase («گران» -> «افزایش»)
    assert concept("سال بعد بیمه‌ام گرونتر میشه؟", "گران").covered_by(text_terms("افزایش حق بیمه مجاز نیست"))
    # comparatives that are words of their own stay
    assert [c.label for c in query_concepts("بیشتر از ده درصد")] == ["بیشتر", "ده", "درصد"]
    assert "دفتر" in [c.label for c in query_concepts("دفتر صندوق کجاست؟")]


def test_a_possessive_with_the_spoken_copula_is_the_noun():
    from insurance_offline.colloquial import formal_word

    assert formal_word("شرکتمونه") == ["شرکتمون", "است"]
    assert concept("ماشین به اسم شرکتمونه", "شرکتمون").covered_by(text_terms("شرکت"))


def test_a_lone_party_is_not_both_parties():
    """«ماشین طرفو» (the other guy's car) and «طرفین» (both parties of a dispute): the stemmer cuts the
    dual to its singular and grounding took the dual as a spelling of the word; neither may."""
    from insurance_offline.lexical import ground_concepts, terms_of

    assert "طرف" not in terms_of("اختلاف طرفین")
    question = "میتونم خودم پرونده خسارت ماشین طرفو تشکیل بدم؟"
    evidence = text_terms("در صورت توافق طرفین، خسارت بدون مراجعه به مرجع قضایی پرداخت می‌شود.")
    grounded = ground_concepts(query_concepts(question), [evidence])
    assert not any(c.covered_by(evidence) and c.covered_by(text_terms("طرفین")) for c in grounded)


def test_a_spoken_pronoun_with_the_object_marker_is_a_pronoun():
    """«منو» is «من را»: weighed as a word, it was the rarest notion of «پول خسارت منو نمیدن؟»."""
    from insurance_offline.colloquial import formal_word

    assert formal_word("منو") == ["من", "را"]
    assert formal_word("شمارو") == ["شما", "را"]  # not «شمار» (a count) and «را»
    assert formal_word("اونارو") == ["آن\u200cها", "را"]
    found = {c.label for c in query_concepts("اگه جریمه‌شون کنن دیگه پول خسارت منو نمیدن؟")}
    assert "منو" not in found
    assert {"جریمه", "پول", "خسارت"} <= found


def test_the_bare_past_of_a_light_verb_and_a_preposition_are_not_concepts():
    """«پلیس نگهم داشت», «یه پولی بابتش میگیره»: the notions are the police and the money; «داشت» and
    «بابت» (for) are what any sentence may say. «داد» stays a word: in «قرار داد» and «شکست داد» it
    is what a PersianQA question asks about, and as noise it let an unanswerable one be answered."""
    found = {c.label for c in query_concepts("پلیس راه نگهم داشت و بیمه‌م خسارت داد، بابتش پولی می‌گیره؟")}
    assert not {"داشت", "بابتش"} & found
    assert {"پلیس", "خسارت"} <= found


def test_both_of_us_is_not_treatment():
    """«هر دومون» is «دو» + «مون»; read as the spoken «دومان» it met «درمان» in a health law."""
    found = {c.label for c in query_concepts("هر دومون بیمه داریم، خسارت بدون پلیس پرداخت میشه؟")}
    assert not {"دومون", "دومان"} & found
    assert not any(c.covered_by(text_terms("هزینه درمان")) for c in query_concepts("هر دومون مقصریم"))


def test_years_a_higher_price_and_at_the_start_in_everyday_words():
    """«چند ساله» counts years as «هر سال» does; «بیشتر میشه» is the rule's «افزایش»; «اول کار» is the
    start, not work; «یه آقایی» is someone whom no rule names."""
    assert concept("چند ساله تصادف نداشتم", "ساله").covered_by(text_terms("به ازای هر سال پنج درصد"))
    assert concept("موقع تمدید قیمتش بیشتر میشه؟", "بیشتر").covered_by(text_terms("حق بیمه افزایش خواهد یافت"))
    start = concept("اول کار چقدرشو باید بدم؟", "اول کار")
    assert start.covered_by(text_terms("پنجاه درصد حق بیمه در قسط اول دریافت می‌شود"))
    assert not start.covered_by(text_terms("کار"))
    assert "آقایی" not in {c.label for c in query_concepts("یه آقایی اومده میگه نماینده بیمه است")}


def test_everyday_words_for_permission_companies_and_people():
    """«مشکلی نداره؟» asks whether a rule allows it; a company is a legal person; a managing director is
    a director; «بجای» (instead of) and «قبلا» (before) are not notions; «یه رفیقم» is someone."""
    assert concept("میخواد مدیرعامل بشه، مشکلی نداره؟", "مشکلی ندارد").covered_by(text_terms("... ممنوع است"))
    assert concept("ماشین به اسم شرکتمونه", "شرکتمون").covered_by(text_terms("هر شخص حقیقی یا حقوقی"))
    assert concept("میخواد مدیرعامل بشه", "مدیرعامل").covered_by(text_terms("مدیران مؤسسات بیمه"))
    assert concept("ماشین صفر تحویل گرفتم", "ماشین صفر").covered_by(text_terms("تحویل خودرو"))
    found = {c.label for c in query_concepts("یه رفیقم قبلا محکوم شده، بجای اون کی میشه؟")}
    assert not {"رفیقم", "قبلا", "بجای"} & found
    assert "محکوم" in found


def test_a_joined_non_prefix_is_read_as_written_apart():
    """«غیردولتی» is «غیر دولتی»: whether a fund is governmental is what the sentence says."""
    assert terms_of_text("نهاد عمومی غیردولتی") == terms_of_text("نهاد عمومی غیر دولتی")
    assert "غیر" not in terms_of_text("غیره") and "غیره" in terms_of_text("غیره")  # "etc." is a word


def terms_of_text(text):
    from insurance_offline.lexical import terms_of

    return set(terms_of(text))


def test_which_body_is_the_kind_of_answer_and_who_answers_for_it_is_obliged():
    """«بر عهده کدام دستگاه است؟» asks for a body, which the rule names («وزارت …»), and is answered by
    «… مکلف به …»; the injured and the heirs are the bylaws' «زیان‌دیده» and «وراثت»."""
    from insurance_offline.question import question_concepts

    question = "نظارت بر اجرای این قانون بر عهده کدام دستگاه است؟"
    evidence = text_terms("وزارت صنایع مکلف به نظارت بر اجرای این قانون است.")
    concepts = question_concepts(question, [evidence])
    assert "دستگاه" not in {c.label for c in concepts}
    assert all(c.covered_by(evidence) for c in concepts)
    assert concept("در صورت فوت مصدوم", "مصدوم").covered_by(text_terms("فوت زیان‌دیده"))
    assert concept("ورثه چه مدرکی بدهند؟", "ورثه").covered_by(text_terms("گواهی انحصار وراثت"))


def test_first_and_the_others_in_the_statutes_words():
    """«اول به ما میدن یا به بقیه طلبکارا؟» is answered by «… نسبت به سایر بستانکاران حق تقدم دارند»."""
    evidence = text_terms("بیمه‌گذاران نسبت به سایر بستانکاران حق تقدم دارند")
    question = "اول به ما میدن یا به بقیه طلبکارا؟"
    assert concept(question, "اول").covered_by(evidence)
    assert "بقیه" not in {c.label for c in query_concepts(question)}  # «سایر», a stopword


def test_a_spoken_comparative_with_its_copula_is_the_adjective():
    """«گرونتره» (it is dearer), «جلوترن» (they are ahead): the comparative's adjective and the copula."""
    from insurance_offline.colloquial import formal_word

    assert formal_word("گرونتره") == ["گران", "است"]
    assert formal_word("جلوترن") == ["جلو", "هستند"]
    assert formal_word("دفتره") == ["دفتر", "است"]  # «دفتر» is no comparative


def test_a_minimum_is_what_a_rule_says_it_cannot_be_less_than():
    rule = text_terms("دوره تضمین نمی‌تواند کمتر از دو سال باشد.")
    assert concept("گارانتیش حداقل چقدر باید باشه؟", "حداقل").covered_by(rule)
    # a bound says what form the answer takes: a rule that states the figure otherwise still answers
    assert not concept("گارانتیش حداقل چقدر باید باشه؟", "حداقل").key
    minimum = next(c for c in query_concepts("What is the minimum warranty period?") if c.label == "minimum")
    assert minimum.covered_by(rule)


def test_a_plural_written_joined_is_its_noun():
    """Statutes and older wordings join «ها» to the noun («سیستمهای جانبی», «شرکتها»): the same noun a
    customer writes; a word that only ends like a plural («تنها») is left alone."""
    assert "سیستم" in text_terms("نصب قطعات و سیستمهای جانبی")
    assert "شرکت" in text_terms("شرکتها موظفند")
    assert {"بیمه", "گر"} <= text_terms("بیمه‌گرها موظفند")
    assert "دستگاه" in text_terms("دستگاههای اجرایی")
    assert "تن" not in text_terms("تنها راه")
    assert "این" not in text_terms("اینها")


def test_leading_to_joins_two_notions_and_is_none_itself():
    """«حوادث منجر به فوت»: the documents of a death claim are listed under a rule that never says «منجر»."""
    labels = {c.label for c in query_concepts("برای دریافت خسارت بدنی در حوادث منجر به فوت چه مدارکی لازم است؟")}
    assert "منجر" not in labels and "فوت" in labels


def test_an_ezafe_after_a_final_alef_is_not_the_spoken_plural():
    """«اعطای تخفیف» is the ezafe of «اعطا», not «اعط» + the spoken plural «ای» as in «قسطای باقی».
    Read as a plural, «اعط‌های» was the question's rarest word, in no chunk."""
    from insurance_offline.colloquial import formal_word

    assert formal_word("اعطای") == ["اعطای"]
    assert formal_word("امضای") == ["امضای"]
    assert formal_word("قسطای") == ["قسط\u200cهای"]
    grant = concept("برای اعطای تخفیف بیش از چه میزان مجوز لازم است؟", "اعطای")
    assert grant.covered_by(text_terms("اعطای تخفیف به رانندگان"))


def test_an_arabic_adverb_without_its_tanwin_is_not_a_plural():
    """«نقداً» typed «نقدا» (in cash) is not «نقد‌ها»; «اونجا» is «آنجا», not «اونج» + a plural."""
    from insurance_offline.colloquial import formal_word

    assert formal_word("نقدا") == ["نقدا"]
    assert formal_word("مستقیما") == ["مستقیما"]
    assert formal_word("بعدا") == ["بعدا"]
    assert formal_word("اونجا") == ["آنجا"]
    assert formal_word("مسافرا") == ["مسافر\u200cها"]  # the spoken plural is still read



def test_what_is_paid_in_cash_of_an_installment_plan_is_paid_at_issue():
    """«اول کار چقدرشو باید نقد بدم؟» of an installment plan is answered by the share paid «همزمان با
    صدور بیمه‌نامه»; the bylaw never says «نقد»."""
    paid = concept("بیمه رو قسطی بخرم، اول کار چقدرشو باید نقد بدم؟", "نقد")
    assert paid.covered_by(text_terms("حداقل پنجاه درصد مبلغ حق بیمه همزمان با صدور بیمه‌نامه دریافت گردد"))
    assert not paid.covered_by(text_terms("صدور بیمه‌نامه"))
