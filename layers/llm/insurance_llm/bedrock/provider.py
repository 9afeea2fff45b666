"""BedrockProvider: the roles (insurance_llm/provider.py) on Bedrock models through langchain-aws ChatBedrockConverse."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from insurance_agent.config import ModelSettings, SettingProblem
from insurance_llm.bedrock.client import ConverseCaller
from insurance_llm.provider import LanguageModelProvider


class BedrockProvider(LanguageModelProvider):
    """`BedrockProvider(client=...)` takes a bedrock-runtime client (tests: one behind a Stubber)."""

    name = "bedrock"
    model_parameters: ClassVar[dict[str, str]] = {"small_model_id": "SmallModelId", "main_model_id": "MainModelId"}
    model_purposes: ClassVar[dict[str, str]] = {
        "small_model_id": "the Bedrock model id for triage, contextualize, grade and verify",
        "main_model_id": "the Bedrock model id for clarify and generate",
    }

    @classmethod
    def check_settings(cls, settings: ModelSettings, environ: Mapping[str, str]) -> list[SettingProblem]:
        """A model id per role and a Region to call Bedrock in (Lambda always sets AWS_REGION)."""
        problems = super().check_settings(settings, environ)
        if not (settings.bedrock_region or environ.get("AWS_REGION") or environ.get("AWS_DEFAULT_REGION")
                or _configured_region()):
            problems.append(SettingProblem(
                field="bedrock_region", problem="is not set and no AWS Region is configured",
                purpose="the Region of the Bedrock Runtime endpoint (AWS_REGION when unset, which Lambda always sets)"))
        return problems

    @classmethod
    def model_id_problem(cls, model_id: str) -> str | None:
        if model_id.endswith("."):
            # "<scope>.": the template put the inference profile scope (InferenceProfileScope) before an empty id.
            return f"names an inference profile scope but no model ({model_id!r})"
        return super().model_id_problem(model_id)

    def default_caller(self, settings: ModelSettings, **options: Any) -> ConverseCaller:
        return ConverseCaller(settings=settings, **options)


def _configured_region() -> str | None:
    """The Region of the AWS configuration files or profile, as boto3 would find it."""
    import botocore.session

    return botocore.session.get_session().get_config_variable("region")
