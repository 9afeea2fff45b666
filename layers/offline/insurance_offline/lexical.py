"""Lexical machinery shared by the local roles: query concepts, a small bilingual glossary, coverage.

The corpus is Persian; users also write English, and colloquial Persian ("ماشین" for "خودرو").
A query is turned into *concepts*: each concept is one thing the user asked about, with the
alternative term sets that express it (an English word and its Persian renderings, or a colloquial
Persian word and the formal one). A concept is covered by a text when every stem of one of its
alternatives occurs in the text. Coverage of a query by a text = the weighted share of its concepts
covered. Question words ("چقدر", "how much") and requests ("لطفا بگید") are not concepts: no
document "covers" them.

The glossary is deliberately small and domain-specific: it is the offline provider's stand-in for the
translation a language model does, so that an English question can be matched against Persian
evidence. It does not pretend to translate anything else.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache

from insurance_offline.colloquial import (
    base_form,
    continues_verb,
    formalize,
    is_verb_form,
    strip_joined_plural,
    strip_plural_possessive,
)
from insurance_offline.glossary import ENGLISH_NOISE, GENERIC_NOTIONS, GLOSSARY, LIGHT_NOTIONS
from insurance_agent.text import normalize, numbers_in, tokens
from insurance_text import stemmer, stopwords

# The English -> Persian glossary (GLOSSARY) and its generic and light terms live in insurance_offline/glossary.py.

# Everyday Persian words -> the words of policies, bylaws and statutes for the same thing. Added to
# the search query (contextualize) as well as matched as alternatives by the lexical roles.
REGISTER: dict[str, tuple[str, ...]] = {
    "ماشین": ("خودرو", "وسیله نقلیه"),
    "اتومبیل": ("خودرو", "وسیله نقلیه"),
    "موتور": ("موتورسیکلت", "وسیله نقلیه"),
    "سقف": ("حداکثر",),
    "حداکثر": ("سقف",),
    # a minimum is what a rule says something cannot be less than («نمی‌تواند کمتر از دو سال باشد»)
    "حداقل": ("کمتر",),
    "قسط": ("اقساط", "تقسیط"),
    "قسطی": ("اقساط", "تقسیط"),
    # what is paid up front of an installment plan: the bylaws' «همزمان با صدور بیمه‌نامه»
    "نقد": ("همزمان با صدور",),
    "اقساط": ("قسط", "تقسیط"),
    "صاحب": ("مالک",),
    "ضرر": ("خسارت", "زیان"),
    "مریض": ("بیمار",),
    "مریضی": ("بیماری",),
    "کشته": ("فوت",),
    "زخمی": ("مصدوم", "صدمه"),
    "طلب": ("مطالبات",),
    "طلبکار": ("بستانکار", "مطالبات"),
    "کارمند": ("کارکنان", "مستخدم"),
    "شرکت بیمه": ("بیمه گر", "مؤسسه بیمه"),
    "بچه": ("فرزند", "اولاد", "خانواده"),
    "زن": ("همسر", "خانواده"),
    "خانم": ("همسر",),
    "شوهر": ("همسر",),
    "تصادف": ("حادثه",),
    "دزدی": ("سرقت",),
    "خونه": ("منزل", "منازل", "ساختمان"),
    # motor claims: the parties and the kinds of loss as bylaws name them
    "مقصر": ("مسبب",),
    "جانی": ("بدنی",),
    "خسارت دیده": ("زیان دیده",),
    "طرف مقابل": ("زیان دیده", "شخص ثالث"),
    "گارانتی": ("ضمانت", "تضمین"),
    # the car consumer law names the maker and the seller by their role
    "خودروساز": ("تولید کننده", "عرضه کننده"),
    "کارخانه": ("تولید کننده", "عرضه کننده"),
    # depreciation of a repaired car: one notion, never "price" (the premium) and "drop" apart
    "افت قیمت": ("کسر قیمت", "افت ارزش", "کاهش ارزش"),
    "افت ماشین": ("کسر قیمت",),
    "افت خودرو": ("کسر قیمت",),
    "اتوبوس": ("حمل مسافر", "وسیله نقلیه عمومی"),
    "مینی بوس": ("حمل مسافر", "وسیله نقلیه عمومی"),
    "تاکسی": ("حمل مسافر", "وسیله نقلیه عمومی"),
    "مسافربری": ("حمل مسافر",),
    "مسافرکش": ("حمل مسافر",),
    "کامیون": ("باربری", "حمل بار"),
    "تریلی": ("باربری", "حمل بار"),
    "پلیس": ("راهنمایی و رانندگی", "نیروی انتظامی"),
    "راهور": ("راهنمایی و رانندگی",),
    "جریمه": ("مجازات", "جزای نقدی"),
    "دیرکرد": ("تأخیر",),
    # dependants: «زن و بچه‌م» are the insured's family in a health law
    "عائله": ("خانواده", "افراد تحت تکفل"),
    # prices and amounts going up or down
    "گران": ("افزایش",),
    "گرون": ("افزایش",),
    "ارزان": ("کاهش",),
    "ارزون": ("کاهش",),
    "افت": ("کسر", "کاهش"),
    # «مشکلی نداره؟», «اشکال نداره؟» (is it all right?): whether a rule allows it
    "مشکلی ندارد": ("مجاز", "ممنوع", "بلامانع"),
    "اشکالی ندارد": ("مجاز", "ممنوع", "بلامانع"),
    "اشکال ندارد": ("مجاز", "ممنوع", "بلامانع"),
    # a new car («ماشین صفر») is a car; a car that took a knock is damaged
    "ماشین صفر": ("خودرو", "خودرو نو"),
    "خودرو صفر": ("خودرو", "خودرو نو"),
    "ضربه": ("آسیب", "خسارت"),
    "بیشتر": ("افزایش", "بیش"),
    "کمتر": ("کاهش",),
    # «چند ساله تصادف نداشتم» (for some years): the years a rule counts («هر سال»)
    "ساله": ("سال",),
    # «اول کار» (at the start), not work
    "اول کار": ("ابتدا", "اول"),
    # insurers as companies
    "شرکت": ("مؤسسه", "شخص حقوقی"),
    "مدیرعامل": ("مدیر", "مدیران"),
    # who answers for it: «بر عهده کدام دستگاه است» is answered by «… مکلف به …»
    "عهده": ("مکلف", "مسئول", "وظیفه"),
    # the injured and the heirs as the bylaws name them
    "مصدوم": ("زیان دیده", "مجروح"),
    "ورثه": ("وارث", "وراثت"),
    "سهامدار": ("صاحبان سهام", "سهام"),
    "ورشکست": ("ورشکستگی", "انحلال"),
    "ورشکسته": ("ورشکستگی", "انحلال"),
    "دادگاه": ("مراجع قضایی", "محاکم"),
    "بی بیمه": ("فاقد بیمه نامه",),
    "پارکینگ": ("توقیف",),
    "کروکی": ("گزارش کارشناس",),
    "افسر": ("کارشناس راهنمایی و رانندگی", "مأمور"),
    "خلافی": ("تخلف",),
    "پلاک": ("شماره انتظامی",),
    "مسافر": ("سرنشین",),
    "فروختن": ("انتقال مالکیت", "فروش"),
    "فروختم": ("انتقال مالکیت", "فروش"),
    "خریدار": ("انتقال گیرنده", "خریدار"),
    "فروشنده": ("انتقال دهنده", "فروشنده"),
    "بی خسارتی": ("عدم خسارت",),
    # a request to an authority: «درخواست» in speech, «تقاضا» in the statutes as often
    "درخواست": ("تقاضا",),
    "تقاضا": ("درخواست",),
    # paying into an account: «پول رو بریزه به حساب» is «واریز»
    "بریزه": ("واریز",),
    "بریزن": ("واریز",),
    "بریزم": ("واریز",),
    "ریختن": ("واریز",),
    "ریخت": ("واریز",),
    # a fault in a car: «ایراد» in speech, «عیب» and «نقص» in the consumer law
    "ایراد": ("عیب", "نقص"),
    # «اجازه دارن؟»: whether a rule allows it, which it says as «مجاز» or forbids as «ممنوع»
    "اجازه": ("مجاز", "ممنوع", "بلامانع"),
    # stating something in a policy: «درج»، «ذکر» and «قید» in statutes
    "درج": ("ذکر", "قید"),
    "ذکر": ("درج", "قید"),
    # deaths and heirs
    "مرده": ("فوت", "متوفی"),
    "فوتی": ("فوت",),
    "بازمانده": ("ورثه", "وراث"),
    "بازماندگان": ("ورثه", "وراث"),
    "خون بها": ("دیه",),
    # health care in everyday words
    "دوا": ("دارو",),
    "دندون": ("دندان",),
    "مغازه دار": ("مشاغل آزاد", "کسبه"),
    "کاسب": ("مشاغل آزاد", "کسبه"),
    "آزادکار": ("مشاغل آزاد",),
    # money back, refusals, cancellations
    "پس دادن": ("استرداد", "بازپرداخت"),
    "برگردوندن": ("استرداد",),
    "کنسل": ("فسخ", "لغو"),
    "کنسلی": ("فسخ", "لغو"),
    "رد کردن": ("رد", "عدم پذیرش"),
    # agents, licences and lawyers
    "مجوز": ("پروانه",),
    "کمیسیون": ("کارمزد",),
    "پورسانت": ("کارمزد",),
    "وکیل": ("نماینده قانونی", "وکیل"),
    # everyday words for order, time and the others
    "اول": ("مقدم", "اولویت", "تقدم"),
    "موقع": ("زمان",),
    # spoken verbs of a claim: «خسارت گرفتن» is «دریافت خسارت», «زده به ماشینم» an accident
    "گرفتن": ("دریافت",),
    "زده": ("حادثه", "تصادف"),
    "نفر": ("شخص", "اشخاص"),
}

# Bounds of a quantity: «حداقل» is what a rule says it cannot be less than, «حداکثر» what it cannot
# exceed; a sentence that states the figure another way still answers.
BOUNDS = frozenset({"حداقل", "حداکثر"})

# Colloquial or alternative Persian words -> the words the documents use.
PERSIAN_SYNONYMS: dict[str, tuple[str, ...]] = {
    **REGISTER,
    "پسر": ("فرزند",),
    "دختر": ("فرزند",),
    "دکتر": ("پزشک",),
    "قیمت": ("حق بیمه", "هزینه"),
    "هزینه": ("حق بیمه", "قیمت"),
    "پول": ("مبلغ", "هزینه"),
    # the fields of a policy record (account evidence): «بیمه‌ام کی تموم میشه؟»
    "تمام": ("پایان", "انقضا"),
    "تموم": ("پایان", "انقضا"),
    "انقضا": ("پایان",),
    "منقضی": ("پایان", "انقضا"),
    "اعتبار": ("پایان", "وضعیت"),
    "فعال": ("وضعیت",),
    "فعاله": ("وضعیت",),
    "فسخ": ("لغو", "ابطال"),
    "لغو": ("فسخ", "ابطال"),
    "مسافرت": ("سفر",),
    "خانه": ("منزل", "منازل", "ساختمان"),
    # general Persian: words the written language and everyday speech use for the same thing
    "بوجود": ("وجود",),
    "شروع": ("آغاز",),
    "آغاز": ("شروع",),
    "پایان": ("اتمام", "خاتمه"),
    "تاسیس": ("بنیان", "ایجاد"),
    "ایجاد": ("تاسیس", "بنیان"),
    "فوت": ("درگذشت", "مرگ"),
    "درگذشت": ("فوت", "مرگ"),
    "مشهور": ("معروف",),
    "معروف": ("مشهور",),
    # «تکلیف … چیست؟», «وظیفه بیمه‌گر»: answered by who «موظف است» or «مکلف است» to do what
    "تکلیف": ("موظف", "موظفند", "مکلف", "مکلفند", "وظیفه"),
    "وظیفه": ("موظف", "موظفند", "مکلف", "مکلفند", "تکلیف"),
    "علت": ("دلیل", "سبب"),
    "دلیل": ("علت", "سبب"),
    # what something depends on: «منوط به چیست؟» is answered by «مستلزم …», «موکول به …»
    "منوط": ("مستلزم", "موکول", "مشروط"),
    "مشروط": ("منوط", "مستلزم", "موکول"),
    # statutes say «وسیله نقلیه» where policies and people say «خودرو»
    "خودرو": ("وسیله نقلیه",),
}

# Words that name a line of insurance or a product.
_LINE_WORDS = (
    "بدنه ثالث درمان تکمیلی عمر آتش سوزی مسافرتی زلزله سیل مسئولیت موتورسیکلت خودرو ماشین حوادث "
    "پزشکان دندانپزشکی باربری کشتی حیوانات سرقت سلامت "
    "body third party health medical supplementary life fire travel earthquake flood liability motorcycle "
    "car vehicle accident dental cargo marine pet theft"
)

# Question words, requests and fillers: never something a document answers.
_NOISE_WORDS = (
    "چقدر چقدره چقد چنده چیه چیا کدومه چطور چطوری چگونه چیست چی چه چرا کجا کدام کدوم کدومش "
    "آیا ایا چند چندتا میشه می شود "
    "بگید بگویید بگو بگین توضیح بدید بدهید میخواستم میخوام می خواهم بدونم بدانم لطفا لطفاً سوال "
    "سوالی بپرسم بپرسم داره دارد داری دارم هست هستش یعنی مثلا حالا خب خوب سلام ممنون مرسی "
    "اون آن این همین همون یکی اونو اینو اینا اونا "
    "how what which when where why whether tell please explain need want know could would like question "
    "wonder ask asking also then hi hello thanks thank just about tell me you one ones it that this those these "
    "same else again does get got need needed required usually typically generally normally take takes "
    # light verbs and auxiliaries (colloquial and formal): they never carry what is asked
    "میده میدن میدهد میدهند می دهد می دهند میکنه میکنن میکند میکنند می کند می کنند میشه میشن میشود "
    "میشوند می شود می شوند داره دارن دارند هستن هستند بود بوده شد شده شدن کرد کرده کنم کنه کنید کنیم "
    "بکنم بدم بده بدید بدهید بگیرم بگیره گرفت گرفته باید بشه شود کردن "
    # the bare past of the light verbs («نگهم داشت», «ضربه زد»): the notion is the noun. Not «داد»:
    # «قرار داد» is also «قرارداد» (a contract), and as noise it let an unanswerable question be answered
    "داشت زد رفت آمد "
    # colloquial question words and copulas («کجاست», «چجوریه», «کیه»), question frames («نام ببرید»)
    "کجاست کجای کجایی کجان چجوری چجوریه جوری چطوریه کیه کیا کیست کیستند چندمین چندم چندمی راجب راجع درباره "
    "نام اسم اسمش اسمشون ببرید بنویسید بفرمایید بگین ان اند هستن بودن name named called "
    "نیست نیستش نیستن نیستند کنی بکنی نکنی باشی نباشی دهی بدهی شوی بشوی "
    "اومد اومده میاد میان شه بشه تونه میتونه بتونه کنن چه‌صورت صورت "
    # spoken adverbs and intensifiers («هی کوچ می‌کنیم», «اصلا تصادف نداشتم», «حتما باید»)
    "هی اصلا اصلاً حتما حتماً قبلا قبلاً واقعا واقعاً دقیقا دقیقاً کلا کلاً همش تقریبا تقریباً معلوم معلومه همچین "
    # reported speech («پلیس گفت …», «شنیدم …»): who said it, not what is asked
    "گفت گفته گفتن گفتند گفتن میگه میگن میگفت "
    # «یه آقایی اومده …», «یارو زد و رفت»: someone, whom no rule names
    "یارو آقایی آقاهه رفیق رفیقم رفیقمون "
    # «ماشین طرف», «بیمه طرف», «طرف مقصر»: the other party, whom the rules name by role («زیان‌دیده»,
    # «مسبب حادثه»); the role word, when said, carries it («طرف مقابل» is a phrase of its own)
    "طرف "
    # «بقیه» (the rest) is the statutes' «سایر», a stopword
    "بقیه "
    # «اینم جزو گارانتیه؟»: whether it is included, which the rule says by naming it
    "جزو جزء "
    # «امکان‌پذیر است؟»: "is it possible", split at its joiner
    "امکان‌پذیر امکانپذیر پذیر "
    # conjunctions that open a condition («چنانچه خسارت … باشد»): the condition's words count, not them
    "چنانچه هرگاه درصورتیکه درصورتی‌که "
    # «بر اساس چه …؟», «از لحاظ»: compound prepositions, not things asked about
    "اساس لحاظ بابت بابتش بجای بجاش "
    # «حوادث منجر به فوت»: "leading to" joins two notions and is none itself
    "منجر"
)


# «بیمه‌گران» (insurers) split at its joiner is «بیمه» and «گران», which is also "expensive": the
# agentive plural is the agentive «گر», as in «بیمه‌گر». Written with a space the two cannot be told
# apart («حق بیمه گران است»), so only the joined forms are read so.
_INSURERS = re.compile(r"(بیمه|بيمه)\u200c?گر(?:ان|ها)(?:ی)?(?![\w\u200c])")
# «غیردولتی», «غیرمجاز» written joined are read as written apart («غیر دولتی»): the sentence speaks of
# the same notion, and a question whether a fund is governmental is answered by «غیردولتی».
_NON = re.compile(r"(?<![\w\u200c])(غیر)\u200c?(?=[\u0600-\u06ff]{3,})")


def terms_of(text: str) -> list[str]:
    """Lemma-like terms of `text`: its words in written form (insurance_offline/colloquial.py), stemmed twice, numbers whole.

    The Persian stemmer strips one suffix per call, so "قیمتش" gives "قیمت"; a second pass makes
    inflected and plain forms meet. A stem is only taken when it is a more common word than the
    word itself: a suffix-stripper also turns «خانم» into «خان» and «قیمت» into «قیم».
    """
    stop = stopwords()
    text = _NON.sub(r"\1 ", _INSURERS.sub(r"\1 گر", text))
    result = [
        _lemma(token)
        for token in (ORDINAL_ADJECTIVES.get(word, word) for word in tokens(formalize(text)))
        if token not in stop and len(token) > 1 and not token.isdigit()
    ]
    # numbers are matched whole: "10" must not match "10,000"
    result.extend(sorted(numbers_in(text)))
    return result


# The ordinal adjective names the same position as the ordinal: «در اولین مراجعه» is the customer's
# «مراجعه اول», «آخرین خودرو» the «خودروی آخر». The stopword list drops «اولین» and «آخرین» and the
# stemmer leaves «دومین» whole, so neither met the ordinal a question uses.
ORDINAL_ADJECTIVES: dict[str, str] = {
    "اولین": "اول",
    "نخستین": "اول",
    "آخرین": "آخر",
    **{f"{ordinal}ین": ordinal for ordinal in ("دوم", "سوم", "چهارم", "پنجم", "ششم", "هفتم", "هشتم", "نهم", "دهم")},
}

# Arabic broken plurals of legal and insurance Persian: no suffix to strip, so a stemmer leaves
# «وسایل» and «وسیله» apart. Only plurals whose singular means the same thing («حقوق» is also salary
# and law, «اعمال» also "to apply": left alone).
BROKEN_PLURALS: dict[str, str] = {
    "وسایل": "وسیله",
    "وسائل": "وسیله",
    "مدارک": "مدرک",
    "حوادث": "حادثه",
    "سوانح": "سانحه",
    "اسناد": "سند",
    "شرایط": "شرط",
    "شرائط": "شرط",
    "مراجع": "مرجع",
    "موارد": "مورد",
    "اشخاص": "شخص",
    "افراد": "فرد",
    "اموال": "مال",
    "وجوه": "وجه",
    "ضوابط": "ضابطه",
    "امور": "امر",
    "مواد": "ماده",
    "قوانین": "قانون",
    "اعضا": "عضو",
    "اعضای": "عضو",
    "اقساط": "قسط",
    "مبالغ": "مبلغ",
    "منابع": "منبع",
    "مصارف": "مصرف",
    "ورثه": "وارث",
    "وراث": "وارث",
    "اطفال": "طفل",
    "امراض": "مرض",
    "جرایم": "جرم",
    "جرائم": "جرم",
    "شعب": "شعبه",
    "مصادیق": "مصداق",
    "ادوار": "دوره",
}

# Arabic duals the stemmer cuts to their singular, though they name something else: «طرفین» (both
# parties of a contract or a dispute) is not the «طرف» a customer means by "the other guy".
KEPT_WHOLE = frozenset({"طرفین"})


@lru_cache(maxsize=65536)
def _lemma(token: str) -> str:
    stem = stemmer().stem_word
    if token.isascii():
        return stem(token)
    if token in BROKEN_PLURALS:
        return _deepen(BROKEN_PLURALS[token])
    if token in KEPT_WHOLE:
        return token
    noun = strip_joined_plural(token)
    token = strip_plural_possessive(token if noun in stopwords() else noun)
    first = base_form(token, stem(token))
    return _deepen(first)


def _deepen(term: str) -> str:
    """The second stemming pass of a Persian stem, and alef-madda folded: users write «اشیل» for «آشیل»."""
    if term.isascii():
        return term
    deeper = base_form(term, stemmer().stem_word(term))
    return (deeper if len(deeper) >= 3 else term).replace("آ", "ا")


@lru_cache(maxsize=1)
def line_terms() -> frozenset[str]:
    """Stems of the words that name a line of insurance ("بدنه", "travel", ...)."""
    return frozenset(terms_of(_LINE_WORDS))


@lru_cache(maxsize=1)
def noise_terms() -> frozenset[str]:
    # Stopwords included: a stopword's stem («کجا» of «کجای») is not a stopword itself.
    stem = stemmer().stem_word
    words = f"{_NOISE_WORDS} {ENGLISH_NOISE}"
    return frozenset(terms_of(words)) | {_deepen(stem(token)) for token in tokens(words)}


@lru_cache(maxsize=1)
def _generic_stems() -> frozenset[str]:
    return frozenset(term for word in GENERIC_NOTIONS if not word.isascii() for term in terms_of(word))


def generic_stems() -> frozenset[str]:
    """Stems of the generic notions (GENERIC_NOTIONS), English and Persian: words too common in
    policies to tell one of their sentences from another."""
    return _generic_all()


@lru_cache(maxsize=1)
def _generic_all() -> frozenset[str]:
    stem = stemmer().stem_word
    english = frozenset(stem(word) for word in GENERIC_NOTIONS if word.isascii())
    return _generic_stems() | english


def _stems(phrase: str) -> frozenset[str]:
    terms = [term for term in terms_of(phrase) if term not in noise_terms()]
    return frozenset(terms)


@dataclass(frozen=True)
class GlossaryEntry:
    """What the glossary says of an English term: its Persian renderings (the documents' words, most
    common first), whether it is generic (never key) and whether it is light (weighs as a verb)."""

    phrases: tuple[str, ...]
    generic: bool
    light: bool


def _english_words(text: str) -> list[str]:
    """The Latin words of `text` in reading order, hyphenated words split ("third-party")."""
    return [part for word in re.findall(r"[a-z]+(?:['-][a-z]+)*", normalize(text)) for part in re.split(r"['-]", word) if part]


def _inflections(word: str) -> set[str]:
    """`word` and its plural and -ed/-ing forms, for an exact lookup before the stemmer's."""
    forms = {word, f"{word}s", f"{word}es"}
    if word.endswith("y") and len(word) > 3:
        forms.add(f"{word[:-1]}ies")
    if word.endswith("e"):
        forms |= {f"{word}d", f"{word[:-1]}ing"}
    else:
        forms |= {f"{word}ed", f"{word}ing"}
    return forms


def _merge(index: dict, key: tuple[str, ...], english: str, phrases: tuple[str, ...]) -> None:
    generic, light = english in GENERIC_NOTIONS, english in LIGHT_NOTIONS
    known = index.get(key)
    if known is not None:
        # Two terms meeting on one key ("insurer", "insurance" -> "insur"): either rendering will do,
        # and the key is only generic or light when both are.
        phrases = tuple(dict.fromkeys(known.phrases + phrases))
        generic, light = known.generic and generic, known.light and light
    index[key] = GlossaryEntry(phrases, generic, light)


@lru_cache(maxsize=1)
def _glossary_indexes() -> tuple[dict[tuple[str, ...], GlossaryEntry], dict[tuple[str, ...], GlossaryEntry]]:
    """(surface index, stem index) of the glossary. A word is looked up as written first (with the
    plural and -ed/-ing forms of each entry), then by its Snowball stem: "insurer" and "insurance"
    share the stem "insur" but are different words, with different renderings."""
    stem = stemmer().stem_word
    surface: dict[tuple[str, ...], GlossaryEntry] = {}
    stems: dict[tuple[str, ...], GlossaryEntry] = {}
    exact = {tuple(_english_words(english)) for english in GLOSSARY}
    for english, persian in GLOSSARY.items():
        words = _english_words(english)
        if not words:
            continue
        phrases = tuple(phrase for phrase in persian if _stems(phrase))
        _merge(surface, tuple(words), english, phrases)
        for form in _inflections(words[-1]):
            key = (*words[:-1], form)
            if key not in exact:  # "policies" is its own entry, never "policy" + s
                _merge(surface, key, english, phrases)
        _merge(stems, tuple(stem(word) for word in words), english, phrases)
    return surface, stems


# The irregular past forms of verbs ("took back", "was given"): a stemmer leaves them apart from
# the verb, so they are looked up as the verb.
_IRREGULAR_PAST: dict[str, str] = {
    "took": "take", "taken": "take", "gave": "give", "given": "give", "held": "hold",
    "chose": "choose", "chosen": "choose", "shown": "show", "drove": "drive", "driven": "drive",
    "wrote": "write", "broke": "break", "broken": "break", "lost": "lose", "left": "leave",
    "kept": "keep", "sent": "send", "spent": "spend", "brought": "bring", "told": "tell",
    "found": "find", "began": "begin", "begun": "begin", "fell": "fall", "fallen": "fall",
    "struck": "strike", "stole": "steal", "signed": "sign", "withdrew": "withdraw", "withdrawn": "withdraw",
}  # fmt: skip


def glossary_entry(words: Sequence[str]) -> GlossaryEntry | None:
    """The glossary's entry for these English words (as written, else by their stems, else with an
    irregular past form read as its verb), if any."""
    surface, stems = _glossary_indexes()
    key = tuple(word.lower() for word in words)
    entry = surface.get(key)
    if entry is None:
        entry = stems.get(tuple(stemmer().stem_word(word) for word in key))
    if entry is None and any(word in _IRREGULAR_PAST for word in key):
        return glossary_entry(tuple(_IRREGULAR_PAST.get(word, word) for word in key))
    return entry


@lru_cache(maxsize=1)
def _longest_term() -> int:
    return max(len(key) for key in _glossary_indexes()[0])


@lru_cache(maxsize=1)
def _synonym_index() -> dict[str, tuple[frozenset[str], ...]]:
    index: dict[str, tuple[frozenset[str], ...]] = {}
    for word, alternatives in PERSIAN_SYNONYMS.items():
        keys = _stems(word)
        if len(keys) != 1 or len(normalize(word).split()) != 1:
            continue  # a phrase («شرکت بیمه») is expanded whole by register_expansion, never per word
        for key in keys:
            index[key] = tuple(stems for stems in (_stems(phrase) for phrase in alternatives) if stems)
    return index


@dataclass(frozen=True)
class Concept:
    """One thing the query asks about and the stem sets that express it (any one suffices)."""

    label: str
    alternatives: tuple[frozenset[str], ...]
    #: A specific domain notion the glossary knows ("earthquake", "deductible", «ماشین»): when no
    #: piece of evidence mentions it, the evidence does not address the question. Generic words
    #: ("cover", "cost", "policy") are never key: documents say them in too many ways.
    key: bool = False

    #: How much the concept counts in coverage: a verb form («زده», «گرفتن», «می‌توانند») says less
    #: about what is asked than a noun, and spoken questions are full of them.
    weight: float = 1.0

    def covered_by(self, terms: set[str] | frozenset[str]) -> bool:
        return any(alternative <= terms for alternative in self.alternatives)

    @property
    def stems(self) -> frozenset[str]:
        return frozenset().union(*self.alternatives)


@dataclass(frozen=True)
class EnglishSpan:
    """A run of English words of a query: a glossary term with its renderings, or one unknown word."""

    label: str
    alternatives: tuple[frozenset[str], ...]
    phrases: tuple[str, ...] = ()
    generic: bool = False
    light: bool = False


def _english_spans(text: str) -> list[EnglishSpan]:
    """Glossary terms and other content words among the Latin-script words of `text`, longest
    phrase first, in reading order. A known term's alternatives are its English stems and the stems
    of each Persian rendering; an unknown word's only alternative is its own stem (no Persian text
    covers it). Question words, auxiliaries and stopwords are no span."""
    stem = stemmer().stem_word
    stop = stopwords()
    flat = _english_words(text)
    longest = _longest_term()
    found: list[EnglishSpan] = []
    position = 0
    while position < len(flat):
        for size in range(min(longest, len(flat) - position), 0, -1):
            words = flat[position : position + size]
            entry = glossary_entry(words)
            if entry is not None and not (size == 1 and words[0] in stop):
                if not entry.phrases:  # its Persian words are all stopwords: nothing can stand for it
                    position += size
                    break
                english = frozenset(stem(word) for word in words if word not in stop) or frozenset(map(stem, words))
                alternatives = (english, *(_stems(phrase) for phrase in entry.phrases))
                found.append(EnglishSpan(" ".join(words), alternatives, entry.phrases, entry.generic, entry.light))
                position += size
                break
        else:
            word = flat[position]
            term = stem(word)
            verb = stem(_IRREGULAR_PAST.get(word, word))  # "found" as "find", a noise word
            if word not in stop and len(word) > 1 and term not in noise_terms() and verb not in noise_terms():
                found.append(EnglishSpan(word, (frozenset([term]),)))
            position += 1
    return found


_BRACKETED = re.compile(r"\s*\[[^\[\]]*\]\s*$")


def without_renderings(query: str) -> str:
    """`query` without contextualize's bracketed tail of renderings and synonyms for retrieval."""
    return _BRACKETED.sub("", query)


# Compound prepositions and conjunctions («در صورتی که», «به دلیل», «در مورد», «از طریق»): they
# frame what is asked and are never it. Left in, «صورتی» and «دلیل» became rare and heavy concepts
# that no answer repeats.
_FUNCTION_PHRASES = re.compile(
    r"(?<!\w)(?:در[\s\u200c]+صورتی[\s\u200c]*که|در[\s\u200c]+صورت|"
    r"به[\s\u200c]+(?:دلیل|علت|خاطر|سبب|واسطه|منظور|موجب|عنوان)|بخاطر|از[\s\u200c]+طریق|"
    r"در[\s\u200c]+(?:مورد|خصوص|طول|حالی[\s\u200c]*که|رابطه[\s\u200c]+با)|با[\s\u200c]+توجه[\s\u200c]+به)(?!\w)"
)
VERB_WEIGHT = 0.3


def query_concepts(query: str) -> list[Concept]:
    """The concepts a query asks about (see the module docstring), without duplicates.

    A bracketed tail (contextualize's renderings and synonyms, for retrieval) adds no concept: those
    words are already alternatives of the concepts they render."""
    query = _FUNCTION_PHRASES.sub(" ", without_renderings(query))
    concepts: list[Concept] = []
    seen_stems: set[str] = set()
    for span in _english_spans(query):
        known = len(span.alternatives) > 1
        concept = Concept(
            span.label,
            span.alternatives,
            key=known and not (span.generic or span.light),
            weight=VERB_WEIGHT if span.light else 1.0,
        )
        if concept.stems & seen_stems and not known:
            continue
        concepts.append(concept)
        seen_stems |= concept.stems
    synonyms = _synonym_index()
    for label, alternatives, words in _persian_phrase_spans(query):
        concepts.append(Concept(label, alternatives, key=True))
        seen_stems |= words
    previous = ""
    for token in tokens(formalize(query)):
        verb = is_verb_form(token) or continues_verb(previous)
        previous = token
        if token.isascii():
            continue  # Latin words were handled above, numbers are handled below
        for term in terms_of(token):
            if term in noise_terms() or term in seen_stems:
                continue
            alternatives = (frozenset([term]), *synonyms.get(term, ()))
            # a word with a register rendering names a notion (key); its own plural does not make it
            # one, nor does a bound («حداقل»), which says what form the answer takes
            key = len(alternatives) > 1 and term not in _generic_stems() and term not in BOUNDS
            if term.endswith("ی") and len(term) >= 4:
                # the plural in «ان» of a word in «ی» («روستایی» / «روستاییان») is left whole by the stemmer
                alternatives = (*alternatives, frozenset([f"{term}ان"]))
            if verb:
                concepts.append(Concept(token, alternatives, key=False, weight=VERB_WEIGHT))
            else:
                concepts.append(Concept(token, alternatives, key=key))
            seen_stems.add(term)
    for number in sorted(numbers_in(query)):
        if number not in seen_stems:
            concepts.append(Concept(number, (frozenset([number]),)))
            seen_stems.add(number)
    return concepts


def persian_expansion(text: str) -> list[str]:
    """The first Persian rendering of each glossary term found among the Latin words of `text`."""
    expansion: list[str] = []
    for span in _english_spans(text):
        for phrase in span.phrases[:1]:
            if phrase not in expansion:
                expansion.append(phrase)
    return expansion


def _written(text: str) -> str:
    """`text`'s words in written form, space-separated and space-padded: where a phrase is looked up."""
    return f" {' '.join(tokens(formalize(text)))} "


def _mentions(word: str, written: str, present: frozenset[str]) -> bool:
    """Whether a text (`_written` form, `text_terms`) says `word`. A phrase counts only as written:
    «بی بیمه» is not any text with «بیمه» in it; a single word by its stems."""
    phrase = " ".join(normalize(word).split())
    if " " in phrase:
        return f" {phrase} " in written
    return bool(_stems(word)) and _stems(word) <= present


def register_expansion(text: str) -> list[str]:
    """The documents' words for the everyday Persian words of `text` (up to two alternatives each)."""
    present = text_terms(text)
    written = _written(text)
    expansion: list[str] = []
    for word, alternatives in REGISTER.items():
        if _mentions(word, written, present):
            for phrase in alternatives[:2]:
                if not text_terms(phrase) <= present and phrase not in expansion:
                    expansion.append(phrase)
    return expansion


def broaden(query: str) -> str:
    """A second-round search query: the concepts of `query` without its question words and fillers,
    followed by every alternative the glossary and the synonym lists know for them (all renderings,
    not only the first). `policy.terms.adds_terms` tells whether it adds anything to `query`."""
    core = re.sub(r"\s*\[[^\[\]]*\]\s*$", "", query).strip()
    concepts = query_concepts(core)
    words = [concept.label for concept in concepts]
    phrases: list[str] = []
    for span in _english_spans(core):
        phrases += [phrase for phrase in span.phrases if phrase not in phrases]
    present = text_terms(core)
    written = _written(core)
    for word, alternatives in PERSIAN_SYNONYMS.items():
        if _mentions(word, written, present):
            phrases += [phrase for phrase in alternatives if phrase not in phrases]
    return " ".join(dict.fromkeys([*words, *phrases]))


def word_alternatives(word: str) -> frozenset[str]:
    """The terms another text may use for one word: the synonyms and register words of a Persian
    word, the Persian renderings of an English one (what the corpus scope looks a word up under).
    None for a generic word («قیمت», "price"): every policy has a word for it, so it would put any
    question about prices in every insurer's scope."""
    found: set[str] = set()
    if word.isascii():
        entry = glossary_entry([word])
        if entry is None or entry.generic or stemmer().stem_word(word.lower()) in _generic_all():
            return frozenset()
        for phrase in entry.phrases:
            found |= _stems(phrase)
        return frozenset(found)
    for term in terms_of(formalize(word)):
        if term in _generic_all():
            continue
        for stems in _synonym_index().get(term, ()):
            found |= stems
    return frozenset(found)


@lru_cache(maxsize=1)
def _persian_phrases() -> tuple[tuple[str, tuple[frozenset[str], ...]], ...]:
    """Multi-word everyday phrases of PERSIAN_SYNONYMS («طرف مقابل», «خسارت دیده») with their
    renderings, longest first. The phrase's own words are an alternative only when none of them is a
    stopword: «طرف مقابل» without «مقابل» would be any «طرف»."""
    found = []
    for phrase, renderings in PERSIAN_SYNONYMS.items():
        words = normalize(phrase).split()
        if len(words) < 2:
            continue
        own = _stems(phrase)
        alternatives = tuple(stems for stems in (_stems(r) for r in renderings) if stems)
        if len(own) == len(words):
            alternatives = (own, *alternatives)
        found.append((" ".join(words), alternatives))
    return tuple(sorted(found, key=lambda item: -len(item[0])))


def _persian_phrase_spans(query: str) -> list[tuple[str, tuple[frozenset[str], ...], frozenset[str]]]:
    """The multi-word everyday phrases in `query`: (phrase, its alternatives, the stems it consumes)."""
    text = _written(query)
    spans = []
    for phrase, alternatives in _persian_phrases():
        if f" {phrase} " in text:
            text = text.replace(f" {phrase} ", " ")
            spans.append((phrase, alternatives, _stems(phrase)))
    return spans


def text_terms(text: str) -> frozenset[str]:
    return frozenset(terms_of(text))


def concept_weights(concepts: Sequence[Concept], documents: Sequence[frozenset[str]]) -> list[float]:
    """IDF-like weight of each concept across `documents` (term sets): rare concepts weigh more.

    A concept found in no document gets the highest weight: it is exactly what the evidence misses.
    A verb form is the exception: a spoken verb («زده», «بگیرم») the written evidence never uses
    is a matter of register, not of content (the noun of a light-verb phrase carries that), so it
    weighs as little as a verb every document has.
    """
    total = len(documents)
    weights = []
    for concept in concepts:
        df = sum(1 for terms in documents if concept.covered_by(terms))
        if df == 0 and concept.weight < 1.0:
            df = total
        weights.append(concept.weight * math.log(1.0 + (total + 1.0) / (df + 0.5)))
    return weights


def ground_concepts(concepts: Sequence[Concept], documents: Sequence[frozenset[str]]) -> list[Concept]:
    """The concepts, each Persian word that no document contains given the evidence's spelling of it.

    Colloquial and inflected forms miss the stemmer («تهرانه» for «تهران است», «دوستای» for
    «دوستان»), and compounds are written joined or apart («سرماخوردگی» / «سرما خوردگی»). A query
    word found in no document gets, as alternatives, the document words that it extends or that
    extend it by at most two letters (the shorter one 3+ letters), a split of it into two document
    words, a word one typing slip away and a word of the same Arabic root. A word the evidence
    contains as it is only gains the evidence words that extend it by one or two letters when it
    has five letters or more («محکوم» / «محکومیت»): shorter ones are too often other words.
    """
    vocabulary = frozenset().union(*documents) if documents else frozenset()
    grounded = []
    for concept in concepts:
        if concept.label.isascii():
            # An English term's renderings are the documents' written forms already: a word one
            # letter from one of them is another word («مجاز», allowed, for «مجازات», penalty).
            grounded.append(concept)
            continue
        if any(concept.covered_by(terms) for terms in documents):
            # present as written, it also meets its suffixed derivations in the other chunks
            # («محکوم» / «محکومیت», «مسئول» / «مسئولیت»): one notion, which a stemmer leaves apart
            derived = [frozenset([word]) for term in _single_terms(concept) for word in _derived_forms(term, vocabulary)]
            if derived:
                concept = Concept(
                    concept.label, tuple(dict.fromkeys([*concept.alternatives, *derived])), concept.key, concept.weight
                )
            grounded.append(concept)
            continue
        extra: list[frozenset[str]] = []
        for term in _single_terms(concept):
            if term.isascii():
                continue
            extra += [frozenset([word]) for word in _spelling_variants(term, vocabulary)]
            extra += _compound_splits(term, vocabulary)
            extra += [frozenset([word]) for word in _typo_variants(term, vocabulary)]
            extra += [frozenset([word]) for word in _root_variants(term, vocabulary)]
        if extra:
            concept = Concept(concept.label, tuple(dict.fromkeys([*concept.alternatives, *extra])), concept.key, concept.weight)
        grounded.append(concept)
    return grounded


def _single_terms(concept: Concept) -> list[str]:
    return [next(iter(alternative)) for alternative in concept.alternatives if len(alternative) == 1]


def _derived_forms(term: str, vocabulary: frozenset[str]) -> list[str]:
    """Evidence words that extend a Persian word of five letters or more by one or two letters."""
    if len(term) < 5 or term.isascii():
        return []
    return [word for word in _spelling_variants(term, vocabulary) if len(word) > len(term)]


def _spelling_variants(term: str, vocabulary: frozenset[str]) -> list[str]:
    found = []
    for word in vocabulary:
        if word.isascii() or word == term or word in KEPT_WHOLE or term in KEPT_WHOLE:
            continue
        short, long = (word, term) if len(word) < len(term) else (term, word)
        if len(short) >= 3 and len(long) - len(short) <= 2 and long.startswith(short):
            found.append(word)
    return sorted(found)


def _typo_variants(term: str, vocabulary: frozenset[str]) -> list[str]:
    """Evidence words one typing slip away (a letter changed, added, dropped, or two swapped), for words
    of five letters or more: «داشنگاه» -> «دانشگاه», «یوسنکو» -> «یونسکو», «دوشاپ» -> «دوشاب».

    Only a word the evidence does not contain is repaired, so two names one letter apart that are
    both in the evidence stay apart; shorter words are left alone (one letter there is more often
    another word than a typo)."""
    if len(term) < 5:
        return []
    return sorted(
        word for word in vocabulary if not word.isascii() and _one_slip(term, word) and not _pattern_pair(term, word)
    )


def _pattern_pair(a: str, b: str) -> bool:
    """Two words one «ی» apart that start with «ت»: two patterns of one Arabic root (تفعیل / تفعّل),
    not a slip: «توقیف» (impounding) / «توقف» (stopping), «تحویل» / «تحول», «تعلیق» / «تعلق»."""
    short, long = (a, b) if len(a) < len(b) else (b, a)
    return (
        a[0] == b[0] == "ت"
        and len(long) == len(short) + 1
        and any(long[i] == "ی" and long[:i] + long[i + 1 :] == short for i in range(2, len(long) - 1))
    )


_DERIVED_PREFIX = frozenset("تماآ")


def _skeleton(word: str) -> str:
    """The word without its long vowels after the first letter: the consonants of an Arabic root."""
    return word[:1] + re.sub("[اویآ]", "", word[1:])


def _root_variants(term: str, vocabulary: frozenset[str]) -> list[str]:
    """Evidence words of the same Arabic pattern-root as a word the evidence does not contain: the
    adjective and the noun of one root («ناقص» / «نقص», «شامل» / «شمول»), which legal Persian
    uses interchangeably. Roots of three consonants or more; words of four letters or more. Not a
    word with a derived-form prefix (ت، م، ا): with its vowels dropped, «توقیف» (impounding) would
    meet «توقف» (stopping), two forms of one root that mean different things."""
    if len(term) < 4 or term[0] in _DERIVED_PREFIX:
        return []
    root = _skeleton(term)
    if len(root) < 3:
        return []
    return sorted(
        word
        for word in vocabulary
        if word != term and not word.isascii() and word[0] not in _DERIVED_PREFIX and _skeleton(word) == root
    )


def _one_slip(a: str, b: str) -> bool:
    if a == b or abs(len(a) - len(b)) > 1 or min(len(a), len(b)) < 4:
        return False
    if len(a) == len(b):
        diff = [i for i, (x, y) in enumerate(zip(a, b, strict=True)) if x != y]
        swapped = len(diff) == 2 and diff[1] == diff[0] + 1 and a[diff[0]] == b[diff[1]] and a[diff[1]] == b[diff[0]]
        return len(diff) == 1 or swapped
    short, long = (a, b) if len(a) < len(b) else (b, a)
    return any(long[:i] + long[i + 1 :] == short for i in range(len(long)))


def _compound_splits(term: str, vocabulary: frozenset[str]) -> list[frozenset[str]]:
    """Two evidence words written as one («سرماخوردگی»), or an evidence word with a question word
    stuck to it («پیامبرچقدر»)."""
    stem = stemmer().stem_word
    noise = noise_terms() | stopwords()
    splits = []
    for cut in range(2, len(term) - 1):
        head, tail = _deepen(stem(term[:cut])), _deepen(stem(term[cut:]))
        if head in vocabulary and (tail in vocabulary or term[cut:] in noise):
            splits.append(frozenset([head, tail]) if tail in vocabulary else frozenset([head]))
        elif tail in vocabulary and term[:cut] in noise:
            splits.append(frozenset([tail]))
    return splits


def missing_key_concepts(concepts: Sequence[Concept], documents: Sequence[frozenset[str]]) -> list[Concept]:
    """Key concepts of the query that no document mentions at all."""
    return [c for c in concepts if c.key and not any(c.covered_by(terms) for terms in documents)]


def coverage(
    concepts: Sequence[Concept], terms: frozenset[str] | set[str], weights: Sequence[float] | None = None
) -> float:
    """Weighted share of `concepts` covered by `terms` (0 when there are no concepts)."""
    if not concepts:
        return 0.0
    weights = list(weights) if weights is not None else [1.0] * len(concepts)
    total = sum(weights)
    if total <= 0:
        return 0.0
    return sum(weight for concept, weight in zip(concepts, weights, strict=True) if concept.covered_by(terms)) / total


def metadata_text(chunk) -> str:
    """The words naming a chunk's document: title, product, domain and file id ("expat_health" -> "expat health")."""
    parts = [chunk.title, chunk.product or "", chunk.domain or "", chunk.file_id]
    return " ".join(re.sub(r"[^\w]+|_", " ", part) for part in parts if part)


def evidence_terms(chunks) -> list[frozenset[str]]:
    """Each retrieved chunk's words with its document's metadata and heading: what the lexical roles
    call "the evidence" when they ask whether a query concept appears anywhere."""
    return [text_terms(f"{metadata_text(chunk)}\n{chunk.heading or ''}\n{chunk.text}") for chunk in chunks]


def canonical(text: str) -> str:
    """Normalised text reduced to its words separated by single spaces: the unit of containment."""
    return " ".join(re.findall(r"\w+", normalize(text)))


def contains(haystack: str, needle: str) -> bool:
    """Whether the words of `needle` occur contiguously in `haystack` (after normalisation)."""
    needle = canonical(needle)
    return bool(needle) and f" {needle} " in f" {canonical(haystack)} "


def union_terms(texts: Iterable[str]) -> frozenset[str]:
    result: set[str] = set()
    for text in texts:
        result |= text_terms(text)
    return frozenset(result)
