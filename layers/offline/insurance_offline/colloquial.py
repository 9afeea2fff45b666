"""Spoken Persian -> the written register documents use, word by word (general Persian, not a domain list).

Customers write the way they speak: «ماشینمو فروختم»، «پیش‌پرداختش چنده؟»، «میشه قسطی خرید؟». The
documents say «خودرو را فروختم», «چند است», «می‌شود». Matched as they are, the spoken forms become
query words that no document contains, and the lexical roles then reject good evidence. This module
rewrites a message into written forms before query concepts are taken from it:

1. Closed-class spoken forms (verbs, copulas, question words, prepositions) from a fixed table, plus
   shekar's informal-word list («خونه» -> «خانه», «تموم» -> «تمام», «اگه» -> «اگر»).
2. Enclitics, checked against shekar's word-frequency list so that a word is only split when its
   base is a common word in its own right: the object marker «و/رو» after a noun or a possessive
   («ماشینمو» -> «ماشینم را»), the spoken plural «ـا» («قسطا» -> «قسط‌ها») and the copula «ـه»
   («چنده» -> «چند است»). A word is left alone when it is itself more common than the base it
   would give («خانه» is not «خان + ه», «دارو» is not «دار + و»). Possessives («خانمم») are left
   to the stemmer, whose output `base_form` checks the same way.

`base_form` is the same frequency check for a stemmer's output: a suffix-stripper turns «خانم» into
«خان» and «قیمت» into «قیم»; the lexical roles keep the word when it is more common than the stem.
"""

from __future__ import annotations

import csv
import re
from functools import lru_cache

from insurance_agent.text import ZWNJ, normalize

# Spoken form -> written form. Verbs, copulas, question words, pronouns and prepositions only: the
# closed classes of everyday speech, not domain vocabulary.
SPOKEN: dict[str, str] = {
    "میشه": "می‌شود",
    "نمیشه": "نمی‌شود",
    "میشن": "می‌شوند",
    "میشد": "می‌شد",
    "بشه": "بشود",
    "نشه": "نشود",
    "شه": "شود",
    "میشم": "می‌شوم",
    "باشه": "باشد",
    "نباشه": "نباشد",
    "باشن": "باشند",
    "هستش": "است",
    "هستن": "هستند",
    "نیستن": "نیستند",
    "داره": "دارد",
    "نداره": "ندارد",
    "دارن": "دارند",
    "ندارن": "ندارند",
    "داشته": "داشته",
    "میخوام": "می‌خواهم",
    "میخوای": "می‌خواهی",
    "میخواد": "می‌خواهد",
    "میخوان": "می‌خواهند",
    "میتونم": "می‌توانم",
    "میتونه": "می‌تواند",
    "میتونن": "می‌توانند",
    "نمیتونم": "نمی‌توانم",
    "نمیتونه": "نمی‌تواند",
    "بتونم": "بتوانم",
    "بتونه": "بتواند",
    "میده": "می‌دهد",
    "میدن": "می‌دهند",
    "نمیده": "نمی‌دهد",
    "نمیدن": "نمی‌دهند",
    "بدن": "بدهند",
    "میکنه": "می‌کند",
    "میکنن": "می‌کنند",
    "نمیکنه": "نمی‌کند",
    "کنه": "کند",
    "کنن": "کنند",
    "بکنه": "بکند",
    "میگیره": "می‌گیرد",
    "میگیرن": "می‌گیرند",
    "بگیره": "بگیرد",
    "بگیرن": "بگیرند",
    "میاد": "می‌آید",
    "میان": "می‌آیند",
    "بیاد": "بیاید",
    "میره": "می‌رود",
    "میرن": "می‌روند",
    "بره": "برود",
    "میگن": "می‌گویند",
    "میگه": "می‌گوید",
    "میدونم": "می‌دانم",
    "بدونم": "بدانم",
    "میخوره": "می‌خورد",
    "میرسه": "می‌رسد",
    "برسه": "برسد",
    "میمونه": "می‌ماند",
    "بمونه": "بماند",
    "چنده": "چند است",
    "چیه": "چیست",
    "کیه": "کیست",
    "چیا": "چه چیزهایی",
    "کدومه": "کدام است",
    "کدوم": "کدام",
    "کدوما": "کدام‌ها",
    "چقده": "چقدر است",
    "چقدره": "چقدر است",
    "چجوری": "چگونه",
    "چطوری": "چگونه",
    "چطوریه": "چگونه است",
    "کجاست": "کجا است",
    "اگه": "اگر",
    "واسه": "برای",
    "واسه‌ی": "برای",
    "رو": "را",
    "ازش": "از آن",
    "بهش": "به آن",
    "براش": "برای آن",
    "باهاش": "با آن",
    "اون": "آن",
    "اونا": "آن‌ها",
    "اونجا": "آنجا",
    "اینا": "این‌ها",
    "اونو": "آن را",
    "منو": "من را",
    "مارو": "ما را",
    "تورو": "تو را",
    "شمارو": "شما را",
    "اونارو": "آن‌ها را",
    "اینارو": "این‌ها را",
    # «هر دومون» (both of us) is not «دومان»
    "دومون": "دو ما",
    "دوتامون": "دو ما",
    "دوتون": "دو شما",
    "دوتاتون": "دو شما",
    "دوشون": "دو آن‌ها",
    "دوتاشون": "دو آن‌ها",
    "اینو": "این را",
    "یه": "یک",
    "دیگه": "دیگر",
    "الان": "اکنون",
    "هم‌اش": "همه",
    "همش": "همه",
    "منه": "من است",
    "بهم": "به من",
    "ازم": "از من",
    "برام": "برای من",
    "باهام": "با من",
    "بهمون": "به ما",
    "ازمون": "از ما",
    "برامون": "برای ما",
}

# Arabic adverbs in -an, written without their tanwin («نقداً» -> «نقدا»): the final alef is not the
# spoken plural («قسطا»), so «نقدا» is not «نقد‌ها» nor «بعدا» «بعد‌ها».
_TANWIN_ADVERBS = frozenset(
    "نقدا کتبا شفاها تلفنا حضورا بعدا قبلا اولا ثانیا ثالثا ضمنا عملا قانونا شرعا رسما مستقیما مجددا "
    "فورا کاملا تماما اساسا اصلا حتما دقیقا واقعا تقریبا معمولا مثلا فعلا لطفا شخصا قطعا صرفا نهایتا "
    "احتمالا عمدا ظاهرا اتفاقا مخصوصا خصوصا بعضا کلا جمعا مجموعا موقتا دائما اکیدا نسبتا ضرورتا "
    "صریحا عینا متقابلا مستقلا مشترکا منحصرا متعاقبا ذاتا نوعا غالبا اقلا".split()
)

# Enclitics, longest first. Possessives also come with the object marker («ماشینمو»).
_POSSESSIVES = ("شون", "تون", "مون", "ش", "ت", "م")
_OBJECT = re.compile(rf"^(?P<base>[\u0600-\u06ff{ZWNJ}]{{2,}}?)(?:{ZWNJ}رو|و)$")
# A base is only split off when it is this many times more common than the word itself: «کارت»
# (card) is not «کار + ت», «ساله» is not «سال + ه», while «خانمم», «چنده», «کافیه» are.
_BASE_RATIO = 10.0
_MIN_BASE = 3  # letters


@lru_cache(maxsize=1)
def _frequencies() -> dict[str, int]:
    """shekar's Persian word-frequency list (83k words) and its informal-word map, normalised."""
    from shekar.data import vocab_csv_path

    counts: dict[str, int] = {}
    with vocab_csv_path.open(encoding="utf-8") as handle:
        for row in csv.reader(handle):
            if len(row) >= 2 and row[1].isdigit():
                word = normalize(row[0], keep_zwnj=True)
                counts[word] = max(counts.get(word, 0), int(row[1]))
    return counts


@lru_cache(maxsize=1)
def _informal() -> dict[str, str]:
    from shekar.data import informal_words_csv_path

    table: dict[str, str] = {}
    with informal_words_csv_path.open(encoding="utf-8") as handle:
        for row in csv.reader(handle):
            if len(row) >= 2 and row[0] and row[1]:
                table.setdefault(normalize(row[0], keep_zwnj=True), normalize(row[1], keep_zwnj=True))
    for spoken, written in SPOKEN.items():
        table[normalize(spoken, keep_zwnj=True)] = normalize(written, keep_zwnj=True)
    return table


def frequency(word: str) -> int:
    return _frequencies().get(word, 0)


def _more_common(base: str, word: str) -> bool:
    """`base` is a common word and clearly more common than `word` (so `word` is base + clitic)."""
    if len(base.replace(ZWNJ, "")) < _MIN_BASE:
        return False
    known = frequency(base)
    return known > 0 and known >= _BASE_RATIO * frequency(word)


def base_form(word: str, stem: str) -> str:
    """The stemmer's `stem` of `word`, unless the word is more common than the stem (an over-stem)."""
    if stem == word or word.isascii():
        return stem
    if frequency(word) > frequency(stem):
        return word
    return stem


def strip_possessive(word: str) -> str:
    """`word` without a possessive clitic when the base is the common word («خانمم» -> «خانم»)."""
    for clitic in _POSSESSIVES:
        base = word[: -len(clitic)].rstrip(ZWNJ)
        if word.endswith(clitic) and _more_common(base, word):
            return base
    for clitic in ("ام", "ات", "اش"):  # «بیمه‌ام», «پولش» written with the half-space or the alef
        base = word[: -len(clitic)].rstrip(ZWNJ)
        if word.endswith(clitic) and word[: -len(clitic)].endswith(ZWNJ) and frequency(base) > 0:
            return base
    return word


_PLURAL_POSSESSIVES = ("مان", "تان", "شان", "مون", "تون", "شون")


def _possessed(stem: str, word: str) -> bool:
    """Whether `stem` is a common noun with a possessive clitic, `word` being it with the spoken copula
    («شرکتمونه» = «شرکتمون» + «ه»: "it is our company's"; «ماشینمه»: "it is my car")."""
    for clitic in (*_PLURAL_POSSESSIVES, *_POSSESSIVES):
        base = stem[: -len(clitic)].rstrip(ZWNJ)
        if stem.endswith(clitic) and _more_common(base, word):
            return True
    return False


def strip_plural_possessive(word: str) -> str:
    """`word` without a plural possessive, written or spoken («درمانمون», «کارشان» -> «درمان»,
    «کار»), when the base is a common word far more common than the word: «سازمان», «ساختمان» and
    «قهرمان» are words of their own."""
    for clitic in _PLURAL_POSSESSIVES:
        base = word[: -len(clitic)].rstrip(ZWNJ)
        if word.endswith(clitic) and _more_common(base, word):
            return base
    return word


_JOINED_PLURALS = ("هایی", "های", "ها")


def strip_joined_plural(word: str) -> str:
    """A plural written joined to its noun («سیستمهای», «شرکتها», «مجازاتهای»: the older orthography
    many statutes and wordings keep) as the noun, when the noun is a common word far more common than
    the joined form; the stemmer only strips «ها» after a half-space or a vowel."""
    for suffix in _JOINED_PLURALS:
        base = word[: -len(suffix)]
        if word.endswith(suffix) and not base.endswith(ZWNJ) and _more_common(base, word):
            return base
    return word


def _nasal_vowel(word: str) -> str:
    """Spoken «ون/وم» for written «ان/ام» («مونده» -> «مانده», «تموم» -> «تمام»): taken only when the
    written form is a common word and far more common than the spoken one."""
    best, best_count = word, 0
    for index in range(1, len(word) - 1):
        if word[index] == "و" and word[index + 1] in "نم":
            candidate = f"{word[:index]}ا{word[index + 1 :]}"
            count = frequency(candidate)
            if count > best_count and _more_common(candidate, word):
                best, best_count = candidate, count
    return best


def _spoken_possessed(word: str) -> str | None:
    """The written noun of a spoken noun with a possessive clitic that `strip_possessive` cannot
    see: on the spoken plural («قسطاش», «مدیراش» -> «قسط‌ها», «مدیر‌ها») or after a final «ه» that
    speech drops («وظیفشون», «همرام» -> «وظیفه», «همراه»). Only when the noun is far more common
    than the word, so that «تلاش» stays «تلاش», and never of a verb («فروختم» is not «فروخته»)."""
    if is_verb_form(word):
        return None
    for clitic in _POSSESSIVES:
        if not word.endswith(clitic):
            continue
        base = word[: -len(clitic)]
        if base in _past_stems():
            continue
        # (noun, written form): the plain base is strip_possessive's, and wins when most common
        readings = [(base, None), (f"{base}ه", f"{base}ه")]
        if base.endswith("ا") and not base.endswith(("ها", "آ")):
            readings.append((base[:-1], f"{base[:-1]}{ZWNJ}ها"))
        noun, written = max(readings, key=lambda reading: frequency(reading[0]))
        if written is not None and _more_common(noun, word):
            return written
    return None


def formal_word(word: str) -> list[str]:
    """The written form(s) of one normalised Persian word (a list: «چنده» -> «چند», «است»)."""
    table = _informal()
    if word in table:
        return table[word].split()
    if not word or word.isascii() or any(ch.isdigit() for ch in word):
        return [word]
    match = _OBJECT.match(word)
    if match:
        base = match["base"].rstrip(ZWNJ)
        stripped = strip_possessive(base)
        if _more_common(stripped, word) or _more_common(base, word):
            return [*formal_word(base), "را"]  # «ماشینمو» -> «ماشینم را»: the possessive stays
    if word in _TANWIN_ADVERBS:
        return [word]
    if word.endswith("ا") and not word.endswith(("ها", "آ")) and _more_common(word[:-1], word):
        return [f"{word[:-1]}{ZWNJ}ها"]  # the spoken plural «قسطا»
    spoken = _spoken_possessed(word)
    if spoken is not None:
        return [spoken]
    if (
        word.endswith("ای")
        and not word.endswith("های")
        and _more_common(word[:-2], word)
        and _more_common(word[:-2], word[:-1])  # «اعطای», «امضای»: the ezafe of «اعطا», not «اعط» + «ای»
    ):
        return [f"{word[:-2]}{ZWNJ}های"]  # the spoken plural with its ezafe «قسطای باقی»
    vowel = _nasal_vowel(word)
    if vowel != word:
        return [vowel]  # «باقیمونده» -> «باقیمانده»
    if word.endswith("تر") and not word.endswith("دفتر"):
        base = _nasal_vowel(word[:-2])
        if _more_common(base, word):
            return [base]  # the spoken comparative «گرونتر», «ارزونتر»: the notion is the adjective
    for copula, written in (("ه", "است"), ("ن", "هستند")):
        comparative = word[: -len(copula)]
        if word.endswith(f"تر{copula}"):
            adjective = formal_word(comparative)
            if adjective != [comparative]:
                return [*adjective, written]  # «گرونتره», «جلوترن»: it is / they are ahead
    if word.endswith("ه") and (_more_common(word[:-1], word) or _possessed(word[:-1], word)) and not is_verb_form(word):
        return [*formal_word(word[:-1]), "است"]  # the copula «چنده», «گرونه», «شرکتمونه»
    return [word]


_NOUN_STEM_FREQUENCY = 1_000_000

# No bare past stem: «پرداخت», «خرید», «دریافت» are the nouns documents are about.
_PAST_ENDINGS = ("م", "ی", "یم", "ید", "ند", "ین", "ن", "ه")
_PRESENT_ENDINGS = ("م", "ی", "د", "یم", "ید", "ند", "ه", "ن", "ین")


# A present stem that begins with «ا» takes «بی»/«نی» («بیندازد», «نیفتد»), and speech drops the «ا»
# («بندازه», «میندازن»). «ایست» is left out: «بیستم» is "twentieth".
_ALEF_STEM_EXCEPTIONS = frozenset({"ایست"})


@lru_cache(maxsize=1)
def verb_forms() -> frozenset[str]:
    """Conjugated forms of shekar's Persian verb list (formal and spoken stems), as tokens see them
    (the «می» prefix is a separate token after normalisation): «زد», «زده», «گرفتن», «دهد», «بده»."""
    from shekar.data import verbs_csv_path

    forms: set[str] = set()
    with verbs_csv_path.open(encoding="utf-8") as handle:
        for row in csv.reader(handle):
            stems = [normalize(cell) for cell in row[:4]]
            pasts = [stem for stem in (stems[1], stems[3] if len(stems) > 3 else "") if stem]
            presents = [stem for stem in (stems[0], stems[2] if len(stems) > 2 else "") if stem]
            for past in pasts:
                forms.add("ن" + past)
                for ending in _PAST_ENDINGS:
                    form = normalize(past + ending)
                    forms.update({form, "ن" + form})
            for present in presents:
                for ending in _PRESENT_ENDINGS:
                    form = present + ending
                    forms.update({"ب" + form, "ن" + form})
                    if present.startswith("ا") and present not in _ALEF_STEM_EXCEPTIONS:
                        # «بیندازد», «بیاندازد», «نیفتد»; spoken «بندازه» drops the «ا»
                        rest = present[1:] + ending
                        forms.update({"بی" + rest, "نی" + rest, "بی" + form, "نی" + form, "ب" + rest})
                    # «مالی», «فروشی»: a present stem that is a common word of its own («مال»,
                    # «فروش») plus «ی» is far more often its adjective than "you rub", "you sell".
                    if not (ending == "ی" and frequency(present) >= _NOUN_STEM_FREQUENCY):
                        forms.add(form)
    # one-letter stems («د», «ر») make two-letter forms that are mostly other words; a past stem is
    # also a noun («خرید» is "purchase" as well as "you buy")
    stems = _past_stems()
    return frozenset(form for form in forms if len(form) >= 3 and " " not in form and form not in stems)


@lru_cache(maxsize=1)
def _past_stems() -> frozenset[str]:
    from shekar.data import verbs_csv_path

    with verbs_csv_path.open(encoding="utf-8") as handle:
        return frozenset(normalize(cell) for row in csv.reader(handle) for cell in row[1:4:2] if cell)


# The continuous prefix; written with a joiner («می‌خورد») it is a token of its own (continues_verb).
_CONTINUOUS = ("نمی", "می")


def is_verb_form(token: str) -> bool:
    """Whether a (normalised) token is a conjugated verb form, spoken or written: a known form, or a
    spoken continuous one written without its joiner («میبرن», «میسوزه»: «می» + a form) that is
    not a common word by itself («میزان» is "amount", not «می» + «زان»)."""
    if _conjugated(token):
        return True
    # with an object clitic («بگیرنش», «بخرمش», «میدنش»: "take it", "buy it", "they give it")
    for clitic in _OBJECT_CLITICS:
        rest = token[: -len(clitic)]
        if token.endswith(clitic) and len(rest) >= 3 and _conjugated(rest):
            return frequency(token) < _NOUN_STEM_FREQUENCY
    return False


def _conjugated(token: str) -> bool:
    if token in verb_forms() or token in _COME_BRING:
        return True
    for prefix in _CONTINUOUS:
        rest = token[len(prefix) :]
        if token.startswith(prefix) and len(rest) >= 2 and (
            rest in verb_forms() or f"بی{rest}" in _COME_BRING or f"ب{rest}" in verb_forms()
        ):
            return frequency(token) < _NOUN_STEM_FREQUENCY
    return False


_OBJECT_CLITICS = ("شون", "تون", "مون", "ش", "ت", "م")
# «آمدن» and «آوردن» conjugate on «یا» / «یار» after a prefix («بیاد», «میاد», «بیارن», «میاره»),
# which the verb list's one-letter stem «آ» does not give. «بیان» and «نیا» are nouns (statement,
# ancestor), and without «بیان» its continuous look-alike «میان» (between) is not taken either.
_COME_BRING_NOUNS = frozenset({"بیان", "نیا"})
_COME_BRING = frozenset(
    f"{prefix}{stem}{ending}"
    for prefix in ("ب", "ن")
    for stem in ("یا", "یار")
    for ending in ("م", "ی", "د", "ید", "یم", "ین", "ن", "ند", "ه", "")
) - _COME_BRING_NOUNS


def continues_verb(previous: str) -> bool:
    """Whether the token after `previous` is a verb: «می‌خورد» and «نمی‌دهند» split at their joiner
    give «می» / «نمی» and then the verb («خورد», which alone reads as a past stem noun)."""
    return previous in _CONTINUOUS


_WORD = re.compile(rf"[\w{ZWNJ}]+")


def formalize(text: str) -> str:
    """`text` with its spoken Persian words in their written forms; every other character is kept."""

    def rewrite(match: re.Match[str]) -> str:
        original = match.group(0)
        word = normalize(original, keep_zwnj=True).strip(ZWNJ)
        if not word or word.isascii():
            return original
        written = formal_word(word)
        return original if written == [word] else " ".join(written)

    return _WORD.sub(rewrite, text)
