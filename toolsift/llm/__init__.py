"""The LLM layer: an OpenAI-compatible client with schema-validated JSON answers and a content cache.

Ingest (MFTR standardisation, Tool-DE expansion) and search (query rewriting) both call
:meth:`LLM.complete_json`. Tool documents and user requests are untrusted: they travel in delimited
data sections of the prompt (:mod:`toolsift.llm.prompt`), never as instructions. Every answer is
cached by content (:class:`LLMCache`), so reruns cost nothing and survive restarts; the MFTR paper's
published outputs can be imported into the same cache (:mod:`toolsift.llm.published`,
``toolsift cache import``) and are then found without any LLM (:func:`cached_output`).
:mod:`toolsift.llm.server` serves a small local model (SmolLM2-135M-Instruct) behind the same API for
tests and offline demos.

Example:
    >>> from toolsift.llm import LLM, LLMCache, cached_output
    >>> llm = LLM.from_settings(settings)  # None when llm_base_url is unset
    >>> cache = llm.cache if llm is not None else LLMCache(settings.llm_cache_path)
    >>> cached_output(cache, "rewrite", settings.llm_model, "what happened on April 21st in history")
"""

from __future__ import annotations

from toolsift.llm.cache import LLMCache as LLMCache
from toolsift.llm.cache import cached_output as cached_output
from toolsift.llm.client import LLM as LLM
from toolsift.llm.client import Task as Task

__all__ = ["LLM", "LLMCache", "Task", "cached_output"]
