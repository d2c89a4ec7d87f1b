"""The loader skeleton: what every catalog loader is, and the record checks the formats share.

A format is a subclass of :class:`CatalogLoader` that says only how to recognise its files
(:meth:`~CatalogLoader.sniff`) and how to read their records (:meth:`~CatalogLoader.records`); the
suffix check, the ``<format>/<catalog>`` source label and the streaming are the skeleton's. Formats
whose files are JSON sniff through :class:`JsonCatalogLoader`, and a JSON list of records that each
carry an ``id`` is an :class:`IdentifiedListLoader`, which yields the malformed ones as rejected.

A loader raises :class:`~toolsift.errors.CatalogError` only for a whole-file problem (missing, not
valid JSON, wrong top-level shape); a bad record is yielded as a
:class:`~toolsift.ingest.raw_records.RejectedRecord`, and everything else about a record is validated by
normalisation.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

from toolsift.ingest.loaders.files import JsonPeek, list_records, peek_json, read_json, type_name
from toolsift.ingest.loaders.naming import catalog_label, id_text
from toolsift.ingest.raw_records import LoadedRecord, RawTool, RejectedRecord

__all__ = [
    "CatalogLoader",
    "JsonCatalogLoader",
    "IdentifiedListLoader",
    "identified_records",
    "record_id",
    "not_expected",
    "not_an_object",
]


class CatalogLoader(ABC):
    """One catalog format: how to recognise its files and how to read their records.

    Subclasses set :attr:`NAME` (and :attr:`SUFFIXES` when their files are not ``.json``) and
    implement :meth:`sniff` and :meth:`records`.
    """

    #: The format's name, as ``toolsift ingest --format`` takes it and records' ``source`` starts.
    NAME: ClassVar[str]
    #: File name suffixes (lower case) the format's files have; other files are never sniffed.
    SUFFIXES: ClassVar[tuple[str, ...]] = (".json",)

    def detect(self, path: Path) -> bool:
        """True when the file is one of this format's: the suffix, then a cheap look inside."""
        return path.suffix.lower() in self.SUFFIXES and self.sniff(path)

    def load(self, path: Path) -> Iterator[LoadedRecord]:
        """Agents (each before its tools), tools and rejected records, in file order, streamed.

        Nothing is read before the first record is asked for.

        Raises:
            CatalogError: the file is missing, unreadable or not of this format's shape.
        """
        yield from self.records(path, catalog_label(path, self.NAME))

    @abstractmethod
    def sniff(self, path: Path) -> bool:
        """Whether a file with one of :attr:`SUFFIXES` holds this format (its first bytes or record).

        Never raises: an unreadable file is simply not recognised.
        """

    @abstractmethod
    def records(self, path: Path, source: str) -> Iterator[LoadedRecord]:
        """The file's records, each labelled with ``source``."""


class JsonCatalogLoader(CatalogLoader):
    """A format whose files are JSON, recognised by their top-level shape or first record."""

    def sniff(self, path: Path) -> bool:
        peek = peek_json(path)
        return peek is not None and self.recognise(peek)

    @abstractmethod
    def recognise(self, peek: JsonPeek) -> bool:
        """Whether the top of a JSON file (its :class:`~toolsift.ingest.loaders.files.JsonPeek`) is
        this format's."""


class IdentifiedListLoader(JsonCatalogLoader):
    """A JSON list of objects that each carry an ``id``, the tool id, and the tool's documentation object
    under :attr:`DOCUMENTATION`; positions are ``record <i>``.

    Subclasses set :attr:`WHAT` and :attr:`DOCUMENTATION`, implement :meth:`fits`, and override
    :meth:`tool` when a record holds more than the documentation.
    """

    #: What the list holds, for the error when the top level is not a list ("ToolRet records").
    WHAT: ClassVar[str]
    #: The key of each record's documentation object; a record without an object there is rejected.
    DOCUMENTATION: ClassVar[str]

    def recognise(self, peek: JsonPeek) -> bool:
        return peek.top == "list" and isinstance(peek.first, dict) and self.fits(peek.first)

    def records(self, path: Path, source: str) -> Iterator[LoadedRecord]:
        for item in identified_records(path, source, self.WHAT):
            if isinstance(item, RejectedRecord):
                yield item
                continue
            position, record, tool_id = item
            yield self.record(source, position, record, tool_id)

    @abstractmethod
    def fits(self, first: dict[str, Any]) -> bool:
        """Whether the list's first record has this format's keys."""

    def record(self, source: str, position: str, record: dict[str, Any], tool_id: str) -> LoadedRecord:
        """One record with a usable id: the tool it describes, or why it is rejected."""
        documentation = record.get(self.DOCUMENTATION)
        if not isinstance(documentation, dict):
            return not_an_object(source, position, self.DOCUMENTATION, documentation, record_id=tool_id,
                                 label=f"the {self.DOCUMENTATION}")
        return self.tool(source, position, record, tool_id, documentation)

    def tool(
        self, source: str, position: str, record: dict[str, Any], tool_id: str, documentation: dict[str, Any]
    ) -> LoadedRecord:
        """The tool a record whose documentation is an object describes (no agent), or why it is rejected."""
        return RawTool(source, position, documentation, tool_id, None)


def identified_records(
    path: Path, source: str, what: str
) -> Iterator[tuple[str, dict[str, Any], str] | RejectedRecord]:
    """``(position, record, id)`` for each object of a JSON list whose records carry an ``id``.

    A record that is not an object, or whose id is missing or of an unusable type, comes out as a
    :class:`RejectedRecord` instead.
    """
    for index, record in enumerate(list_records(read_json(path), path, what)):
        position = f"record {index}"
        if not isinstance(record, dict):
            yield not_expected(source, position, record)
            continue
        tool_id = record_id(source, position, record, "id", "the id")
        if isinstance(tool_id, RejectedRecord):
            yield tool_id
            continue
        yield position, record, tool_id


def record_id(
    source: str, position: str, record: dict[str, Any], key: str, label: str
) -> str | RejectedRecord:
    """The record's id under ``key`` as text, or a :class:`RejectedRecord` saying why there is none.

    Args:
        label: how the reason names the id ("the id" → "the id must be a string or an integer").
    """
    if key not in record:
        return RejectedRecord(source, position, f"the record has no {key}", field=key)
    tool_id = id_text(record[key])
    if tool_id is None:
        return RejectedRecord(
            source,
            position,
            f"{label} must be a string or an integer, got {type_name(record[key])}",
            field=key,
        )
    return tool_id


def not_expected(source: str, position: str, value: Any, expected: str = "an object") -> RejectedRecord:
    """The rejection of an item that is not the kind of JSON value the format has there."""
    return RejectedRecord(source, position, f"expected {expected}, got {type_name(value)}")


def not_an_object(
    source: str,
    position: str,
    field: str,
    value: Any,
    *,
    record_id: str | None = None,
    label: str | None = None,
) -> RejectedRecord:
    """The rejection of a record whose ``field`` is not an object ("<label> must be an object, got …")."""
    return RejectedRecord(
        source,
        position,
        f"{label or field} must be an object, got {type_name(value)}",
        record_id=record_id,
        field=field,
    )
