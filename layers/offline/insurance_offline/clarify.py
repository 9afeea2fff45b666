"""Local clarify: a clarifying question in the user's language around the options it is given.

The options come from the retrieved chunks' payload (policy/options.py); this role only words the
question. It never adds, drops or renames an option, and refuses to ask without any.
"""

from __future__ import annotations

from insurance_agent.config import get_settings
from insurance_agent.errors import ModelOutputError
from insurance_agent.models.roles import ClarifyRequest, ClarifyResult

_PERSIAN_DIGITS = str.maketrans("0123456789", "۰۱۲۳۴۵۶۷۸۹")
# The options are documents: insurance products, or whatever a corpus-scoped tenant's documents are.
_QUESTIONS = {
    ("insurance", "fa"): "منظورتان کدام بیمه است؟",
    ("insurance", "en"): "Which insurance do you mean?",
    ("corpus", "fa"): "منظورتان کدام یک از این موارد است؟",
    ("corpus", "en"): "Which of these do you mean?",
}
# Passages of the documents (policy/provisions.py), whatever the topic scope: the user's case decides.
_ONE_PASSAGE_QUESTION = {
    "fa": "این بخش از مدارک ما به پرسش شما مربوط است. آیا مورد شما همین است؟",
    "en": "This passage of our documents relates to your question. Is it your case?",
}
_PASSAGE_QUESTION = {
    "fa": "این بخش‌ها در مدارک ما به پرسش شما مربوط است و هر کدام حکم جداگانه‌ای دارد. کدام یک به مورد شما مربوط است؟",
    "en": "These passages of our documents relate to your question, and each states its own rule. Which one is your case?",
}


class LocalClarifier:
    def __call__(self, request: ClarifyRequest) -> ClarifyResult:
        if not request.options:
            raise ModelOutputError("clarify was called without options: a clarifying question must be grounded")
        labels = [option.label for option in request.options]
        if len(request.options) == 1 and request.options[0].chunk_id:
            question = _ONE_PASSAGE_QUESTION[request.language]
        elif all(option.chunk_id for option in request.options):
            question = _PASSAGE_QUESTION[request.language]
        else:
            question = _QUESTIONS[(get_settings().policy.topic_scope, request.language)]
        if request.language == "en":
            lines = [question]
            lines += [f"{number}. {label}" for number, label in enumerate(labels, start=1)]
            lines.append("Please reply with the number or the name of an option.")
        else:
            lines = [question]
            lines += [
                f"{str(number).translate(_PERSIAN_DIGITS)}. {label}" for number, label in enumerate(labels, start=1)
            ]
            lines.append("لطفاً شماره یا نام یکی از گزینه‌ها را بنویسید.")
        return ClarifyResult(question="\n".join(lines))
