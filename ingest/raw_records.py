"""What the catalog loaders hand to normalisation: raw records, still in the catalog's own shape.

A loader reads one catalog file and yields, in order:

* :class:`RawAgent` — an agent / MCP server / API. An agent is always yielded before its tools.
* :class:`RawTool` — one tool with its documentation exactly as the catalog gave it.
* :class:`RejectedRecord` — a record the loader could not even turn into a :class:`RawTool` or
  :class:`RawAgent` (a JSONL line that is not JSON, a record that is not an object, an id of an
  unusable type). The loader yields it instead of raising, so that one bad record never hides the
  rest of the catalog; the pipeline turns it into a :class:`~toolsift.errors.CatalogRecordError`
  with :meth:`RejectedRecord.to_error` and reports it beside the records normalisation rejects.

Every record carries ``source`` (the short catalog label, e.g. ``toolret/apibank``, which also
becomes :attr:`ToolDoc.source <toolsift.mappings.model.ToolDoc.source>`) and ``position``, which says
where in the file it was: ``"record 12"`` (0-based index into a top-level JSON list, as ``jq '.[12]'``
counts), ``"line 40"`` (1-based line of a JSONL file, as editors count), ``"server 3 tool 5"``
(0-based) or ``"paths./pets.get"`` (an OpenAPI operation).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any, TypeAlias

from toolsift.errors import CatalogRecordError

__all__ = [
    "AGENT_ID_PREFIX",
    "RawTool",
    "RawAgent",
    "RejectedRecord",
    "FlaggedRecord",
    "RiskFlaggedRecord",
    "RawRecord",
    "LoadedRecord",
]

#: Every agent id starts with this, so an agent id never collides with a tool id.
AGENT_ID_PREFIX = "agent:"


@dataclass(frozen=True)
class RawTool:
    """One tool as the catalog documents it, before standardisation.

    Args:
        source: short label of the catalog (e.g. ``toolret/apibank``).
        position: where in the source the record is (``"record 12"``, ``"line 40"`` ...).
        documentation: the tool's documentation exactly as the catalog gave it (for OpenAPI: the
            object the loader assembled from one operation). Serialised, it is the Full-Doc text.
        tool_id: the id the catalog gives the tool; None when the format has no ids, in which
            case the normalised name is the id.
        agent_id: id of the owning :class:`RawAgent` (``agent:<slug>``), or None.
        standardized: an already-standardised version of the documentation (MFTR's ``augmented``
            object: description, parameters, response, examples), or None.
    """

    source: str
    position: str
    documentation: Mapping[str, Any]
    tool_id: str | None
    agent_id: str | None
    standardized: Mapping[str, Any] | None = None


@dataclass(frozen=True)
class RawAgent:
    """An agent, MCP server or API that owns tools.

    Args:
        source: short label of the catalog.
        position: where in the source the record is.
        agent_id: ``agent:`` followed by a slug of the name; never collides with a tool id.
        name: the agent's name as the catalog gives it.
        description: what it offers (empty when the catalog says nothing).
        documentation: the catalog entry without its tool lists.
        tags: categories from the catalog.
        tool_names: the names of the tools the catalog lists under it, in catalog order (for the
            agent's ``overview``); empty when the format does not list them with the agent.
    """

    source: str
    position: str
    agent_id: str
    name: str
    description: str
    documentation: Mapping[str, Any]
    tags: tuple[str, ...] = ()
    tool_names: tuple[str, ...] = ()


@dataclass(frozen=True)
class RejectedRecord:
    """A record a loader found but could not read; reported, never indexed.

    Args:
        source: short label of the catalog.
        position: where in the source the record is.
        reason: what is wrong, in words.
        record_id: the record's id or name when one could be read.
        field: the offending field, when one field is to blame.
    """

    source: str
    position: str
    reason: str
    record_id: str | None = None
    field: str | None = None

    def to_error(self) -> CatalogRecordError:
        """The error the pipeline reports for this record."""
        return CatalogRecordError(
            self.source, self.position, self.reason, record_id=self.record_id, field=self.field
        )


@dataclass(frozen=True)
class FlaggedRecord:
    """A tool kept and indexed, with what normalising it had to infer or keep as text.

    Args:
        source: short label of the catalog.
        position: where in the source the record is.
        record_id: the tool's id.
        quality: its :data:`~toolsift.mappings.model.SchemaQuality` (``inferred`` or ``text``, or
            ``declared`` when only a field other than the parameters was read loosely).
        notes: one sentence per thing inferred or kept, each naming its field.
    """

    source: str
    position: str
    record_id: str
    quality: str
    notes: tuple[str, ...]

    def __str__(self) -> str:
        return f"{self.source} {self.position} (id {self.record_id!r}) [{self.quality}]: " + "; ".join(self.notes)

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "notes": list(self.notes)}


@dataclass(frozen=True)
class RiskFlaggedRecord:
    """A tool kept and indexed with ``risk: flagged``: the screen of hostile tool text found something
    (:mod:`toolsift.screen.screening`). Unlike a :class:`FlaggedRecord` its schema may be fine.

    Args:
        source: short label of the catalog.
        position: where in the source the record is.
        record_id: the tool's id.
        reasons: the screen's findings, each ``<kind>: <what was found>``.
    """

    source: str
    position: str
    record_id: str
    reasons: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "reasons": list(self.reasons)}


#: A record normalisation accepts.
RawRecord: TypeAlias = RawTool | RawAgent
#: Anything a loader yields.
LoadedRecord: TypeAlias = RawTool | RawAgent | RejectedRecord
