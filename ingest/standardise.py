"""LLM standardisation (MFTR §3.2) and Tool-DE document expansion, judged and refined once.

For one raw tool, :class:`LLMStandardiser` produces MFTR's ``augmented`` object, the mapping that
:attr:`RawTool.standardized <toolsift.ingest.records.RawTool.standardized>` holds and
:func:`~toolsift.ingest.normalise.normalise_tool` already consumes:

``{description, parameters: {name: {type, description, required, example?}}, response,
examples: [{user_intent, tool_call?}], function, tags, when_to_use, limitations}``

in three LLM tasks, each a JSON answer checked against its schema and parser:

1. ``standardize`` — the four MFTR fields from the raw documentation (MFTR §3.2). The paper's rule,
   "required unless the documentation explicitly says optional", is in the prompt and then settled
   without the LLM by :func:`settle_required` (see there): a wrong flag is flipped, not retried.
2. ``expand`` — the Tool-DE profile (Tool-DE §2.2 Step 1, Fig. 6): ``function`` (fewer than 20
   words) and 3–5 ``tags`` always; ``when_to_use`` and ``limitations`` only when the documentation
   supports them, else ``""``. Word and tag counts are checked by :func:`parse_profile`, so an
   answer that breaks them is retried by the LLM layer, never cached.
3. ``judge`` — the profile against the raw documentation (Step 2, Fig. 7): faithful? ``function``
   short? 3–5 relevant tags? nothing invented? A profile that fails is regenerated ONCE with the
   judge's feedback (Step 3, same expansion prompt) and judged again; fields that still fail are
   dropped and the MFTR fields kept. Nothing unverified is kept: a profile no judge has passed
   (no LLM and no cached verdict, or a judge that never gave a valid answer) is left out.

Caching: every task's answer is cached by the LLM layer under ``subject_key(task, model, subject)``
with ``subject`` = :func:`~toolsift.llm.cache.standardize_subject` of the raw documentation; the
judge's subject adds a digest of the profile it judged, a regeneration's a digest of the rejected
profile and its feedback. Each step looks in the cache first, so without an LLM the same pipeline
replays from the cache (e.g. the MFTR paper's published GPT-4o-mini standardisations, imported with
``toolsift cache import``), and an ingest's second pass costs no LLM call.

References:
    MFTR: Multi-Field Tool Retrieval, §3.2 (the four-field schema, "required unless optional").
    Tool-DE: document expansion for tool retrieval, §2.2 and Appendix B.1–B.2 (profile, judge,
    refinement).

This module is standardisation's front door: it re-exports the public names of the modules that do the
work, one concept each:

* :mod:`toolsift.ingest.standardise_tasks` — task names, limits, JSON schemas and prompts;
* :mod:`toolsift.ingest.standardise_answers` — the typed answers and their parsers (the checks);
* :mod:`toolsift.ingest.standardise_required` — :func:`settle_required`, without the LLM;
* :mod:`toolsift.ingest.standardise_llm` — :class:`LLMStandardiser`: cache, LLM, judge, refinement;
* :mod:`toolsift.ingest.standardise_catalog` — a whole catalog: the ingest stream and ``toolsift
  standardize``'s MFTR file.
"""

from __future__ import annotations

from toolsift.ingest.standardise_answers import (
    ExampleSpec,
    ParameterSpec,
    Profile,
    StandardisedDoc,
    Verdict,
    parse_profile,
    parse_standardised,
    parse_verdict,
)
from toolsift.ingest.standardise_catalog import StandardiseReport, standardised_records, write_standardised
from toolsift.ingest.standardise_llm import Expansion, LLMStandardiser, StandardiseOutcome
from toolsift.ingest.standardise_required import settle_required
from toolsift.ingest.standardise_tasks import (
    EXPAND_INSTRUCTIONS,
    EXPAND_SCHEMA,
    EXPAND_TASK,
    JUDGE_INSTRUCTIONS,
    JUDGE_SCHEMA,
    JUDGE_TASK,
    MAX_EXAMPLES,
    MAX_FUNCTION_WORDS,
    MAX_TAG_CHARS,
    MAX_TAGS,
    MIN_TAGS,
    PROFILE_FIELDS,
    REGENERATE_INSTRUCTIONS,
    STANDARDIZE_INSTRUCTIONS,
    STANDARDIZE_SCHEMA,
    STANDARDIZE_TASK,
    ProfileField,
)

__all__ = [
    "STANDARDIZE_TASK",
    "EXPAND_TASK",
    "JUDGE_TASK",
    "PROFILE_FIELDS",
    "ProfileField",
    "MAX_FUNCTION_WORDS",
    "MIN_TAGS",
    "MAX_TAGS",
    "MAX_TAG_CHARS",
    "MAX_EXAMPLES",
    "STANDARDIZE_SCHEMA",
    "EXPAND_SCHEMA",
    "JUDGE_SCHEMA",
    "STANDARDIZE_INSTRUCTIONS",
    "EXPAND_INSTRUCTIONS",
    "REGENERATE_INSTRUCTIONS",
    "JUDGE_INSTRUCTIONS",
    "ParameterSpec",
    "ExampleSpec",
    "StandardisedDoc",
    "Profile",
    "Verdict",
    "Expansion",
    "StandardiseOutcome",
    "LLMStandardiser",
    "parse_standardised",
    "parse_profile",
    "parse_verdict",
    "settle_required",
    "standardised_records",
    "StandardiseReport",
    "write_standardised",
]
