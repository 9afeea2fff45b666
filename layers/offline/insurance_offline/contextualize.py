"""Local contextualize: rule-based follow-up resolution into a standalone retrieval query.

Three cases, in order:

1. The previous turn was a clarifying question and the message picks one of its options (by number
   "1"/"۱", ordinal "اولی"/"the second", or the distinctive words of its label): the standalone
   query is the clarified query again, and retrieval is scoped to that option's file and domain.
2. The message is a follow-up ("what about for my wife?", «برای همسرم چطور؟», «اون یکی چی؟», a short
   message with a pronoun or an ellipsis, a condition with a bare «چی؟»: «اگه … چی؟», "And if …?")
   and there is an earlier query: the earlier standalone query with the new message's words merged
   in. A word of the same kind (family member, vehicle, product line) replaces the old one ("پدرم" ->
   "همسرم"); anything else is appended.
3. Otherwise the message is its own standalone query.

From the second retrieval round on, the query is `lexical.broaden` of the previous one (question
words dropped, every known synonym and rendering added); the node escalates when that adds nothing.

English words that the domain glossary knows get their Persian renderings appended in brackets, so
that retrieval and the lexical roles can match the Persian corpus. The user's message itself is
never modified: the result is always a new string.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache

from insurance_offline.colloquial import formalize
from insurance_offline.lexical import broaden, noise_terms, persian_expansion, register_expansion, text_terms
from insurance_agent.models.roles import ContextualizeRequest, ContextualizeResult, HistoryTurn
from insurance_agent.policy.clarification import pick_option
from insurance_agent.policy.memory import product_names
from insurance_agent.text import detect_language, normalize, split_sentences, tokens
from insurance_text import content_terms

_EXPANSION = re.compile(r"\s*\[[^\[\]]*\]\s*$")
_FOLLOW_UP_EN = re.compile(
    r"^(?:and\s+)?(?:what|how)\s+about\b|^(?:and|also|plus|same)\b|\b(?:the other one|that one|this one|the same)\b"
)
_FOLLOW_UP_FA_END = re.compile(r"(?:چطور|چطوری|چه طور|چی|چی میشه|چی می شه)\s*[?!.]*\s*$")
_FOLLOW_UP_FA = re.compile(r"^(?:و|خب|حالا|پس)\s|(?:اون یکی|این یکی|همین|همون|اونم|اینم)")
_ELLIPSIS = re.compile(r"(?:\.\.\.|…)")
_PREPOSITION_START = re.compile(r"^(?:برای|واسه|واسه ی|در|با|به|for|with|in|on|if)\b")
_PRONOUNS = {
    "it",
    "its",
    "that",
    "this",
    "they",
    "them",
    "those",
    "these",
    "one",
    "same",
    "there",
    "he",
    "she",
    "him",
    "her",
    "his",
    "اون",
    "آن",
    "این",
    "همین",
    "همون",
    "اونو",
    "اینو",
    "اونها",
    "اینها",
    "اونا",
    "اینا",
    "یکی",
    "اونم",
    "اینم",
    "ازش",
    "براش",
    "بهش",
}
_MAX_FOLLOW_UP_WORDS = 8
# «اگه اداره‌مون با یه بیمه خصوصی قرارداد داشته باشه چی؟», "And if he had died?": a condition with a
# bare «چی؟» leaves out what happens, which is what the previous question asked. However long the
# condition, the sentence only makes sense against that question.
_CONDITIONAL_FA = re.compile(r"^(?:و\s+)?(?:اگه|اگر)\s.+\s(?:چی|چطور|چطوری)\s*[?؟!.]*$")
_CONDITIONAL_EN = re.compile(r"^and\s+(?:what\s+)?if\b")
_MAX_CONDITIONAL_WORDS = 16

# Word kinds: a new word of a kind replaces the previous query's word(s) of the same kind.
_SLOTS: dict[str, tuple[str, ...]] = {
    "person": (
        "همسر",
        "زن",
        "شوهر",
        "خانم",
        "فرزند",
        "فرزندان",
        "بچه",
        "بچه ها",
        "پسر",
        "دختر",
        "پدر",
        "مادر",
        "والدین",
        "خودم",
        "wife",
        "husband",
        "spouse",
        "child",
        "children",
        "kid",
        "kids",
        "son",
        "daughter",
        "father",
        "mother",
        "parents",
        "parent",
        "myself",
    ),
    "vehicle": ("خودرو", "ماشین", "اتومبیل", "موتور", "موتورسیکلت", "car", "vehicle", "motorcycle", "motorbike"),
    # Lines of insurance in general; the tenant's own product words come from the documents the
    # thread's earlier replies cited (their product ids and titles, see `tenant_line_words`).
    "line": (
        "بدنه",
        "باربری",
        "مهندسی",
        "cargo",
        "engineering",
        "cyber",
        "شخص",
        "ثالث",
        "درمان",
        "تکمیلی",
        "عمر",
        "آتش",
        "سوزی",
        "مسافرتی",
        "سفر",
        "زلزله",
        "مسئولیت",
        "body",
        "third",
        "party",
        "health",
        "medical",
        "life",
        "fire",
        "travel",
        "liability",
        "comprehensive",
        "supplementary",
    ),
}


@lru_cache(maxsize=1)
def _slot_index() -> dict[str, str]:
    index: dict[str, str] = {}
    for slot, words in _SLOTS.items():
        for word in words:
            for term in content_terms(word):
                index.setdefault(term, slot)
    return index


def slot_of(word: str, lines: frozenset[str] = frozenset()) -> str | None:
    """The kind of a word ("person", "vehicle", "line") or None; `lines`: the tenant's product terms."""
    index = _slot_index()
    for term in content_terms(word):
        if term in index:
            return index[term]
        if term in lines:
            return "line"
    return None


def tenant_line_words(history: Sequence[HistoryTurn]) -> frozenset[str]:
    """Terms naming the tenant's products, from the documents the thread's replies cited: each
    product id's words and the title words that tell the cited products apart."""
    documents = [d.model_dump() for turn in history for d in turn.documents]
    terms: set[str] = set()
    for sequences in product_names(documents).values():
        for words in sequences:
            for word in words:
                terms.update(content_terms(word))
    return frozenset(terms)








# -- follow-ups -----------------------------------------------------------------------------------


def is_follow_up(message: str) -> bool:
    """A message that only makes sense against the previous question (see the module docstring)."""
    text = normalize(message)
    words = tokens(message)
    if not words:
        return False
    sentences = split_sentences(text)
    first = sentences[0] if sentences else text
    if len(words) <= _MAX_CONDITIONAL_WORDS and (_CONDITIONAL_FA.search(first) or _CONDITIONAL_EN.search(first)):
        return True
    if len(words) > _MAX_FOLLOW_UP_WORDS:
        return False
    if _FOLLOW_UP_EN.search(text) or _FOLLOW_UP_FA.search(text):
        return True
    if len(words) <= 5 and _FOLLOW_UP_FA_END.search(text):
        return True
    short = len(words) <= 5
    if short and (_ELLIPSIS.search(message) or any(word in _PRONOUNS for word in words)):
        return True
    return len(words) <= 4 and bool(_PREPOSITION_START.search(text))


def previous_query(history: Sequence[HistoryTurn]) -> str:
    """The latest standalone query of the thread (or the latest message when none was recorded)."""
    for turn in reversed(history):
        if turn.query.strip():
            return turn.query.strip()
    return history[-1].message.strip() if history else ""


def follow_up_base(history: Sequence[HistoryTurn]) -> str:
    """The query a follow-up refers to: the question a run of follow-ups started from.

    «سهم کارکنان دولت چه میزان است؟», «برای صاحبان مشاغل آزاد چطور؟», «روستاییان چطور؟»: the third
    asks the first question about روستاییان, not about صاحبان مشاغل آزاد and روستاییان together, so
    merging into the previous (already merged) query would pile up subjects that no sentence has.
    """
    turns = list(history)
    while len(turns) > 1 and turns[-1].query.strip() and is_follow_up(turns[-1].message):
        turns.pop()
    return previous_query(turns)


def residual_words(message: str) -> list[str]:
    """The message's own words without follow-up markers, pronouns and question words."""
    text = normalize(message, keep_zwnj=True)
    text = re.sub(r"^(?:and\s+)?(?:what|how)\s+about\b", " ", text)
    text = _FOLLOW_UP_FA_END.sub(" ", text)
    words = re.findall(r"[\w\u200c]+", text)
    noise = noise_terms()
    kept = []
    for word in words:
        plain = word.replace("\u200c", " ")
        terms = content_terms(plain)
        if plain in _PRONOUNS or plain in {"and", "also", "plus", "و", "خب", "حالا", "پس", "same"}:
            continue
        if terms and all(term in noise for term in terms):
            continue
        kept.append(word)
    return kept


def _in_persian(word: str) -> str:
    """A Latin word's Persian rendering from the domain glossary, else the word itself."""
    if not word.isascii():
        return word
    rendering = persian_expansion(word)
    return rendering[0] if rendering else word


# A description of oneself: "I'm self-employed", "if I were a government employee", «کارمند دولت
# هستم», «اگه بازنشسته بودم».
_SELF_DESCRIPTION = re.compile(
    r"\bi\s*(?:'m|am|was|were)\b|\bif\s+i\s+(?:was|were)\b|(?<!\w)(?:هستم|بودم|باشم)(?!\w)", re.IGNORECASE
)


def without_self_description(query: str) -> str:
    """`query` without the statements before its first question sentence that describe the customer
    ("I'm self-employed."); all of `query` when it has none."""
    sentences = split_sentences(query)
    for index, sentence in enumerate(sentences):
        if sentence.endswith(("?", "؟")):
            told = sentences[:index]
            if told and all(_SELF_DESCRIPTION.search(normalize(statement)) for statement in told):
                return " ".join(sentences[index:])
            return query
    return query


def merge_follow_up(previous: str, message: str, lines: frozenset[str] = frozenset()) -> str:
    """The previous standalone query with the follow-up's words replacing or extending it.

    A follow-up that describes the customer anew ("And if I were a government employee?") asks the
    previous question of that person, not of the one described before it: merged with "I'm
    self-employed. How much …?", it asked about both at once, which no sentence answers. Any other
    new circumstance ("And if it was parked outside?" after "My car was stolen. …") adds to the
    story, which stays."""
    base = _EXPANSION.sub("", previous).strip()
    residual = residual_words(message)
    if _SELF_DESCRIPTION.search(normalize(message)):
        base = without_self_description(base)
    mark = base[-1] if base and base[-1] in "?؟" else ""
    base = base.rstrip(" ?؟.!")
    base_words = base.split()
    consumed: set[int] = set()
    for slot in _SLOTS:
        new = [i for i, word in enumerate(residual) if slot_of(word, lines) == slot]
        old = [i for i, word in enumerate(base_words) if slot_of(word, lines) == slot]
        if not new or not old:
            continue
        replacement = " ".join(residual[i] for i in new)
        if detect_language(" ".join(base_words[i] for i in old)) == "fa":
            replacement = " ".join(_in_persian(residual[i]) for i in new)
        base_words = [replacement if i == old[0] else w for i, w in enumerate(base_words) if i not in old[1:]]
        consumed.update(new)
    remaining = [word for i, word in enumerate(residual) if i not in consumed]
    if detect_language(base) == "fa":
        remaining = [_in_persian(word) for word in remaining]
    if consumed and all(not content_terms(word) for word in remaining):
        remaining = []  # only a preposition ("برای", "for") is left over: it already sits in the base
    merged = " ".join(base_words + remaining)
    return (merged + mark).strip()


def with_expansion(query: str) -> str:
    """`query` in written Persian (insurance_offline/colloquial.py), plus, in brackets, the Persian renderings of its
    English domain words and the documents' words for its everyday ones (ماشین -> خودرو)."""
    core = formalize(_EXPANSION.sub("", query).strip())
    present = text_terms(core)
    extra = [phrase for phrase in persian_expansion(core) if not text_terms(phrase) <= present]
    extra += [phrase for phrase in register_expansion(core) if phrase not in extra]
    return f"{core} [{' '.join(extra)}]" if extra else core


class LocalContextualizer:
    """The contextualize role of the offline provider."""

    def __call__(self, request: ContextualizeRequest) -> ContextualizeResult:
        if request.attempt > 0 and request.previous_query.strip():
            # A later round: the previous query found nothing sufficient; search wider, not the same.
            return ContextualizeResult(standalone_query=broaden(request.previous_query))
        message = request.message.strip()
        history = request.history
        if history:
            last = history[-1]
            if last.status == "clarify" and last.options:
                option = pick_option(message, last.options)
                if option is not None:
                    scope = {
                        key: value for key, value in (("file_id", option.file_id), ("domain", option.domain)) if value
                    }
                    query = previous_query(history) or message
                    return ContextualizeResult(standalone_query=with_expansion(query), scope=scope)
            earlier = follow_up_base(history)
            if earlier and is_follow_up(message):
                merged = merge_follow_up(earlier, message, tenant_line_words(history))
                return ContextualizeResult(standalone_query=with_expansion(merged))
        return ContextualizeResult(standalone_query=with_expansion(message))
