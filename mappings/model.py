"""The document model: the one place that says what a tool and an agent document hold.

The index template (:mod:`toolsift.mappings.template`) is derived from these records' field kinds
(declared with :func:`~toolsift.mappings.fields.doc_field`), and code that needs a field name takes
it from :data:`F` or :func:`vector_field`, never from a string literal, so the records, the mapping
and the queries cannot drift apart.

Tools and agents live in one index (Tool-to-Agent Retrieval §2): an ``agent`` document is the parent
side of the ``relation`` join field, a ``tool`` document the child, routed to its agent's shard. A tool
without an owner carries no join value and is still searchable.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import asdict, dataclass, fields
from typing import Any, Literal

from toolsift.mappings.fields import doc_field

__all__ = [
    "SCHEMA_VERSION",
    "SCHEMA_QUALITIES",
    "SchemaQuality",
    "UNPARSED_PARAMETERS",
    "ParameterDoc",
    "ToolDoc",
    "AgentDoc",
    "Entity",
    "F",
    "vector_field",
    "TEXT_FIELDS",
    "VECTOR_FIELDS",
    "NESTED_VECTOR_FIELDS",
    "tool_routing",
    "RERANK_SOURCE",
    "rerank_text",
]

#: Bumped whenever the derived mapping changes in a way that needs a new index version.
#: 2: ``overview`` (text + vector) on tools and agents, the joint tool+agent representation.
#: 3: ``tenants`` on tools, agents and the nested parameter / example sub-documents.
#: 4: ``derived`` on tools: the fields rule-based expansion filled (:mod:`toolsift.ingest.derive`).
#: 5: ``prerequisites`` on tools: the sibling tools a tool needs called first (:mod:`toolsift.ingest.prerequisites`).
#: 6: ``schema_quality`` and ``schema_notes`` on tools: how much of a messy parameter spec was read;
#:    ``risk`` and ``risk_reasons``: what the screen of hostile tool text found (:mod:`toolsift.screen.screening`).
#: 7: ``knn_vector`` fields without doc values (the Lucene engine scores exactly from the vector files).
SCHEMA_VERSION = 7

Entity = Literal["tool", "agent"]

#: How a tool's parameters were read, best first: ``declared`` — from a spec that says names, types
#: and requiredness (a JSON schema, a list or object of specs, a signature); ``inferred`` — some of it
#: was inferred (types from default values, names from a comma-separated list, a ``required`` name
#: with no property); ``text`` — part of the spec could not be read and is kept as text.
SchemaQuality = Literal["declared", "inferred", "text"]
SCHEMA_QUALITIES: tuple[str, ...] = ("declared", "inferred", "text")

#: The name of the parameter sub-document that holds a spec's unreadable text (optional, type
#: ``text``): searchable like any parameter, never handed to an agent as an argument.
UNPARSED_PARAMETERS = "(unparsed)"

@dataclass(frozen=True)
class ParameterDoc:
    """One input parameter of a tool (MFTR's ``parameters`` field, one nested document each).

    ``required`` is True unless the documentation says the parameter is optional.
    """

    name: str = doc_field("text_keyword")
    type: str = doc_field("keyword", default="")
    description: str = doc_field("text", default="")
    required: bool = doc_field("boolean", default=True)

    @property
    def embedding_text(self) -> str:
        return f"{self.name}: {self.description}" if self.description else self.name


@dataclass(frozen=True)
class ToolDoc:
    """A tool in the MFTR schema plus the Tool-DE profile, ready to embed and index.

    Args:
        tool_id: stable id, the document ``_id``; unique within the index.
        name: the tool's callable name.
        source: the catalog it came from (a short label, e.g. ``toolret/apibank``).
        agent_id: id of the owning agent / MCP server document, or None.
        description: what the tool does (MFTR description field).
        parameters: its inputs (MFTR parameters field, nested).
        response: what it returns (MFTR response field).
        examples: user intents it serves (MFTR examples field, nested; best match counts).
        function, tags, when_to_use, limitations: the Tool-DE profile (empty unless a doc or an
            LLM expansion supplies them; never invented).
        overview: one line saying what the tool is: name, description and parameter names
            (:func:`~toolsift.ingest.normalise.tool_overview`); tools and agents share this field, so
            one query ranks both (Tool-to-Agent Retrieval's joint index).
        full_doc: the flat-document baseline text (the raw documentation serialised).
        raw: the documentation exactly as the catalog gave it; stored, not indexed.
        tenants: the tenants allowed to see the tool (``toolsift ingest --tenant``); empty: public.
            Copied into every parameter and example sub-document, so nested k-NN filters on it.
        derived: the fields the catalog left empty that rule-based expansion filled from the
            documentation's own words (:mod:`toolsift.ingest.derive`), e.g. ``("examples",)``; the
            fixed-weight ranker counts those fields at ``derived_weight`` of their weight, and a
            search team can filter on it.
        prerequisites: ids of the tools of the same server this tool needs called first (the
            producers of its identifiers and coordinates, :mod:`toolsift.ingest.prerequisites`);
            the multi-need search places them after it.
        schema_quality: how the parameters were read (:data:`SchemaQuality`); anything but
            ``declared`` is a flag a search team can filter on.
        schema_notes: what normalisation had to infer or keep as text, one sentence each naming
            the field (stored, not indexed; the ingest report lists them).
        risk: ``flagged`` when the screen of hostile tool text found something, else ``none``
            (:mod:`toolsift.screen.screening`); search can exclude flagged tools, and no front end hands
            an agent a flagged description without its flag.
        risk_reasons: the screen's findings, each ``<kind>: <what was found>``.
    """

    tool_id: str = doc_field("keyword")
    name: str = doc_field("text_keyword")
    source: str = doc_field("keyword", default="")
    agent_id: str | None = doc_field("keyword", default=None)
    description: str = doc_field("text", vector=True, default="")
    parameters: tuple[ParameterDoc, ...] = doc_field("nested", vector=True, factory=tuple)
    response: str = doc_field("text", vector=True, default="")
    examples: tuple[str, ...] = doc_field("nested", vector=True, factory=tuple)
    function: str = doc_field("text", default="")
    tags: tuple[str, ...] = doc_field("text_keyword", factory=tuple)
    when_to_use: str = doc_field("text", default="")
    limitations: str = doc_field("text", default="")
    overview: str = doc_field("text", vector=True, default="")
    full_doc: str = doc_field("baseline_text", vector=True, default="")
    raw: dict[str, Any] = doc_field("stored", factory=dict)
    tenants: tuple[str, ...] = doc_field("keyword", factory=tuple)
    derived: tuple[str, ...] = doc_field("keyword", factory=tuple)
    prerequisites: tuple[str, ...] = doc_field("keyword", factory=tuple)
    schema_quality: str = doc_field("keyword", default="declared")
    schema_notes: tuple[str, ...] = doc_field("stored", factory=tuple)
    risk: str = doc_field("keyword", default="none")
    risk_reasons: tuple[str, ...] = doc_field("keyword", factory=tuple)

    @property
    def content_hash(self) -> str:
        """Hash of everything indexed; unchanged hash means re-ingest writes nothing."""
        return content_hash(self)

    @property
    def required_parameters(self) -> tuple[ParameterDoc, ...]:
        return tuple(p for p in self.parameters if p.required)


@dataclass(frozen=True)
class AgentDoc:
    """An agent / MCP server: the parent side of the join, searchable like a tool.

    Args:
        agent_id: stable id, the document ``_id`` (prefixed so it never collides with a tool id).
        name: the agent's or server's name.
        description: what it offers.
        source: the catalog it came from.
        tags: categories from the catalog.
        overview: one line saying what the agent offers: name, description and its tools' names
            (:func:`~toolsift.ingest.normalise.agent_overview`), in the field tools use for theirs.
        full_doc: its documentation serialised, for the flat baseline.
        raw: the catalog entry without its tools; stored, not indexed.
        tenants: the tenants allowed to see the agent (those of its tools); empty: public.
    """

    agent_id: str = doc_field("keyword")
    name: str = doc_field("text_keyword")
    description: str = doc_field("text", vector=True, default="")
    source: str = doc_field("keyword", default="")
    tags: tuple[str, ...] = doc_field("text_keyword", factory=tuple)
    overview: str = doc_field("text", vector=True, default="")
    full_doc: str = doc_field("baseline_text", vector=True, default="")
    raw: dict[str, Any] = doc_field("stored", factory=dict)
    tenants: tuple[str, ...] = doc_field("keyword", factory=tuple)

    @property
    def content_hash(self) -> str:
        return content_hash(self)


def content_hash(doc: ToolDoc | AgentDoc) -> str:
    payload = json.dumps(asdict(doc), sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(f"{SCHEMA_VERSION}:{payload}".encode()).hexdigest()


def tool_routing(doc: ToolDoc) -> str:
    """Routing key of a tool: its agent's id (children live on the parent's shard), else its own."""
    return doc.agent_id or doc.tool_id


class _FieldNames:
    """Index field names, from the records above plus the bookkeeping fields of every document."""

    entity = "entity"  # "tool" | "agent"
    relation = "relation"  # join field: agent (parent) -> tool (child)
    content_hash = "content_hash"
    # nested sub-fields
    param_name = "parameters.name"
    param_type = "parameters.type"
    param_description = "parameters.description"
    param_required = "parameters.required"
    param_vector = "parameters.vector"
    param_tenants = "parameters.tenants"
    example_text = "examples.text"
    example_vector = "examples.vector"
    example_tenants = "examples.tenants"

    def __init__(self) -> None:
        for record in (ToolDoc, AgentDoc):
            for f in fields(record):
                setattr(self, f.name, f.name)

    def __getattr__(self, name: str) -> str:  # pragma: no cover - only for type checkers
        raise AttributeError(f"no index field named {name!r}")


F: Any = _FieldNames()


def vector_field(name: str) -> str:
    """The ``knn_vector`` field that holds the embedding of text field ``name``."""
    if name == "parameters":
        return str(F.param_vector)
    if name == "examples":
        return str(F.example_vector)
    return f"{name}_vector"


def _vector_names(record: type) -> tuple[str, ...]:
    return tuple(f.name for f in fields(record) if f.metadata.get("vector"))


#: Analysed text fields of tool documents that queries may target.
TEXT_FIELDS: tuple[str, ...] = tuple(
    f.name for f in fields(ToolDoc) if f.metadata.get("kind") in ("text", "text_keyword", "baseline_text")
)
#: Text fields with a top-level ``<name>_vector`` embedding.
VECTOR_FIELDS: tuple[str, ...] = tuple(
    n for n in _vector_names(ToolDoc) if n not in ("parameters", "examples")
)
#: Nested fields whose sub-documents carry their own ``vector``.
NESTED_VECTOR_FIELDS: tuple[str, ...] = ("parameters", "examples")


#: The stored fields a second-stage reranker reads (Tool-DE's expanded document minus examples,
#: which its §4.1 found to hurt).
RERANK_SOURCE: tuple[str, ...] = (
    "name",
    "description",
    "function",
    "parameters.name",
    "parameters.description",
    "parameters.required",
    "response",
    "tags",
    "when_to_use",
    "limitations",
)

#: Longest reranker text; the models truncate to their token budget anyway.
_RERANK_MAX_CHARS = 4000


def rerank_text(source: Mapping[str, Any]) -> str:
    """A tool (or agent) document as one text for a cross-encoder or Tool-Rank, from its ``_source``.

    Labelled lines in a fixed order (name, description, parameters, returns, Tool-DE profile), empty
    parts left out, so the model sees the same layout for every catalog.
    """
    def text(key: str) -> str:
        value = source.get(key)
        if isinstance(value, (list, tuple)):
            return ", ".join(str(v) for v in value if v)
        return str(value).strip() if value else ""

    lines = [f"name: {text('name')}"]
    description = text("description") or text("function")
    if description:
        lines.append(f"description: {description}")
    if text("function") and text("function") != description:
        lines.append(f"function: {text('function')}")
    params = []
    for p in source.get("parameters") or []:
        if isinstance(p, Mapping) and p.get("name"):
            flag = "" if p.get("required", True) else " (optional)"
            desc = f": {p['description']}" if p.get("description") else ""
            params.append(f"{p['name']}{flag}{desc}")
    if params:
        lines.append("parameters: " + "; ".join(params))
    for key, label in (("response", "returns"), ("when_to_use", "when to use"), ("limitations", "limitations"), ("tags", "tags")):
        if text(key):
            lines.append(f"{label}: {text(key)}")
    return "\n".join(lines)[:_RERANK_MAX_CHARS]
