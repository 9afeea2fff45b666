"""Any OpenAI-compatible server an insurer runs (vLLM, Ollama, llama.cpp, a LiteLLM proxy): see provider.py."""

from insurance_llm.openai.provider import OpenAIProvider

__all__ = ["OpenAIProvider"]
