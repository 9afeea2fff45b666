"""Local generate: greetings and refusals by template; passages the question is pinned to, quoted.

Without a model nothing can tell whether a passage that shares the question's words answers it: the
failure is a quote on the topic that states another condition, or stops before the fact asked. So a
knowledge turn is answered only with the passage the question is pinned to by structure
(`GenerateRequest.pinned`, policy/provisions.py: the user's pick among the passages a clarifying
question offered, or a provision the question names by number): its sentences and rows, verbatim and
cited, as far as `max_passage_chars`. A question pinned to no passage, or to several, is not answered
(answered=False): grade offered the passages to choose from, or the graph hands the turn over with
them. An account turn quotes the asked fields of the user's own policy records.

`quoting=True` is the drafter of the wire stand-ins (tools/agent_harness), which play a model that
reads: it quotes by shared words, as follows, and is sometimes confidently wrong, as a model is.

For knowledge and account turns the quoting answer is extractive. Each retrieved chunk is cut into
quotable units: sentences (split_sentences) and Markdown table rows, each with its local context
(the section heading, the sentence that introduces a list or a table, the table's header row).
A unit is scored by the IDF-weighted share of the query's concepts that it covers together with
that context and its document's metadata (title, product), the weights computed across the
retrieved chunks (insurance_offline/lexical.py: stemmed, stopwords and question words out, a small English-Persian
glossary so that an English question can be matched against Persian evidence). Ties go to units
of the right shape (a number for "how much" questions, never a dangling "as follows:"), then to
units that cover the query in their own words.

Query words that the evidence spells differently (colloquial or inflected forms, joined compounds,
one-letter typos) are matched to the evidence's spelling first (lexical.ground_concepts). Only
units of the right kind are candidates (question.py): a number for "how many"/"what year", a
reason for "why", a negation for a negated question, the document or subject position for "what is
X?". When the question names what some retrieved document is about (its title or product), only
such documents may answer: a sentence elsewhere that shares the question's words is a distractor.

When a list's introducing sentence («… به شرح زیر است:») covers the question by its own words as well
as the best candidate does, that list is the answer: only its items may be quoted, and a sentence
elsewhere that shares the words (a passing mention) is not. A document that never speaks of a notion
of the question that other retrieved evidence names answers only with a quote that covers most of the
question by itself (question.py, `unnamed_by`).

The best one to three units above `min_support` (and within `relative_floor` of the best) are
quoted verbatim, Markdown emphasis aside, each as a claim citing its chunk; a quoted table row is
preceded by its header row, quoted and cited the same way. A unit must cover a query concept in its
own words or local context (the title alone is not enough) and say something beyond the query.
Nothing is paraphrased, translated or computed: an English question answered from Persian
evidence gets the Persian quote framed in English ("According to <title>: <quote>").

The draft says answered=False with an empty answer when no unit covers the query enough, or when a
domain notion the question names (a glossary term: "earthquake", «فرانشیز») appears in none of the
retrieved chunks: the graph then hands off, which is the correct output in insurance. Confidence is
the query coverage of the quoted units with their context (0..1). Sentences named in `feedback`
(claims a verify found unsupported) are never quoted again.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from insurance_offline.lexical import (
    Concept,
    canonical,
    concept_weights,
    coverage,
    evidence_terms,
    line_terms,
    metadata_text,
    missing_key_concepts,
    query_concepts,
    text_terms,
)
from insurance_agent.models.chunks import RetrievedChunk
from insurance_agent.models.roles import Claim, GenerateRequest, GenerateResult, Intent
from insurance_agent.policy.provisions import own_text
from insurance_agent.policy.untrusted import is_instruction_like
from insurance_agent.quotes import TABLE_SEPARATOR, plain, quote_claim, table_cells
from insurance_offline.question import (
    AnalysedQuestion,
    carries,
    english_keys,
    fits,
    focus_concepts,
    has_number,
    named_lines,
    privative_concepts,
    QuestionShape,
    question_shape,
    question_concepts,
    specific_tier,
    unnamed_by,
    without_references,
)
from insurance_agent.text import normalize, split_sentences, tokens


_THANKS = re.compile(r"ممنون|مرسی|متشکر|سپاس|دست(?:ت|تون)? درد نکنه|thank|thanks|thx|appreciate", re.IGNORECASE)
_BYE = re.compile(r"خداحافظ|خدانگهدار|فعلا|بدرود|\bbye\b|goodbye|see you", re.IGNORECASE)

_CHITCHAT = {
    "thanks": {
        "fa": "خواهش می‌کنم! اگر سؤال دیگری درباره بیمه دارید، بپرسید.",
        "en": "You're welcome! If you have another question about insurance, just ask.",
    },
    "bye": {
        "fa": "خدانگهدار! هر وقت سؤالی درباره بیمه داشتید، در خدمتم.",
        "en": "Goodbye! I'm here whenever you have a question about insurance.",
    },
    "hello": {
        "fa": "سلام! من دستیار پاسخ‌گویی به سؤالات بیمه هستم. درباره پوشش‌ها، حق بیمه، خسارت یا شرایط بیمه‌نامه‌ها بپرسید.",
        "en": "Hello! I'm the insurance assistant. Ask me about coverage, premiums, claims or policy terms.",
    },
}
_REFUSAL = {
    "fa": (
        "متأسفم، من فقط به سؤالات مربوط به بیمه پاسخ می‌دهم. اگر سؤالی درباره بیمه‌نامه‌ها، پوشش‌ها یا خسارت دارید، بپرسید."
    ),
    "en": "Sorry, I can only answer questions about insurance. Ask me about policies, coverage or claims.",
}


_PARAGRAPH_BREAK = re.compile(r"\n\s*\n")
# Questions whose answer is a quantity: a sentence with a number answers them better than one without.
_QUANTITY = re.compile(
    r"چقدر|چقد|چند|چه مقدار|چه میزان|میزان|مبلغ|سقف|حداکثر|حداقل|درصد|نرخ|قیمت|هزینه|"
    r"\bhow (?:much|many|long|old|soon)\b|\b(?:cost|price|limit|percentage|rate|amount|maximum|minimum|deductible)s?\b",
    re.IGNORECASE,
)
_CLOSING = (".", "!", "?", "؟", ":", ";", "؛", "…")


@dataclass(frozen=True)
class Unit:
    """A quotable piece of a chunk: a sentence or a table row, with the local context that frames it
    (the section heading, the sentence introducing a list or table, the table's header row)."""

    text: str
    context: str
    header: str | None
    position: int
    #: the sentence that introduces the unit (a list's or table's «به شرح زیر است:»), if any
    lead: str = ""
    #: the index of the chunk paragraph (blank-line separated block) the unit is in
    paragraph: int = 0


# A list item: «الف- ...», «ب ـ ...», «۱ـ ...», "2) ...", or a "label: value" line. Statutes and
# bylaws end such items without punctuation; they are content, never headings.
_LIST_ITEM = re.compile(r"^(?:[\u0600-\u06ff]{1,3}|\d{1,3})\s*[-ـ–—.)]\s*\S|^[^:：]{1,60}[:：]\s*\S")


# An enumerated item («الف-», «ب ـ», «۱ـ», "2)"), and a labelled one («کارکنان دولت: …») that says
# what it is about even without the sentence introducing its list.
_ENUMERATED = re.compile(r"^(?:[\u0600-\u06ff]{1,3}|[\d\u06f0-\u06f9]{1,3})\s*[-ـ–—.)]\s*\S")
_LABELLED = re.compile(r"^(?:(?:[\u0600-\u06ff]{1,3}|[\d\u06f0-\u06f9]{1,3})\s*[-ـ–—.)]\s*)?[^:：]{1,60}[:：]\s*\S")


def _heading_like(lines: list[str]) -> bool:
    """A lone short line with no closing punctuation: a heading merged into the text by expansion."""
    if len(lines) != 1:
        return False
    line = normalize(lines[0], keep_zwnj=True)
    if _LIST_ITEM.match(line):
        return False
    return len(line.split()) <= 10 and not line.endswith(_CLOSING) and not line.startswith(("-", "*", "|"))


def _same_title(heading: str, title: str) -> bool:
    return bool(heading) and (title.startswith(heading) or heading.startswith(title))


def evidence_units(chunk: RetrievedChunk) -> list[Unit]:
    """The chunk's sentences and table rows in reading order (headings and table headers are context)."""
    units: list[Unit] = []
    # A heading that only repeats the document's title is not local context: the title already
    # names every sentence of the document, and alone it must never make a sentence relevant.
    title = canonical(chunk.title)
    parts = [part for part in (chunk.heading or "").split(" > ") if part.strip()]
    heading = "\n".join(part for part in parts if not _same_title(canonical(part), title))
    lead = ""
    for number, paragraph in enumerate(_PARAGRAPH_BREAK.split(chunk.text)):
        lines = [line.strip() for line in paragraph.strip().splitlines() if line.strip()]
        if not lines:
            continue
        if all(line.startswith("|") for line in lines):
            header = None
            for index, line in enumerate(lines):
                if TABLE_SEPARATOR.match(line):
                    continue
                if header is None and index + 1 < len(lines) and TABLE_SEPARATOR.match(lines[index + 1]):
                    header = plain(" | ".join(table_cells(line)))
                    continue
                row = " | ".join(cell for cell in table_cells(line) if cell)
                if row:
                    units.append(
                        Unit(plain(row), f"{heading}\n{lead}\n{header or ''}", header, len(units), plain(lead), number)
                    )
            lead = ""
            continue
        if _heading_like(lines):
            heading, lead = lines[0], ""
            continue
        # matched on the raw line: normalisation drops the kashida of «ب ـ»
        items = all(_ENUMERATED.match(plain(line)) for line in lines)
        for line in lines:
            if items and not lead and not _LABELLED.match(plain(line)):
                # «ب ـ به نحو مطمئنی …»: one clause of a list whose introducing sentence is not in
                # this chunk. Quoted alone it states a condition of an unknown rule.
                continue
            for sentence in split_sentences(line):
                if is_instruction_like(sentence):
                    continue  # documents are data: text addressed to the assistant is never quoted
                units.append(Unit(plain(sentence).strip(), f"{heading}\n{lead}", None, len(units), plain(lead), number))
        if lines[-1].endswith((":", "：")):
            lead = lines[-1]
        elif not items:
            lead = ""  # the items of a list keep the sentence that introduced them
    return units


def neighbour_terms(units: list[Unit], index: int) -> frozenset[str]:
    """The words of the sentences just before and after `units[index]` in its paragraph of running
    prose: «مجیدی در ۴۵ بازی ملی ۱۰ گل به ثمر رسانده‌است.» names the career its next sentence is
    about. Table rows and list items have none: the next row or item is another case."""
    unit = units[index]
    if unit.header is not None or unit.lead:
        return frozenset()
    around = [
        units[i].text
        for i in (index - 1, index + 1)
        if 0 <= i < len(units)
        and units[i].paragraph == unit.paragraph
        and units[i].header is None
        and not units[i].lead
    ]
    return text_terms("\n".join(around))


# «مبلغ این ودیعه …», «مرجع مذکور …», "such a deposit": a sentence that names its subject by pointing
# back to the sentence before it. «این قانون» / «این آیین‌نامه» point to the document, not back. The
# pointer need not open the sentence: «صندوق موظف است ظرف پانزده روز … پس از ارسال مدارک مذکور …»
# states a deadline whose case (which file, sent when) is only in the sentence before it.
_ANAPHOR = re.compile(
    r"(?<!\w)(?:این|همین)\s+(?!قانون|آیین|آیین نامه|آئین|ماده|تبصره|بند|مصوبه|فصل|اساسنامه|دستورالعمل)\w+"
    r"|\w+\s+(?:مذکور|یادشده|یاد شده|مزبور)(?!\w)"
    r"|\b(?:this|these|such|the said)\s+(?!act|law|regulation|bylaw|article|note|clause)\w+",
    re.IGNORECASE,
)


def antecedent(units: list[Unit], index: int) -> Unit | None:
    """The sentence `units[index]` points back to for its subject («… مبلغی … تودیع نمایند. مبلغ این
    ودیعه … از پانصد هزار دلار کمتر نخواهد بود.»): the one just before it in its paragraph of prose,
    when it has a pointing phrase. Table rows and list items have none."""
    unit = units[index]
    if index == 0 or unit.header is not None or unit.lead:
        return None
    before = units[index - 1]
    if before.paragraph != unit.paragraph or before.header is not None or before.lead:
        return None
    return before if _ANAPHOR.search(normalize(unit.text)) else None


def quote_terms(unit: Unit, lead: bool = False, referred: bool = True) -> frozenset[str]:
    """The terms a quote carries by itself: its own words and, for a table row, the header row;
    with `lead`, also the sentence introducing its list («مدارک زیر:»), which names what the items
    are but not what each says. Never the section heading or the document title. Without
    `referred`, not the nouns the quote only refers to («مدارک لازم»)."""
    text = unit.text if referred else without_references(unit.text)
    return text_terms(f"{text}\n{unit.lead if lead else ''}\n{unit.header or ''}")


@dataclass(frozen=True)
class _Candidate:
    chunk: RetrievedChunk
    unit: Unit
    own: frozenset[str]
    context: frozenset[str]
    #: the sentence the quote points back to, quoted before it (`antecedent`)
    before: str = ""
    #: how much of the question (what the document's title does not name) the quote covers itself
    share: float = 0.0


@dataclass(frozen=True)
class _Question:
    """What a draft's question asks, read once: its concepts and what the evidence says of them."""

    query: AnalysedQuestion
    concepts: list[Concept]
    weights: list[float]
    #: per concept: whether some retrieved evidence names it (a follow-up: only its own words count)
    present: list[bool]
    #: what a quote must cover by itself: the whole question, or a follow-up's own words
    own_concepts: list[Concept]
    own_weights: list[float]
    asked: QuestionShape
    focus: tuple[Concept, ...]
    lines: tuple[Concept, ...]
    absent: tuple[Concept, ...]
    quantity: bool
    account: bool
    #: canonical forms of the sentences a verify found unsupported: never quoted again
    rejected: list[str]


def _read_question(
    request: GenerateRequest,
    query: AnalysedQuestion,
    chunks: list[RetrievedChunk],
    documents: list[frozenset[str]],
    concepts: list[Concept],
    weights: list[float],
) -> _Question:
    present = [any(concept.covered_by(terms) for terms in documents) for concept in concepts]
    # A follow-up («برای صاحبان مشاغل آزاد چطور؟») is contextualized into the previous question
    # plus its own words: what it newly asks about is in its own words, and the previous
    # question's subject (which it replaces) must not be demanded of the quote.
    said = text_terms(request.message)
    fresh = [bool(concept.stems & said) for concept in concepts]
    # What the quote must cover by itself: the whole question, or a follow-up's own words (the
    # rest it inherits may come from the quote's context: heading, title).
    own_concepts, own_weights = concepts, weights
    if any(f and p for f, p in zip(fresh, present, strict=True)) and not all(fresh):
        present = [f and p for f, p in zip(fresh, present, strict=True)]
        kept = [i for i, f in enumerate(fresh) if f]
        own_concepts, own_weights = [concepts[i] for i in kept], [weights[i] for i in kept]
    return _Question(
        query=query,
        concepts=concepts,
        weights=weights,
        present=present,
        own_concepts=own_concepts,
        own_weights=own_weights,
        asked=question_shape(query, concepts, frozenset(w for c in chunks for w in tokens(c.text))),
        focus=focus_concepts(query, concepts),
        lines=named_lines(query, concepts),
        absent=privative_concepts(query, concepts),
        quantity=bool(_QUANTITY.search(query.normalized)),
        account=request.route == Intent.ACCOUNT,
        rejected=[canonical(item) for item in request.feedback if canonical(item)],
    )


@dataclass(frozen=True)
class _Document:
    """One retrieved chunk as a source of quotes for the question: what its quotes must cover."""

    chunk: RetrievedChunk
    rank: int
    title: frozenset[str]
    topic: frozenset[str]
    #: what the question names, the evidence speaks of and this document never does (question.py)
    gaps: tuple[Concept, ...]
    #: what this document does not already name, the quote itself must (question.py)
    tier: tuple[Concept, ...]
    #: an English question's specific notions, and the question's focus: all in the quote
    needed: tuple[Concept, ...]
    #: the line of insurance asked about, when the document does not name it (question.py)
    line_open: bool
    #: the question's concepts the title does not name (all when it names them all), with weights
    floor_concepts: list[Concept]
    floor_weights: list[float]


def _read_document(
    question: _Question, chunk: RetrievedChunk, rank: int, title: frozenset[str], spoken: frozenset[str]
) -> _Document:
    q = question
    topic = title | text_terms(chunk.heading or "")
    # What the document's title names (its subject: «حق بیمه», "supplementary health") the quote
    # need not repeat; of the rest, the quote must cover enough by itself.
    unnamed = [i for i, concept in enumerate(q.own_concepts) if not concept.covered_by(title)]
    return _Document(
        chunk=chunk,
        rank=rank,
        title=title,
        topic=topic,
        gaps=unnamed_by(q.concepts, q.present, spoken, q.query),
        tier=specific_tier(q.concepts, q.weights, topic, q.present),
        needed=q.focus + english_keys(q.concepts, topic),
        line_open=bool(q.lines) and not any(line.covered_by(topic) for line in q.lines),
        floor_concepts=[q.own_concepts[i] for i in unnamed] if unnamed else q.own_concepts,
        floor_weights=[q.own_weights[i] for i in unnamed] if unnamed else q.own_weights,
    )


# The rank key of a candidate quote, best first: own policy record, support, shape, own coverage,
# retrieval score, retrieval rank, position in its chunk; then the candidate itself.
_Scored = tuple[bool, float, bool, float, float, int, int, _Candidate]


ACCOUNT_PREFIX = "account:"

# The fields of a policy record: what a question asks (matched on the normalised message) and how
# the record labels it (matched on the "label: value" lines of an account chunk, Persian or English).
_ACCOUNT_FIELDS: dict[str, tuple[re.Pattern[str], re.Pattern[str]]] = {
    field: (re.compile(asked, re.IGNORECASE), re.compile(label, re.IGNORECASE))
    for field, asked, label in (
        (
            "end_date",
            r"تمام|تموم|پایان|انقضا|منقضی|تا کی|تا چه (?:تاریخ|زمانی)|اعتبار|تمدید|expir|\bend|until|renew",
            r"^(?:تاریخ پایان|end date)$",
        ),
        ("start_date", r"شروع|از کی|از چه (?:تاریخ|زمانی)|\bstart|\bbegan|\bsince", r"^(?:تاریخ شروع|start date)$"),
        ("status", r"وضعیت|فعال|معتبر|اعتبار|\bstatus|\bactive|\bvalid", r"^(?:وضعیت|status)$"),
        ("premium", r"حق بیمه|قسط|پرداخت|\bpremium|\bpaying|\bpay\b|how much", r"^(?:حق بیمه|premium)$"),
        ("deductible", r"فرانشیز|deductible", r"^(?:فرانشیز|deductible)$"),
        ("coverage_limit", r"سقف|تعهد|پوشش|limit|\bcover", r"^(?:سقف پوشش|coverage limit)$"),
        (
            "insured",
            r"موضوع|خودرو|ماشین|چه کس|کسانی|کی رو|چه کسی|insured|vehicle|\bcar\b|\bwho\b",
            r"^(?:موضوع بیمه|insured)$",
        ),
    )
}
_FIELD_LINE = re.compile(r"^\s*([^:：]{1,40})[:：]\s*\S")


def is_account_evidence(chunk: RetrievedChunk) -> bool:
    """A chunk made from the user's own policy record by the account node (ids "account:<masked>")."""
    return chunk.chunk_id.startswith(ACCOUNT_PREFIX)


class LocalGenerator:
    def __init__(
        self,
        min_support: float = 0.55,
        max_quotes: int = 3,
        relative_floor: float = 0.75,
        min_words: int = 3,
        broad_support: float = 0.7,
        quoting: bool = False,
        max_passage_chars: int = 1200,
    ) -> None:
        self.quoting = quoting
        self.max_passage_chars = max_passage_chars
        self.min_support = min_support
        self.broad_support = broad_support
        self.max_quotes = max_quotes
        self.relative_floor = relative_floor
        self.min_words = min_words

    def __call__(self, request: GenerateRequest) -> GenerateResult:
        language = request.language
        if request.route == Intent.CHITCHAT:
            kind = "thanks" if _THANKS.search(request.message) else "bye" if _BYE.search(request.message) else "hello"
            return GenerateResult(answer=_CHITCHAT[kind][language], answered=True, confidence=1.0)
        if request.route == Intent.OUT_OF_SCOPE:
            return GenerateResult(answer=_REFUSAL[language], answered=True, confidence=1.0)
        if request.route == Intent.HANDOFF_REQUEST:
            return self._abstain()
        if request.route == Intent.ACCOUNT and any(is_account_evidence(chunk) for chunk in request.chunks):
            return self._account(request)
        if self.quoting:
            return self._extract(request)
        return self._pinned(request)

    def _pinned(self, request: GenerateRequest) -> GenerateResult:
        """The one passage the question is pinned to, quoted from its start; else no answer."""
        passages = [chunk for chunk in request.chunks if chunk.chunk_id in set(request.pinned)]
        if len({chunk.chunk_id for chunk in passages}) != 1:
            return self._abstain()
        # from the passage's own section on, as its option named it (not the neighbours merged before it)
        chunk = passages[0].model_copy(update={"text": own_text(passages[0])})
        rejected = [canonical(item) for item in request.feedback if canonical(item)]
        claims: list[Claim] = []
        length = 0
        for unit in evidence_units(chunk):
            key = canonical(unit.text)
            if not key or any(key in item or item in key for item in rejected):
                continue
            if claims and length + len(unit.text) > self.max_passage_chars:
                break
            if unit.header and not claims:
                claims.append(quote_claim(chunk, unit.header, request.language))
            claims.append(quote_claim(chunk, unit.text, request.language, framed=not claims))
            length += len(unit.text)
        if not claims:
            return self._abstain()
        return GenerateResult(
            answer="\n".join(claim.text for claim in claims),
            claims=claims,
            citations=[chunk.chunk_id],
            answered=True,
            confidence=1.0,
        )

    def _account(self, request: GenerateRequest) -> GenerateResult:
        """Look the asked fields up in the user's own policy records and quote those lines.

        The records the question names (by product words that tell them apart) are used, or all of
        them when it names none; a question about a line of insurance the user holds no policy of is
        not answered. Each quoted record starts with its title line, then the asked fields' lines
        (all lines when no field is recognised).
        """
        records = [chunk for chunk in request.chunks if is_account_evidence(chunk)]
        concepts = query_concepts(f"{request.message}\n{request.query}")
        labels = [text_terms(metadata_text(chunk)) for chunk in records]
        named = [c for c in concepts if not all(c.covered_by(terms) for terms in labels) and c.stems & line_terms()]
        if named:
            hits = [sum(c.covered_by(terms) for c in named) for terms in labels]
            if max(hits) == 0:
                return self._abstain()  # asks about a policy the user does not hold
            records = [chunk for chunk, count in zip(records, hits, strict=True) if count == max(hits)]
        asked = normalize(f"{request.message}\n{request.query}")
        fields = [field for field, (question, _) in _ACCOUNT_FIELDS.items() if question.search(asked)]

        claims: list[Claim] = []
        for chunk in records[: self.max_quotes]:
            lines = [line.strip() for line in chunk.text.splitlines() if line.strip()]
            if not lines:
                continue
            # the first line names the policy; the frame already says it when it is the title
            chosen = [lines[0]] if lines[0] != chunk.title.strip() else []
            for line in lines[1:]:
                match = _FIELD_LINE.match(line)
                label = match.group(1).strip() if match else ""
                if not fields or any(_ACCOUNT_FIELDS[f][1].match(label) for f in fields):
                    chosen.append(line)
            if not any(_FIELD_LINE.match(line) for line in chosen):
                chosen = lines[1:] or lines  # the asked field is not in this record: show the record
            claims += [quote_claim(chunk, line, request.language, framed=i == 0) for i, line in enumerate(chosen)]
        if not claims:
            return self._abstain()
        return GenerateResult(
            answer="\n".join(claim.text for claim in claims),
            claims=claims,
            citations=list(dict.fromkeys(cid for claim in claims for cid in claim.chunk_ids)),
            answered=True,
            confidence=1.0 if fields else 0.8,
        )

    @staticmethod
    def _abstain(confidence: float = 0.0) -> GenerateResult:
        return GenerateResult(answer="", answered=False, confidence=round(min(max(confidence, 0.0), 1.0), 4))

    def _extract(self, request: GenerateRequest) -> GenerateResult:
        """Quote the best units of the evidence: read the question, gather candidates, choose, compose."""
        chunks = list(request.chunks)
        documents = evidence_terms(chunks)
        # The question is read once for the draft: every check and every document shares this reading.
        query = AnalysedQuestion(request.query)
        concepts = question_concepts(query, documents)
        if not concepts or not chunks:
            return self._abstain()
        weights = concept_weights(concepts, documents)
        if missing_key_concepts(concepts, documents):
            return self._abstain()  # e.g. asked about earthquakes, and no evidence mentions one
        question = _read_question(request, query, chunks, documents, concepts, weights)
        scored, leads = self._candidates(question, chunks, documents)
        chosen, best = self._choose(scored, leads, numeric=question.quantity or question.asked.needs_number)
        if not chosen:
            return self._abstain(best)
        covered: set[str] = set()
        for candidate in chosen:
            covered |= candidate.context
        return self._compose(chosen, question.focus, request.language, coverage(concepts, covered, weights))

    def _candidates(
        self, question: _Question, chunks: list[RetrievedChunk], documents: list[frozenset[str]]
    ) -> tuple[list[_Scored], dict[str, float]]:
        """Every unit that may answer, with its rank key; and each list's introducing sentence with its share."""
        scored: list[_Scored] = []
        seen: set[str] = set()
        # The sentences introducing a list («وظایف هیأت نظارت به شرح زیر است:»), with how much of the
        # question each covers by its own words.
        leads: dict[str, float] = {}
        titles = [text_terms(metadata_text(chunk)) for chunk in chunks]
        # When the question names what some retrieved document is about, an answer from a document
        # about something else is a distractor: only documents whose metadata it names may answer.
        named = [any(concept.covered_by(terms) for concept in question.concepts) for terms in titles]
        # What each document says across its retrieved passages (with its title and headings).
        spoken: dict[str, frozenset[str]] = {}
        for chunk, terms in zip(chunks, documents, strict=True):
            spoken[chunk.file_id] = spoken.get(chunk.file_id, frozenset()) | terms
        for rank, chunk in enumerate(chunks):
            if any(named) and not named[rank]:
                continue
            document = _read_document(question, chunk, rank, titles[rank], spoken[chunk.file_id])
            units = evidence_units(chunk)
            for index, unit in enumerate(units):
                if unit.lead:
                    # the introducing sentence itself, not what its line says before it
                    introducing = (split_sentences(unit.lead) or [unit.lead])[-1]
                    lead_key = canonical(unit.lead)
                    lead_share = coverage(document.floor_concepts, text_terms(introducing), document.floor_weights)
                    leads[lead_key] = max(leads.get(lead_key, 0.0), lead_share)
                key = canonical(unit.text)
                if not key or key in seen or len(tokens(unit.text)) < self.min_words:
                    continue
                seen.add(key)
                if any(key in item or item in key for item in question.rejected):
                    continue
                item = self._admit(question, document, units, index)
                if item is not None:
                    scored.append(item)
        return scored, leads

    def _admit(self, question: _Question, document: _Document, units: list[Unit], index: int) -> _Scored | None:
        """The rank key of one unit as a quote, or None when it is not an answer to the question."""
        unit, q, doc = units[index], question, document
        own = text_terms(unit.text)
        if own and all(any(term in concept.stems for concept in q.concepts) for term in own):
            return None  # it only repeats the question
        if not fits(q.asked, unit.text, unit.context, doc.topic):
            return None  # not the kind of sentence that answers this question (question.py)
        if unit.text.rstrip().endswith((":", "：")):
            return None  # «… به شرح زیر است:» introduces the answer, it is not one
        # «چه مدارکی …؟» and a list introduced by «… مدارک زیر:»: the introducing sentence
        # names what was asked, so its items are the answer and it frames each of them.
        # A labelled item («ب- موتورسیکلت: سه درصد …») under «حق بیمه … به شرح زیر:» is a row
        # of a table written as a list: its introducing sentence is its header.
        listed = bool(unit.lead) and (
            (bool(q.focus) and all(c.covered_by(text_terms(unit.lead)) for c in q.focus))
            or bool(_LABELLED.match(unit.text))
        )
        carried = quote_terms(unit, lead=listed)
        with_lead = quote_terms(unit, lead=True)
        if q.absent and not all(c.covered_by(with_lead) for c in q.absent):
            return None  # «تخفیف عدم خسارت» asked, and a sentence on discounts (question.py)
        if doc.line_open and not any(line.covered_by(with_lead) for line in q.lines):
            return None  # «بیمه درمان» asked, and a sentence on vehicle premiums (question.py)
        if q.focus and not all(c.covered_by(quote_terms(unit, lead=True, referred=False)) for c in q.focus):
            return None  # «چه مدارکی؟» and a sentence that only mentions «مدارک لازم» (question.py)
        beside = carried | neighbour_terms(units, index)
        # A quote that by itself covers most of the question need not also name its rarest
        # notion: that is often the customer's circumstance («دکتر», «جاده») or a plain word
        # the document says otherwise («نتیجه» for «نظر … اعم از قبول یا رد»).
        share = coverage(doc.floor_concepts, carried, doc.floor_weights)
        broad = share >= self.broad_support
        if doc.gaps and not broad:
            return None  # the question names a case this document never speaks of (question.py)
        if not carries(carried, doc.needed, () if broad else doc.tier, with_lead, beside):
            return None  # the right topic, but not what is asked: a confident wrong answer
        local = own | text_terms(unit.context)
        if coverage(q.concepts, local, q.weights) == 0.0:
            return None  # the document title alone cannot make a sentence relevant
        before = ""
        if share < self.min_support:
            # The quote (with the sentence introducing it) must itself cover enough of the
            # question: a heading or a title that shares the question's words does not make
            # a sentence under it an answer. A sentence naming its subject as «این ودیعه»
            # may cover it with the sentence it points back to, and is quoted with it.
            prior = antecedent(units, index)
            if prior is None or coverage(doc.floor_concepts, carried | text_terms(prior.text), doc.floor_weights) < (
                self.min_support
            ):
                return None
            before = prior.text
            local |= text_terms(before)
        support = coverage(q.concepts, local | doc.title, q.weights)
        own_cover = coverage(q.concepts, carried, q.weights)
        # answer shape: a quantity for "how much" questions; never a dangling "as follows:"
        shape = (not q.quantity or has_number(unit.text)) and not unit.text.endswith(":")
        candidate = _Candidate(doc.chunk, unit, own, local | doc.title, before, share)
        # an account question is about the user's own policy records first
        own_policy = q.account and is_account_evidence(doc.chunk) and support >= self.min_support
        return (own_policy, support, shape, own_cover, doc.chunk.score, -doc.rank, -unit.position, candidate)

    def _choose(self, scored: list[_Scored], leads: dict[str, float], numeric: bool) -> tuple[list[_Candidate], float]:
        """The quotes to give, best first, and the best support; no quotes when none supports enough."""
        if scored:
            # A list whose introducing sentence names what is asked as well as the best quote does is
            # the answer: a sentence elsewhere that shares the words (what happens when the board's
            # duties are neglected, for "what are the board's duties?") is a passing mention. Only that
            # list's items may answer; when none of them can be quoted by itself, the turn is handed off.
            top = max(item[-1].share for item in scored)
            answering = {lead for lead, share in leads.items() if share >= max(top, self.min_support) - 1e-9}
            if answering:
                scored = [item for item in scored if canonical(item[-1].unit.lead) in answering]
        if not scored:
            return [], 0.0
        scored.sort(key=lambda item: item[:7], reverse=True)
        best = max(item[1] for item in scored)
        if best < self.min_support:
            return [], best
        floor = max(self.min_support, self.relative_floor * best)
        chosen = [item[-1] for item in scored if item[1] >= floor][: self.max_quotes]
        if numeric:
            # One figure asked, and another document's sentence with a figure of its own: that is
            # another case's number (the fund's deadline after the licence's), a second answer to
            # choose from, not more of this one.
            first = chosen[0].chunk.file_id
            chosen = [c for c in chosen if c.chunk.file_id == first or not has_number(c.unit.text)]
        return chosen, best

    def _compose(
        self, chosen: list[_Candidate], focus: list[Concept], language: str, confidence: float
    ) -> GenerateResult:
        """The chosen quotes as cited claims."""
        # A table's header row is context, never a quote of its own. The first quote from a
        # document names it (briefly); further quotes from the same document do not repeat it.
        claims: list[Claim] = []
        named: set[str] = set()
        introduced: set[str] = set()
        for candidate in chosen:
            framed = candidate.chunk.file_id not in named
            named.add(candidate.chunk.file_id)
            lead = candidate.unit.lead
            if lead and focus and all(c.covered_by(text_terms(lead)) for c in focus) and lead not in introduced:
                # a list item answering «چه مدارکی؟» is shown under the sentence that introduces it
                introduced.add(lead)
                claims.append(quote_claim(candidate.chunk, lead, language, framed=framed))
                framed = False
            quote = f"{candidate.before} {candidate.unit.text}".strip()
            claims.append(quote_claim(candidate.chunk, quote, language, framed=framed))
        citations = list(dict.fromkeys(cid for claim in claims for cid in claim.chunk_ids))
        return GenerateResult(
            answer="\n".join(claim.text for claim in claims),
            claims=claims,
            citations=citations,
            answered=True,
            confidence=round(min(confidence, 1.0), 4),
        )

