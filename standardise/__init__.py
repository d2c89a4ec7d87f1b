"""LLM standardisation of a catalog's documentation into MFTR's fields, and Tool-DE's expansion.

It owns the three LLM tasks (``tasks``: names, answer schemas, prompts), the answers' parsers
(``answers``), the required parameters settled without the LLM (``required``), the standardiser
(``standardiser``), standardisation of a whole catalog (``catalog``), importing MFTR's published
outputs into the LLM cache (``published``) and ``toolsift bench prompts`` (``prompt_bench``: hostile
tool text against toolsift's own prompts). Rule-based standardisation is ingest's
(:mod:`toolsift.ingest.normalise`).

It runs inside ingest (ingest's layer; it may import ``toolsift.llm``); the prompt benchmark sits with
the benchmarks (it serves a model) (``tests/unit/test_layering.py``).
"""

from __future__ import annotations

from toolsift.lazy import lazy_exports

#: Public name → the module that defines it, imported on first use (:mod:`toolsift.lazy`).
_EXPORTS: dict[str, str] = {
    "LLMStandardiser": "toolsift.standardise.standardiser",
    "standardised_records": "toolsift.standardise.catalog",
    "write_standardised": "toolsift.standardise.catalog",
    "import_published": "toolsift.standardise.published",
    "run_prompt_bench": "toolsift.standardise.prompt_bench",
}

__all__ = list(_EXPORTS)
__getattr__ = lazy_exports(__name__, _EXPORTS)
