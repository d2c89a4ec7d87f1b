"""MFTR's structured query (§3.3): what a request needs, aligned field by field with tool documents.

``{"tool_needs": [{"user_intent", "tool_description", "expected_response"}], "extracted_arguments":
{name: description}}`` — the format of ``shared/datasets/mftr/*/rewritten_queries.gpt-4o-mini.json``.
Each need's texts are matched against the document field they mirror (:data:`NEED_FIELD_FOR`), the
extracted arguments against the tool's parameters.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any

from toolsift.errors import BadQueryError

__all__ = ["ToolNeed", "StructuredQuery", "NEED_FIELD_FOR", "MAX_QUERY_CHARS"]

#: Longest request text accepted (a search box, not a document).
MAX_QUERY_CHARS = 32_000

#: Document field → the tool-need text it is matched with (MFTR §3.4).
NEED_FIELD_FOR: Mapping[str, str] = MappingProxyType(
    {
        "description": "tool_description",
        "response": "expected_response",
        "examples": "user_intent",
    }
)


@dataclass(frozen=True)
class ToolNeed:
    """One capability the request needs: what the user wants, the ideal tool, its ideal output."""

    user_intent: str
    tool_description: str
    expected_response: str

    def text_for(self, doc_field: str) -> str:
        return str(getattr(self, NEED_FIELD_FOR[doc_field]))


def _text(value: Any, where: str) -> str:
    if not isinstance(value, str):
        raise BadQueryError(f"{where} must be a string, got {type(value).__name__}")
    if len(value) > MAX_QUERY_CHARS:
        raise BadQueryError(f"{where} is {len(value)} characters; the limit is {MAX_QUERY_CHARS}")
    return value.strip()


@dataclass(frozen=True)
class StructuredQuery:
    """A request rewritten into tool needs and extracted arguments.

    Args:
        tool_needs: at least one need; a need's score on a field is the best over needs (max).
        extracted_arguments: argument name → abstract description, matched against parameters.
        text: the original request, kept for the flat baseline and for display.
    """

    tool_needs: tuple[ToolNeed, ...]
    extracted_arguments: Mapping[str, str] = field(default_factory=dict)
    text: str = ""

    def __post_init__(self) -> None:
        if not self.tool_needs:
            raise BadQueryError("a structured query needs at least one tool need")

    @classmethod
    def from_text(cls, text: str, *, as_argument: bool = False) -> StructuredQuery:
        """The fallback without a rewriter: one need whose three texts are the request itself.

        ``as_argument`` also matches the whole request against every tool's parameters (as one
        extracted argument), so the parameters field and the missing-parameter penalty have a
        signal without a rewrite; learned MFTR weights are trained and applied that way.
        """
        cleaned = _text(text, "query")
        if not cleaned:
            raise BadQueryError("the query is empty")
        arguments = {cleaned: ""} if as_argument else {}
        return cls(tool_needs=(ToolNeed(cleaned, cleaned, cleaned),), extracted_arguments=arguments, text=cleaned)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], *, text: str = "") -> StructuredQuery:
        """Parse the rewrite format; every problem is a :class:`BadQueryError` naming the field."""
        if not isinstance(data, Mapping):
            raise BadQueryError("a structured query must be a JSON object")
        needs_raw = data.get("tool_needs")
        if not isinstance(needs_raw, list) or not needs_raw:
            raise BadQueryError("'tool_needs' must be a non-empty list")
        needs = []
        for i, need in enumerate(needs_raw):
            if not isinstance(need, Mapping):
                raise BadQueryError(f"tool_needs[{i}] must be an object")
            texts = {
                key: _text(need.get(key, ""), f"tool_needs[{i}].{key}")
                for key in ("user_intent", "tool_description", "expected_response")
            }
            if not any(texts.values()):
                raise BadQueryError(f"tool_needs[{i}] has no text")
            needs.append(ToolNeed(**texts))
        args_raw = data.get("extracted_arguments") or {}
        if not isinstance(args_raw, Mapping):
            raise BadQueryError("'extracted_arguments' must be an object of name → description")
        arguments = {
            _text(name, "extracted_arguments key"): _text(desc if desc is not None else "", f"extracted_arguments.{name}")
            for name, desc in args_raw.items()
        }
        return cls(tool_needs=tuple(needs), extracted_arguments=arguments, text=text)

    def with_instruction(self, instruction: str) -> StructuredQuery:
        """This query plus a task instruction (as ToolRet ships with each query) as one more need.

        The instruction describes the tools wanted, so it is matched against the tools' descriptions
        and examples; it says nothing about a tool's response, so that field is left empty.
        """
        text = _text(instruction, "instruction")
        if not text:
            return self
        need = ToolNeed(user_intent=text, tool_description=text, expected_response="")
        return replace(self, tool_needs=(*self.tool_needs, need))

    def to_dict(self) -> dict[str, Any]:
        return {
            "tool_needs": [
                {
                    "user_intent": n.user_intent,
                    "tool_description": n.tool_description,
                    "expected_response": n.expected_response,
                }
                for n in self.tool_needs
            ],
            "extracted_arguments": dict(self.extracted_arguments),
        }

    def argument_texts(self) -> list[str]:
        """Each argument as matched against parameters: ``name: description``."""
        return [f"{name}: {desc}" if desc else name for name, desc in self.extracted_arguments.items()]

    def all_texts(self) -> list[str]:
        """Every text that needs an embedding, each once."""
        texts = [n.text_for(f) for n in self.tool_needs for f in NEED_FIELD_FOR]
        return list(dict.fromkeys(t for t in [*texts, *self.argument_texts(), self.text] if t))
