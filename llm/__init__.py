"""The LLM layer: an OpenAI-compatible client with schema-validated JSON answers and a content cache.

Ingest (standardisation, Tool-DE expansion) and search (query rewriting) both call
:meth:`LLM.complete_json`. Tool documents and user requests are untrusted: they travel in delimited
data sections of the prompt (:mod:`toolsift.llm.prompt`), never as instructions. Every answer is
cached by content (:class:`LLMCache`), so reruns are free and survive restarts.
"""

from toolsift.llm.cache import LLMCache, cached_output
from toolsift.llm.llm_client import LLM, llm_and_cache

__all__ = ["LLM", "LLMCache", "cached_output", "llm_and_cache"]
