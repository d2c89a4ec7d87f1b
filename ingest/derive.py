"""Rule-based document expansion: the MFTR fields a catalog left empty, filled from what it did give.

Tool-DE expands tool documents with an LLM, and MFTR's documents were standardised by one. Without an
LLM a catalog's empty fields stay empty and score 0 for every request: Toolink's tools have a
description and a Python signature and nothing else, and a large commercial OpenAPI spec has
operationIds, paths and tags but no summary or description. These rules fill an **empty** field only,
and only with the documentation's own words, rearranged; a field the catalog (or a standardised
document) filled is never touched. The tool document lists the fields it filled in ``derived``.

* **description** (only when there is none) — the name and, for an OpenAPI operation, its method and
  path split into words, then its tags, parameter names and response text::

      builds beta testers get to many related. GET builds beta testers (id). Tags: Builds.
      Parameters: id, limit. Returns: 200 List of BetaTesters

* **examples** — one user intent: the name as words ("multiply_fractions" → "multiply fractions"),
  the request a user of that function would make in its fewest words.

A response is not derived. A signature's return annotation ("float") and the names its ``return``
gives back were tried with the description's "returns …" clause: with the fixed field weights they cost
Toolink's multi-field rows (BM25 0.4605 → 0.4388, hybrid 0.4667 → 0.4574 NDCG@10; the learned MFTR
weights gained 0.01 from them): type names and a repeated clause are words most tools share.

The fixed-weight ranker counts a derived field at :data:`~toolsift.config.Settings.derived_weight` of
its weight (:class:`~toolsift.ranker.fusion.FieldWeightRanker`): text the catalog did not write is
weaker evidence than text it did, and a two-word name normalised over the candidates would otherwise
weigh as much as a catalog's own examples.

What is measured with these rules, catalog by catalog, is in ``docs/evaluation.md``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from toolsift.mappings.model import ParameterDoc

__all__ = ["Derived", "derive_fields", "identifier_words"]

_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_NON_WORD = re.compile(r"[^0-9A-Za-z\u00c0-\uffff]+")
_PATH_PARAMETER = re.compile(r"\{([^}]*)\}")
_MAX_NAMES = 12


@dataclass(frozen=True)
class Derived:
    """Values for the fields a document left empty; ``fields`` names those filled (in field order)."""

    description: str = ""
    examples: tuple[str, ...] = ()

    @property
    def fields(self) -> tuple[str, ...]:
        return tuple(name for name, value in (("description", self.description), ("examples", self.examples)) if value)


def identifier_words(name: str) -> str:
    """An identifier as lower-case words: ``getToManyRelated`` → ``get to many related``,
    ``multiply_fractions`` → ``multiply fractions``, ``fields[betaTesters]`` → ``fields beta testers``."""
    return " ".join(_NON_WORD.sub(" ", _CAMEL.sub(" ", name)).split()).lower()


def derive_fields(
    view: Mapping[str, Any],
    *,
    name: str,
    description: str,
    parameters: Sequence[ParameterDoc],
    response: str,
    examples: Sequence[str],
    tags: Sequence[str],
) -> Derived:
    """What the rules in the module docstring give for each empty field of one tool.

    Args:
        view: the tool's documentation (OpenAI's wrapper opened), read for an OpenAPI method and path.
        name, description, parameters, response, examples, tags: the fields as the catalog (or a
            standardised document) filled them; a non-empty one is left alone, and the response is
            read into a derived description.
    """
    new_examples: tuple[str, ...] = ()
    if not examples:
        intent = identifier_words(name)
        new_examples = (intent,) if intent else ()
    new_description = ""
    if not description:
        new_description = _description(view, name, parameters, response, tags)
    return Derived(description=new_description, examples=new_examples)


# --- description --------------------------------------------------------------------------------------


def _description(
    view: Mapping[str, Any], name: str, parameters: Sequence[ParameterDoc], response: str,
    tags: Sequence[str],
) -> str:
    sentences = [identifier_words(name)]
    method, path = view.get("method"), view.get("path")
    if isinstance(method, str) and isinstance(path, str) and path.strip():
        held = [identifier_words(p) for p in _PATH_PARAMETER.findall(path)]
        words = identifier_words(_PATH_PARAMETER.sub(" ", path))
        route = f"{method.upper()} {words}".strip()
        sentences.append(f"{route} ({', '.join(h for h in held if h)})" if any(held) else route)
    if tags:
        sentences.append("Tags: " + ", ".join(tags))
    names = [identifier_words(p.name) for p in parameters][:_MAX_NAMES]
    if any(names):
        sentences.append("Parameters: " + ", ".join(n for n in names if n))
    if response:
        sentences.append("Returns: " + response)
    sentences = [s for s in dict.fromkeys(sentences) if s]
    return ". ".join(sentences) + "." if sentences else ""
