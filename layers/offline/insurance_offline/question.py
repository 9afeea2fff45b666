"""What kind of sentence can answer a question at all: checks the extractive generate applies to a
quote before it may answer (they only ever make it abstain, never make it answer).

- A count or a date ("چند", «چه سالی», "how many", "what year") is answered by a sentence with a
  number in it (digits or number words), not by one that merely shares the question's words; a
  period («چه مدتی»), a percentage («چند درصد») or an amount («چه مبلغی») by a number with its unit.
- "Why" («چرا», «به چه دلیل») is answered by a sentence that gives a reason or a purpose.
- A negated question («کدام شهر را فتح نکرد؟», "what does it not cover?") is answered by a
  sentence that negates or excludes something, not by an affirmative one on the same topic.
- "What/who is X?" is answered from the document about X, by a sentence whose subject is X (X among
  its first words), or, when X names a role in the document's subject ("the founder of Toyota"),
  by a sentence of that document that names all of X: a passing mention elsewhere defines nothing.

What the answer must name (`focus_concepts`, `specific_tier`, `carries`): a sentence of the right
document that shares the question's topic but not the thing asked about is a confident wrong answer.
- The noun a question word governs («چه مدارکی», «کدام مرجع», "which documents") is the thing
  asked for: the quote must name it, unless it is a measure («چه مدتی», «چه میزان», "what
  percentage"), which asks for a quantity (a number) instead.
- The question's most specific concept (its rarest noun across the retrieved evidence that the
  quote's document does not already name in its title or heading) must be in the quote itself (a
  table row with its header row) or in a sentence right next to it in the same paragraph of prose
  (a list's next item or a table's next row never counts). The sentence introducing a list
  («مدارک زیر:») may name the focus noun for its items, never the specific concept; the section
  heading or the title alone never carries either.
- A focus noun the quote only refers to («مدارک لازم», "the required documents") is not named:
  a sentence on refusing claimants who bring the necessary documents does not say which they are.
- What a privative word governs («تخفیف عدم خسارت», «بدون گواهینامه») must be named by the quote
  itself: the absence of a claim is not stated by a title that names claims.
- The line of insurance a question asks about («بیمه درمان», "health insurance") must be the
  quote's: named by its document's title or heading, or by the quote itself (one of them, when
  the question names several). A sentence on the premiums of vehicle insurance that names a
  spouse and children does not say who a health policy covers.
- Every notion of the question that the evidence speaks of must be spoken of by the quote's
  document (`unnamed_by`: any of its retrieved passages, its title or headings). When the
  question's notions are split between documents, none of them answers it: a statute states a
  general rule in one place and the case that overrides it (a driver without a licence, a renewal
  with another insurer) in another, and quoting the general rule from a document that never names
  the case is a confident wrong answer. As for the most specific concept, a quote that by itself
  covers most of the question (generate's `broad_support`) is exempt: the document then says the
  missing notion in other words.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property

from insurance_offline.colloquial import formalize, is_verb_form
from insurance_offline.lexical import (
    Concept,
    generic_stems,
    ground_concepts,
    line_terms,
    noise_terms,
    query_concepts,
    terms_of,
    text_terms,
    without_renderings,
)
from insurance_agent.text import normalize, tokens

_COUNT_OR_DATE = re.compile(
    r"چند|چه سال|کدام سال|کدوم سال|چه تاریخ|چه قرن|کدام قرن|چه دهه|"
    r"\bhow many\b|\bwhat year\b|\bwhich year\b|\bin what year\b|\bwhat date\b|\bwhich century\b"
)
_NUMBER_WORD = re.compile(
    r"(?<!\w)(?:یک|دو|سه|چهار|پنج|شش|هفت|هشت|ده|یازده|دوازده|سیزده|چهارده|پانزده|شانزده|هفده|هجده|نوزده|"
    r"بیست|سی|چهل|پنجاه|شصت|هفتاد|هشتاد|نود|صد|دویست|سیصد|چهارصد|پانصد|ششصد|هفتصد|هشتصد|نهصد|هزار|میلیون|"
    r"میلیارد|نخست|اول|دوم|سوم)(?:م|مین|ین)?(?!\w)|"
    r"\b(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty|thirty|forty|fifty|hundred|"
    r"thousand|million|billion|first|second|third|fourth|fifth|once|twice|dozen)\b"
)
_NEGATED_WORD = re.compile(
    r"^(?:نمی|نیست|نیستند|نبود|نبودند|ندارد|نداره|ندارند|نداشت|نداشتند|نداشته|نکرد|نکرده|نکردند|نشد|نشده|"
    r"نشدند|نباشد|نباید|نخواهد|نتوانست|نمیشه|نمیکنه|نمیده)"
)
_WHY = re.compile(r"چرا|به چه (?:دلیل|علت)|علت|دلیل|\bwhy\b|\bwhat (?:is|was) the reason\b")
# A sentence that gives a reason or a purpose.
_BECAUSE = re.compile(
    r"زیرا|چون|چرا که|به دلیل|به علت|به خاطر|بخاطر|دلیل|علت|باعث|سبب|موجب|از آنجا که|از این رو|بنابراین|"
    r"برای اینکه|تا |هدف|\bbecause\b|\bdue to\b|\bsince\b|\bso that\b|\bin order to\b|\breason\b|\bcaused?\b"
)
# «به علت نداشتن بیمه‌نامه …»: a cause the question states, not a "why" it asks or a negation it asks about.
_CAUSE_CLAUSE = re.compile(r"(?<!\w)(?:به|بخاطر|به خاطر)\s+(?:علت|دلیل|سبب|واسطه)\s+\S+")
_NEGATION_EN = re.compile(r"\b(?:not|never|no|without|excluded?|exclusions?|except)\b|n't\b")
# A question that asks what is not so. "No" and "without" in a question state a condition ("a year
# without a claim", "a car with no insurance"), as «بدون» does in a Persian one: no negated answer.
_NEGATED_QUESTION_EN = re.compile(r"\b(?:not|never|excluded?|exclusions?|except)\b|n't\b")
# Markers of a sentence that negates or excludes: "بدون", «فاقد», «استثنا», «غیر» ...
_NEGATION_MARKERS = re.compile(r"(?<!\w)(?:بدون|فاقد|مگر|جز|به جز|غیر|استثنا\w*|مستثنی)(?!\w)")
_DEFINITION_FA = re.compile(
    r"^(?P<subject>.+?)\s+(?:چیست|چیه|چی است|چه است|چه چیزی است|کیست|کیه|کی است|کی بود|کی هست|"
    r"چه کسی است|چه کسی بود|یعنی چه|یعنی چی)\s*[?!.]*$"
)
_DEFINITION_EN = re.compile(r"^(?:what|who)\s+(?:is|are|was|were)\s+(?:an?\s+|the\s+)?(?P<subject>[\w\s-]+?)\s*\??$")
# A question word and the word it governs: «چه مدارکی», «کدام مرجع», «کدوم بیمه», "which court".
_FOCUS = re.compile(r"(?<!\w)(?:چه|کدام|کدوم|کدامین|which|what)\s+(\S+)")
# Nouns a question word governs without naming a thing: «چه کسی», «چه نوع», «چه صورت», "what kind".
_FOCUS_VOID = frozenset(
    "کس کسی کسانی شخص شخصی اشخاص اشخاصی فرد فردی افراد افرادی مرجع مرجعی مراجع مراجعی نهاد نهادی دستگاه دستگاهی "
    "چیز چیزی چیزهایی نوع نوعی جور جوری طور طوری صورت صورتی شکل شکلی کار کاری اندازه وقت "
    # «چه شرطی», «بر چه مبنایی», «به چه نحوی»: a condition, a basis or a procedure is asked for, and
    # the rule states it in its own words («مستلزم …», «بر اساس …»), not by naming the kind
    "شرط شرطی شرایطی مبنا مبنایی مبنای نحو نحوی نحوه روش روشی ترتیب ترتیبی "
    "kind sort type way is are was were do does did can could should would will the a an of".split()
)
# Measure nouns: "in what period / to what extent / what share / at what intervals" asks for a
# quantity («در چه فواصلی» is answered by «شش‌ماهه», «چه سهمی» by «۵۰ درصد», never by the noun).
_MEASURE = re.compile(
    r"^(?:مدت|مدتی|مهلت|مهلتی|میزان|میزانی|مقدار|مقداری|مبلغ|مبلغی|درصد|درصدی|نسبت|نسبتی|تعداد|زمان|زمانی|سال|سالی|"
    r"ماه|ماهی|روز|روزی|تاریخ|تاریخی|سن|سنی|حد|حدی|سقف|رقم|رقمی|فاصله|فواصل|فواصلی|سهم|سهمی|"
    r"percentage|percent|amount|period|age|year|date|time|rate|limit|share|sum|proportion|extent|interval|intervals|"
    r"frequency)$"
)
# Words that bound or count a quantity: «حداقل مبلغ», "maximum", «چند نفر»: the form of the answer.
_MEASURE_MODIFIER = re.compile(
    r"^(?:حداقل|حداکثر|کمترین|بیشترین|نفر|نفری|minimum|maximum|least|most|up to|at most|at least)$"
)
# "How much" and "in what period / to what extent" ask for a figure as well.
_COUNT_OR_DATE_EXTRA = re.compile(
    r"(?<!\w)(?:(?:چه|کدام|کدوم)\s+(?:مدت|مهلت|میزان|مقدار|مبلغ|درصد|نسبت|زمان|تاریخ|سن)|چقدر|چقد|چه قدر)|"
    r"\bhow (?:much|long|soon|old|fast|quickly)\b|\bwhat (?:percentage|amount|share|rate)\b"
)
_SUBJECT_WORDS = 3
# "Should the policy say how much each payment is?": a figure a document must state, asked about
# as a yes/no question; the rule that requires the statement answers it without a number.
_EMBEDDED_COUNT_EN = re.compile(
    r"\b(say|says|state|states|show|shows|tell|tells|specify|specifies|mention|mentions|list|lists|include|"
    r"includes|write|print|display|displays)\s+(?:me\s+|us\s+)?(?:how (?:much|many|long|soon)|when|what (?:amount|sum))\b"
)
# A question word (the clause that has one asks).
_ASKING = re.compile(
    r"(?<!\w)(?:چه|چی|چیه|چند|چقدر|چقد|کی|کجا|کدام|کدوم|آیا|ایا|چطور|چطوری|چگونه|چجوری|چرا|مگه|"
    r"how|what|which|when|where|who|whom|whose|why)(?!\w)",
    re.IGNORECASE,
)
_SENTENCES = re.compile(r"(?<=[.!?؟])\s+")
_COMMA = re.compile(r"[،,;؛]\s*")
_MAX_DEFINED_WORDS = 3
# A negative auxiliary opening an English question asks for confirmation ("Isn't it covered?").
_RHETORICAL_EN = re.compile(
    r"(?:^|(?<=[.!?]\s))(?:aren't|isn't|don't|doesn't|didn't|shouldn't|can't|won't|wouldn't|hasn't|haven't)\b",
    re.IGNORECASE,
)


def asking_part(text: str) -> str:
    """What `text` asks, without the circumstances a customer tells first: its sentences that end in
    a question mark ("… . Does the government pay …?"), and of such a sentence its last clause when
    that clause has a question word («چند ساله تصادف نداشتم، هر سال چقدر تخفیف …؟»). All of `text`
    when no sentence ends in a question mark."""
    text = without_renderings(text)
    questions = [sentence for sentence in _SENTENCES.split(text.strip()) if sentence.rstrip().endswith(("?", "؟"))]
    if not questions:
        return text
    asked = []
    for sentence in questions:
        last = _COMMA.split(sentence)[-1]
        asked.append(last if _ASKING.search(last) else sentence)
    return " ".join(asked)


@dataclass(frozen=True)
class AnalysedQuestion:
    """A draft's question read once: each form of it that the checks below compare, computed on first
    use and kept. Generate builds one per draft and hands it to every check, instead of each check
    (and each retrieved document) normalising and re-reading the question string again."""

    text: str

    @cached_property
    def normalized(self) -> str:
        return normalize(self.text)

    @cached_property
    def governed(self) -> tuple[str, ...]:
        """The words a question word governs («چه مدارکی» -> «مدارکی», "which court" -> "court")."""
        words = (match.group(1).strip("؟?!.,،؛:") for match in _FOCUS.finditer(normalize(formalize(self.text))))
        return tuple(word for word in words if word)

    @cached_property
    def asking_written(self) -> str:
        """The asking part in the written register, normalised (the line and privative checks)."""
        return normalize(formalize(asking_part(self.text)))

    @cached_property
    def asked_terms(self) -> frozenset[str]:
        """The terms of the question sentences (`question_sentences`)."""
        return text_terms(question_sentences(self.text))


#: A question as its checks take it: the text, or a draft's question already analysed.
Question = str | AnalysedQuestion


def analysed(question: Question) -> AnalysedQuestion:
    return question if isinstance(question, AnalysedQuestion) else AnalysedQuestion(question)


@dataclass(frozen=True)
class QuestionShape:
    needs_number: bool = False
    needs_reason: bool = False
    negated: bool = False
    # The question's own negated verbs: a sentence with one of them negates the same thing.
    negations: frozenset[str] = frozenset()
    # The concepts of X in "what/who is X?" (None for any other question).
    defines: tuple[Concept, ...] | None = None
    # The kind of figure asked for («چه مدتی»: "time", «چند درصد»: "percent", «چه مبلغی»: "money").
    measure: str | None = None


def negated_words(text: str, vocabulary: frozenset[str] = frozenset()) -> frozenset[str]:
    """The negated verbs of `text`: known negative forms, and «ن» + a word the evidence uses without it
    («نجنگید» when the evidence says «جنگید»)."""
    found = set()
    for word in tokens(text):
        if _NEGATED_WORD.match(word) or (
            word.startswith("ن") and len(word) >= 5 and word[1:] in vocabulary and word not in vocabulary
        ):
            found.add(word)
    return frozenset(found)


def is_negated(text: str, vocabulary: frozenset[str] = frozenset()) -> bool:
    return bool(negated_words(text, vocabulary)) or bool(_NEGATION_EN.search(normalize(text)))


def question_shape(question: Question, concepts: list[Concept], evidence_words: frozenset[str]) -> QuestionShape:
    """The shape of `question`; `evidence_words` are the plain words of the retrieved chunks."""
    question = analysed(question)
    query, normalized = question.text, question.normalized
    defines = None
    match = _DEFINITION_FA.match(normalized) or _DEFINITION_EN.match(normalized)
    if match:
        subject = text_terms(match.group("subject"))
        own = tuple(c for c in concepts if _stands_for(c, subject))
        if own and len(tokens(match.group("subject"))) <= _MAX_DEFINED_WORDS:
            defines = own
    # what the question asks, without a cause it states («به علت نداشتن …») or the circumstances
    # told before it («چند ساله تصادف نداشتم، هر سال چقدر تخفیف …؟»)
    asked = _CAUSE_CLAUSE.sub(" ", asking_part(normalized))
    negations = negated_words(_CAUSE_CLAUSE.sub(" ", asking_part(query)), evidence_words)
    asked = _RHETORICAL_EN.sub(" ", asked)  # "Aren't they supposed to …?" asks whether they are
    counted = _EMBEDDED_COUNT_EN.sub(r"\1", normalized)
    return QuestionShape(
        needs_number=bool(_COUNT_OR_DATE.search(counted) or _COUNT_OR_DATE_EXTRA.search(counted)),
        needs_reason=bool(_WHY.search(asked)),
        negated=bool(negations) or bool(_NEGATED_QUESTION_EN.search(asked)),
        negations=negations,
        defines=defines,
        measure=next((kind for kind, asks in _MEASURES.items() if asks.search(counted)), None),
    )


# A reference to a provision («ماده (۴۰)», «تبصره۲», «بند ۳», «مواد (۳۱) و (۳۲)», "Article 12") names a
# rule, it states no quantity.
_REFERENCE = re.compile(
    r"(?:ماده|مواد|تبصره|بند|فصل|اصل|جزء|article|section|clause|note)\s*\(?\d+\)?(?:\s*(?:و|،|,|and)\s*\(?\d+\)?)*",
    re.IGNORECASE,
)


# «هر یک از», «یکی از»: "each of", "one of", no quantity.
_DISTRIBUTIVE = re.compile(r"(?<!\w)(?:هر\s+یک|یکی\s+از|\beach\s+one\b|\bone\s+of\b)")

# The kinds of figure a question asks for, and the units a sentence states one in. A sentence on
# «مبلغی» for each of «دو رشته» has a number, but not the amount asked for.
_MEASURES = {
    "percent": re.compile(r"(?:چند|چه)\s+درصد|\bwhat (?:percentage|percent)\b|\bhow many percent\b"),
    "time": re.compile(
        r"(?:چه|کدام|کدوم)\s+(?:مدت|مهلت)|چند\s+(?:روز|ماه|سال|هفته|ساعت)|\bhow (?:long|soon|fast|quickly)\b|"
        r"\b(?:how many|within how many)\s+(?:days|months|years|weeks|hours)\b"
    ),
    "money": re.compile(r"(?:چه|کدام|کدوم)\s+(?:مبلغ|رقم)|\bwhat (?:amount|sum)\b"),
}
_UNITS = {
    "percent": re.compile(r"درصد|%|٪|\bpercent\b"),
    "time": re.compile(r"(?<!\w)(?:روز|ماه|سال|هفته|ساعت)|\b(?:days?|months?|years?|weeks?|hours?)\b"),
    "money": re.compile(r"ریال|تومان|دلار|یورو|درصد|%|برابر|\b(?:rials?|tomans?|dollars?|euros?|percent|times)\b"),
}


# The number of a list item («۷ - میزان تعهد بیمه‌گر …», «۵- صاحبان حرف …», "2) …"): its place in the
# list, not a figure. Matched on the raw text: normalisation drops the kashida of «۳ـ», and «3 موضوع»
# would read as three subjects.
_ENUMERATOR = re.compile(r"^\s*[\d\u06f0-\u06f9]{1,3}\s*[-ـ–—.)](?![\d\u06f0-\u06f9])")


def has_number(text: str, measure: str | None = None) -> bool:
    """Whether `text` states a figure (digits or number words; not a reference to a provision, not
    «هر یک از», not the number of a list item); of the `measure` asked for, when one is given (a
    time, a percentage, an amount)."""
    normalized = _DISTRIBUTIVE.sub(" ", _REFERENCE.sub(" ", normalize(_ENUMERATOR.sub(" ", text))))
    found = bool(re.search(r"\d", normalized) or _NUMBER_WORD.search(normalized))
    return found and (measure is None or bool(_UNITS[measure].search(normalized)))


def negates(text: str, negations: frozenset[str] = frozenset()) -> bool:
    """Whether `text` negates or excludes something (or uses one of the question's negated verbs)."""
    normalized = normalize(text)
    return (
        is_negated(normalized)
        or bool(_NEGATION_MARKERS.search(normalized))
        or bool(negations & frozenset(tokens(normalized)))
    )


def fits(shape: QuestionShape, unit: str, context: str, topic_terms: frozenset[str]) -> bool:
    """Whether a quote `unit` (with its local `context`) can answer a question of this shape.

    `topic_terms`: the terms naming the unit's document and section (title, product, heading).
    """
    if shape.needs_number and not has_number(unit, shape.measure):
        return False
    if shape.needs_reason and not _BECAUSE.search(normalize(f"{context}\n{unit}")):
        return False
    if shape.negated and not negates(f"{context}\n{unit}", shape.negations):
        return False
    if shape.defines is not None:
        named = [concept.covered_by(topic_terms) for concept in shape.defines]
        opening = text_terms(" ".join(tokens(unit)[: _SUBJECT_WORDS + 1]))
        own = text_terms(unit)
        if not (
            all(named)  # the document (or section) about X
            or all(concept.covered_by(opening) for concept in shape.defines)  # X is the sentence's subject
            # "who is the founder of <document's subject>?": the sentence names all of it
            or (any(named) and all(concept.covered_by(own | topic_terms) for concept in shape.defines))
        ):
            return False
    return True


def _stands_for(concept: Concept, stems: frozenset[str]) -> bool:
    """Whether the question words with terms `stems` are (part of) `concept`: one of its stems, or
    all of one of its alternatives («شخص ثالث»)."""
    return bool(concept.stems & stems) or any(a <= stems for a in concept.alternatives)


def without_kinds(query: Question, concepts: list[Concept]) -> list[Concept]:
    """`concepts` without the kind of answer a question word asks for («چه شرطی», «بر چه مبنایی»,
    «چه کسی»): the rule states the condition or the basis in its own words, so the kind is not a
    word the answer must share. A time limit («چه مهلتی») stays: with it gone, a deadline of the
    same authority for another act covered the rest of the question."""
    kinds = {word for word in analysed(query).governed if word in _FOCUS_VOID}
    return [concept for concept in concepts if concept.label not in kinds] if kinds else concepts


def question_concepts(query: Question, documents: list[frozenset[str]]) -> list[Concept]:
    """What grade and generate look for in the evidence: the query's concepts without the kind of
    answer asked for, in the evidence's spelling (lexical.ground_concepts)."""
    query = analysed(query)
    return ground_concepts(without_kinds(query, query_concepts(query.text)), documents)


def focus_concepts(query: Question, concepts: list[Concept]) -> tuple[Concept, ...]:
    """The concepts a question word governs («چه مدارکی» -> مدارک, "which court" -> court): what the
    answer must name. Measures («چه مدتی», "what percentage"), void nouns («چه کسی», "what kind"),
    verbs and generic words ("cover", «هزینه») are no focus; an English word counts only when the
    glossary renders it (otherwise no Persian sentence could name it)."""
    found: list[Concept] = []
    for word in analysed(query).governed:
        if word in _FOCUS_VOID or _MEASURE.match(word) or is_verb_form(word):
            continue
        stems = frozenset(terms_of(word)) - noise_terms()
        if not stems or stems <= generic_stems():
            continue
        for concept in concepts:
            if concept.weight < 1.0 or not _stands_for(concept, stems):
                continue
            if word.isascii() and len(concept.alternatives) < 2:
                continue
            if concept not in found:
                found.append(concept)
    return tuple(found)


def _generic(concept: Concept) -> bool:
    """A generic word («هزینه», "cost"). An English term is judged by its English stems: its Persian
    renderings («بیمه‌گر» of "insurer") are not generic words of Persian."""
    stems = concept.alternatives[0] if concept.label.isascii() and concept.alternatives else concept.stems
    return stems <= generic_stems()


def _informative(concept: Concept) -> bool:
    """A noun that can tell sentences apart: not a verb form, a number, a measure («حداقل», «مدت»:
    they ask for a quantity) or a generic word."""
    return (
        concept.weight >= 1.0
        and not concept.label.isdigit()
        and not _MEASURE.match(concept.label)
        and not _MEASURE_MODIFIER.match(concept.label)
        and not _generic(concept)
    )


# A noun with a modifier that points elsewhere for what it is («مدارک لازم», «مرجع ذیربط», "the
# required documents"), unless the sentence goes on to say it («… لازم شامل …», «… لازم عبارتند از»).
_REFERENCE_FA = re.compile(
    r"(?<!\w)\S+\s+(?:لازم|مربوطه?|مذکور|مقرر|یاد\s?شده|فوق(?:\s?الذکر)?|مورد\s+نیاز|ذی\s?ربط|پیش\s?گفته)(?!\w)"
    r"(?!\s*(?:را\s+)?(?:شامل|عبارت|به\s+شرح|[:：]))"
)
_REFERENCE_EN = re.compile(
    r"\b(?:required|necessary|relevant|said|aforementioned|prescribed|applicable|needed)\s+\w+\b"
    r"(?!\s*(?:are|include|including|as follows|[:：]))",
    re.IGNORECASE,
)


def without_references(text: str) -> str:
    """`text` without the nouns it only refers to («مدارک لازم», "the required documents")."""
    return _REFERENCE_EN.sub(" ", _REFERENCE_FA.sub(" ", normalize(text)))


_INSURANCE_WORD = re.compile(r"^(?:بیمه|insurance|policy|policies|cover|coverage)$")
_LINE_WINDOW = 2


def named_lines(query: Question, concepts: list[Concept]) -> tuple[Concept, ...]:
    """The concepts that name the line of insurance the question asks about: a line word («درمان»,
    «ثالث», "health") within two words after «بیمه» (Persian puts the modifier after the noun: «بیمه
    درمانم», «بیمه‌نامه شخص ثالث») or before "insurance"/"policy" in English, in the asking part
    («من بیمه شخص ثالث دارم. فرانشیز بیمه بدنه چقدر است؟» asks about «بدنه»)."""
    words = tokens(analysed(query).asking_written)
    lines = line_terms()
    found: list[Concept] = []
    for index, word in enumerate(words):
        if not _INSURANCE_WORD.match(word):
            continue
        if word.isascii():
            window = words[max(0, index - _LINE_WINDOW) : index]
        else:
            window = words[index + 1 : index + 1 + _LINE_WINDOW]
        for near in window:
            stems = frozenset(terms_of(near))
            if not stems & lines:
                continue
            found += [concept for concept in concepts if _stands_for(concept, stems) and concept not in found]
    return tuple(found)


_PRIVATIVE = re.compile(r"(?<!\w)(?:عدم|نداشتن|بدون|فاقد|بی)\s+(\w+)")


def privative_concepts(query: Question, concepts: list[Concept]) -> tuple[Concept, ...]:
    """The concepts a privative word governs in the asking part («تخفیف عدم خسارت»: «خسارت»,
    «بدون گواهینامه»): the notion is the absence of X, which a title that names X («… خسارت …»)
    does not state, so the quote must name X itself."""
    found: list[Concept] = []
    for match in _PRIVATIVE.finditer(analysed(query).asking_written):
        stems = frozenset(terms_of(match.group(1))) - noise_terms()
        if stems:
            found += [concept for concept in concepts if _stands_for(concept, stems) and concept not in found]
    return tuple(found)


def english_keys(concepts: list[Concept], named: frozenset[str]) -> tuple[Concept, ...]:
    """The key notions of an English question that a quote from a document whose title and heading
    have the terms `named` must name itself (with the sentence introducing it).

    An English question reaches Persian evidence through the glossary's renderings, a coarser match
    than a Persian question's own words: a sentence of the right document that names one of its
    specific notions ("premium") but not another ("table") answers a different question. So every
    specific notion (glossary key terms: "tax", "income", "foreigner"; not generic or modal words)
    that the document does not already name must be in the quote."""
    return tuple(
        concept
        for concept in concepts
        if concept.key and concept.label.isascii() and not concept.label.isdigit() and not concept.covered_by(named)
    )


def question_sentences(text: str) -> str:
    """The sentences of `text` that end in a question mark, whole («اگر …، … چه مدتی …؟»: the condition
    is part of what is asked); all of `text` when none does. A sentence told before them («من بیمه
    شخص ثالث دارم.») is background."""
    text = without_renderings(text)
    questions = [s for s in _SENTENCES.split(text.strip()) if s.rstrip().endswith(("?", "؟"))]
    return " ".join(questions) if questions else text


def unnamed_by(
    concepts: list[Concept], present: list[bool], terms: frozenset[str], question: Question = ""
) -> tuple[Concept, ...]:
    """The informative concepts of the question sentences of `question` (all concepts without it)
    that some retrieved evidence names (`present`) and a document with the terms `terms` (all its
    retrieved passages with its title and headings) does not: what that document does not speak
    of, although the evidence does."""
    question = analysed(question)
    asked = question.asked_terms if question.text else None
    return tuple(
        concept
        for concept, here in zip(concepts, present, strict=True)
        if here
        and _informative(concept)
        and not concept.covered_by(terms)
        and (asked is None or bool(concept.stems & asked))
    )


def specific_tier(
    concepts: list[Concept],
    weights: list[float],
    named: frozenset[str],
    present: list[bool] | None = None,
    tolerance: float = 1e-6,
) -> tuple[Concept, ...]:
    """The question's most specific concepts for a quote from a document whose title and heading
    have the terms `named`: its informative concepts the document does not already name, those of
    the highest weight (rarest across the evidence). Concepts no evidence has (`present` False: a
    spoken word, a notion the documents lack) only lower coverage, which decides on its own.
    Empty when the document names them all."""
    present = present if present is not None else [True] * len(concepts)
    open_ = [
        (c, w)
        for c, w, here in zip(concepts, weights, present, strict=True)
        if here and _informative(c) and not c.covered_by(named)
    ]
    if not open_:
        return ()
    top = max(w for _, w in open_)
    return tuple(c for c, w in open_ if w >= top - tolerance)


def carries(
    unit_terms: frozenset[str],
    focus: tuple[Concept, ...],
    tier: tuple[Concept, ...] = (),
    framed_terms: frozenset[str] | None = None,
    tier_terms: frozenset[str] | None = None,
) -> bool:
    """Whether a quote names every focus concept (in its own words or, `framed_terms`, with the
    sentence introducing its list) and at least one of the most specific ones, in its own words or
    (`tier_terms`) with the sentences next to it in its paragraph of prose."""
    framed = unit_terms if framed_terms is None else framed_terms
    if not all(concept.covered_by(framed) for concept in focus):
        return False
    specific = unit_terms if tier_terms is None else tier_terms
    return not tier or any(concept.covered_by(specific) for concept in tier)
