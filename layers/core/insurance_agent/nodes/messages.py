"""Fixed user-facing texts, in both languages. No exception text ever reaches a user."""

from __future__ import annotations

from insurance_agent.models.turn import EscalationReason, RefusalCode

_REFUSALS = {
    RefusalCode.INVALID_INPUT: (
        "پیام شما قابل پردازش نبود. لطفاً پرسش خود را دوباره و کوتاه‌تر بنویسید.",
        "Your message could not be processed. Please send your question again, a little shorter.",
    ),
    RefusalCode.THREAD_NOT_OWNED: (
        "این گفتگو در دسترس شما نیست. لطفاً یک گفتگوی تازه شروع کنید.",
        "This conversation is not available to you. Please start a new conversation.",
    ),
    RefusalCode.THREAD_HANDED_OFF: (
        "این گفتگو به کارشناس ما سپرده شده است و پاسخ شما را کارشناس خواهد داد.",
        "This conversation has been handed to one of our staff, who will reply to you.",
    ),
    RefusalCode.DUPLICATE_TURN: (
        "این پیام پیش‌تر دریافت شده است.",
        "This message was already received.",
    ),
    RefusalCode.TURN_NOT_OWNED: (
        "این پیام با شناسه‌ای فرستاده شده که در دسترس شما نیست. لطفاً دوباره بفرستید.",
        "This message was sent with an id that is not available to you. Please send it again.",
    ),
}

_HANDOFF_FA = "گفتگوی شما را به یکی از کارشناسان ما می‌سپارم تا دقیق‌تر راهنمایی‌تان کند."
_HANDOFF_EN = "I'm passing your conversation to one of our staff so they can help you properly."
_ESCALATIONS = {
    EscalationReason.USER_REQUESTED: (
        "حتماً. گفتگوی شما را به یکی از کارشناسان ما منتقل می‌کنم.",
        "Of course. I'm connecting you with one of our staff.",
    ),
    EscalationReason.RESTRICTED_INTENT: (
        "رسیدگی به این موضوع باید توسط کارشناس انجام شود. گفتگوی شما را به یکی از همکارانم می‌سپارم.",
        "This matter has to be handled by a member of our staff. I'm passing your conversation to a colleague.",
    ),
    EscalationReason.FRUSTRATION: (
        "متأسفم که نتوانستم کمکتان کنم. گفتگوی شما را به یکی از کارشناسان ما می‌سپارم.",
        "I'm sorry I couldn't help. I'm passing your conversation to one of our staff.",
    ),
    EscalationReason.INSUFFICIENT_RETRIEVAL: (
        "پاسخ مطمئنی برای این پرسش در مدارک ما پیدا نکردم. " + _HANDOFF_FA,
        "I couldn't find a reliable answer to this in our documents. " + _HANDOFF_EN,
    ),
    EscalationReason.SYSTEM_ERROR: (
        "در حال حاضر نمی‌توانم پاسخ دهم. " + _HANDOFF_FA,
        "I can't answer right now. " + _HANDOFF_EN,
    ),
}
# The user need not know whose fault it was: the model's unusable output reads as any other failure.
_ESCALATIONS[EscalationReason.MODEL_OUTPUT] = _ESCALATIONS[EscalationReason.SYSTEM_ERROR]


def refusal(code: RefusalCode, language: str) -> str:
    fa, en = _REFUSALS[code]
    return en if language == "en" else fa


def escalation(reason: EscalationReason, language: str) -> str:
    fa, en = _ESCALATIONS.get(reason, (_HANDOFF_FA, _HANDOFF_EN))
    return en if language == "en" else fa


_SMALL_TALK = {
    "chitchat": (
        "سلام! من دستیار پاسخ‌گویی به پرسش‌های بیمه هستم. درباره پوشش‌ها، حق بیمه یا خسارت بپرسید.",
        "Hello! I answer questions about insurance: coverage, premiums and claims.",
    ),
    "out_of_scope": (
        "متأسفم، من فقط به پرسش‌های مربوط به بیمه پاسخ می‌دهم.",
        "Sorry, I can only help with questions about insurance.",
    ),
}


def small_talk(route: str, language: str) -> str:
    """The fixed reply used when a generated small-talk reply is not safe to show."""
    fa, en = _SMALL_TALK.get(route, _SMALL_TALK["out_of_scope"])
    return en if language == "en" else fa
