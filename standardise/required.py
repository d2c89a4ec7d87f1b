"""Which parameters of a standardised document are required, settled without the LLM (MFTR §3.2).

MFTR's rule is "required unless the documentation explicitly says optional". The LLM is told so, and
:func:`settle_required` then settles its flags against the raw documentation: a wrong flag is flipped,
not retried.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import replace
from typing import Any

from toolsift.errors import CatalogRecordError
from toolsift.ingest.normalise import normalise_tool
from toolsift.ingest.raw_records import RawTool
from toolsift.standardise.answers import ParameterSpec, StandardisedDoc

__all__ = ["settle_required"]

_OPTIONAL_MARKER = re.compile(
    r"\boptional(?:ly)?\b|\bif any\b|\bif applicable\b|\bif provided\b|\bif given\b|\bif specified\b"
    r"|\bnot required\b|\bnot mandatory\b|\bdefaults? to\b|\bby default\b",
    re.IGNORECASE,
)
_SENTENCE_END = re.compile(r"(?<=[.!?;])\s+|\n+")


def _strings(value: object) -> Iterator[str]:
    """Every string value in a JSON value, depth first (keys are names, not words: left out)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def _specs_named(value: object, name: str) -> Iterator[object]:
    """Parameter specs in the documentation for ``name``: ``{"name": name, ...}`` or ``name: spec``."""
    if isinstance(value, Mapping):
        if isinstance(value.get("name"), str) and value["name"].strip().lower() == name:
            yield value
        for key, item in value.items():
            if isinstance(key, str) and key.strip().lower() == name and isinstance(item, (Mapping, str)):
                yield item
            yield from _specs_named(item, name)
    elif isinstance(value, list):
        for item in value:
            yield from _specs_named(item, name)


def _rule_flags(raw: RawTool) -> dict[str, bool]:
    """``name (lower-case) -> required`` as the rule-based normaliser reads the raw documentation."""
    try:
        doc = normalise_tool(replace(raw, standardized=None))
    except CatalogRecordError:
        return {}
    return {p.name.lower(): p.required for p in doc.parameters}


def _text_says_optional(documentation: Mapping[str, Any], name: str) -> bool:
    """The documentation's own words mark ``name`` optional (see :func:`settle_required`)."""
    for spec in _specs_named(documentation, name):
        if any(_OPTIONAL_MARKER.search(text) for text in _strings(spec)):
            return True
    mention = re.compile(rf"(?<![\w]){re.escape(name)}(?![\w])", re.IGNORECASE)
    for text in _strings(documentation):
        for sentence in _SENTENCE_END.split(text):
            if _OPTIONAL_MARKER.search(sentence) and mention.search(sentence):
                return True
    return False


def settle_required(doc: StandardisedDoc, raw: RawTool) -> StandardisedDoc:
    """Settle each parameter's ``required`` flag against the raw documentation, without the LLM.

    MFTR §3.2: a parameter is required unless the documentation explicitly says it is optional. The
    LLM is told so, and then its flags are settled here (flipped, not rejected: the fix is
    deterministic, costs no retry, and the same documentation always gives the same flags):

    * where the rule-based normaliser reads the documentation's *structure* as optional (a JSON
      schema's ``required`` list leaves it out, ``required: false``, ``optional: true``, a non-null
      default, ``optional_params``, a default in a signature), the parameter is optional;
    * else, an LLM "optional" stands only when the documentation's *words* say so: the parameter's
      own spec contains an optionality marker ("optional", "if any", "if applicable", "defaults
      to", ...), or one sentence of the documentation has both the marker and the parameter's name
      ("takes three optional parameters - 'keyword', 'lecturer' and 'type'");
    * everything else is required.

    Args:
        doc: a parsed ``standardize`` answer.
        raw: the tool it standardises.

    Returns:
        ``doc`` with settled flags (a new object; ``doc`` is not changed).
    """
    params = doc.get("parameters", {})
    if not params:
        return doc
    rules = _rule_flags(raw)
    settled: dict[str, ParameterSpec] = {}
    for name, spec in params.items():
        key = name.strip().lower()
        if rules.get(key) is False:
            required = False
        elif spec.get("required", True) is False:
            required = not _text_says_optional(raw.documentation, key)
        else:
            required = True
        settled[name] = {**spec, "required": required}
    return {**doc, "parameters": settled}
