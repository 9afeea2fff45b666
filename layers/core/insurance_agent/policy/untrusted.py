"""Documents are untrusted input: text that reads as instructions to the assistant, and citation
look-alikes, are data and never steer an answer.

At ingest, citation look-alikes (`[chunk_id: …]`, `[[…]]`, `【…】`) are stripped from chunk text (the
only citations a reply carries are the ones the service attaches) and instruction-like sentences
flag their chunk. At answer time no instruction-like sentence is quoted as an answer, whatever the
provider: local generate skips them and the draft guard rejects an answer containing one; Bedrock
sees flagged evidence marked as untrusted.

The patterns are about addressing the assistant ("ignore previous instructions", "you are now",
"tell the user", a `system:` role line, chat-template tokens), not about insurance content, so a
real policy text ("the insured must notify the insurer") does not match.
"""

from __future__ import annotations

import re

from insurance_agent.text import normalize, split_sentences

INSTRUCTION_LIKE = "instruction_like"
CITATION_MARKERS = "citation_markers"

_MARKERS = re.compile(
    r"\[\s*(?:chunk[_ ]?id|chunk|source|cite|citation|ref)\s*[:=#][^\]\n]{0,200}\]"
    r"|\[\[[^\]\n]{0,200}\]\]"
    r"|【[^】\n]{0,200}】",
    re.IGNORECASE,
)

_INSTRUCTIONS = [
    # English
    r"\b(?:ignore|disregard|forget|override|bypass)\b[^.!?\n]{0,40}\b(?:previous|prior|above|earlier|all|any|your|the)\b"
    r"[^.!?\n]{0,30}\b(?:instructions?|prompts?|rules?|directives?|guidelines?|context)\b",
    r"\byou are (?:now|no longer)\b",
    r"\b(?:act|behave|respond) as (?:if|an?|the)\b[^.!?\n]{0,40}\b(?:assistant|model|ai|chatbot|system)\b",
    r"\b(?:system|developer) (?:prompt|message|instructions?)\b",
    r"\b(?:tell|inform|say to|answer) the (?:user|customer|client)\b",
    r"\bnew instructions?\b",
    r"\bdo not (?:follow|obey) (?:the|your|any)\b",
    r"^\s*(?:system|assistant|developer)\s*:",
    r"<\|?(?:im_start|im_end|system|endoftext)\|?>|</?system>|\[/?INST\]|<<SYS>>",
    # Persian
    r"(?:دستورالعمل|دستور|راهنمایی|قوانین|قواعد)(?:\s|\u200c)*(?:ها|های)?(?:\s|\u200c)*(?:قبلی|پیشین|بالا|قبل)"
    r"[^.!?؟\n]{0,30}(?:نادیده|فراموش|کنار)",
    r"(?:نادیده|فراموش)\s*(?:بگیر|کن|بگیرید|کنید)[^.!?؟\n]{0,30}(?:دستور|قوانین|قواعد|راهنما|پرامپت)",
    r"به\s*(?:کاربر|مشتری)\s*(?:بگو|بگویید|اعلام کن|اطلاع بده|پاسخ بده)",
    r"(?:تو|شما)\s*(?:اکنون|الان|از این به بعد|دیگر)\s*(?:یک\s*)?(?:دستیار|ربات|مدل|هوش)",
    r"(?:پرامپت|پیام)\s*(?:سیستم|سیستمی)",
    r"^\s*(?:سیستم|دستیار)\s*:",
]
_INSTRUCTION = re.compile("|".join(f"(?:{p})" for p in _INSTRUCTIONS), re.IGNORECASE | re.MULTILINE)


def strip_markers(text: str) -> tuple[str, int]:
    """`text` without citation look-alikes, and how many were removed."""
    cleaned, count = _MARKERS.subn("", text)
    if count:
        cleaned = re.sub(r"[ \t]{2,}", " ", cleaned)
    return cleaned, count


def is_instruction_like(text: str) -> bool:
    """Whether `text` addresses the assistant with instructions (checked on the normalised text)."""
    return bool(_INSTRUCTION.search(text) or _INSTRUCTION.search(normalize(text)))


def instruction_sentences(text: str) -> list[str]:
    """The sentences of `text` that read as instructions to the assistant."""
    return [sentence for sentence in split_sentences(text) if is_instruction_like(sentence)]
