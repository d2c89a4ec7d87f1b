"""Standardisation applied to a whole catalog: during ingest, and into MFTR's standardised-tools file.

:func:`standardised_records` gives each tool of a loader's stream its standardised document (what
``toolsift ingest --standardize llm`` uses); :func:`write_standardised` writes a catalog's
standardisations in MFTR's ``[{id, type, augmented, origin_documentation}]`` format (``toolsift
standardize``), which the ``mftr`` loader reads back.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from toolsift.errors import CatalogRecordError
from toolsift.ingest.loaders import detect_format, load_catalog
from toolsift.ingest.normalise import DEFAULT_MAX_FIELD_CHARS, normalise_tool
from toolsift.ingest.raw_records import LoadedRecord, RawAgent, RawTool, RejectedRecord
from toolsift.standardise.standardiser import LLMStandardiser

__all__ = ["standardised_records", "StandardiseReport", "write_standardised"]

# --- ingest -------------------------------------------------------------------------------------------


def standardised_records(
    records: Iterable[LoadedRecord], standardiser: Callable[[RawTool], Mapping[str, Any] | None]
) -> Iterator[LoadedRecord]:
    """The loader's stream with each tool's :attr:`~RawTool.standardized` set by ``standardiser``.

    Agents and rejected records pass unchanged, and so does a tool that already carries a
    standardised document (an ``mftr`` catalog). A tool the standardiser returns None for keeps
    ``standardized=None`` (rule-based standardisation). A :class:`CatalogRecordError` from the
    standardiser becomes a :class:`RejectedRecord`, reported with the catalog's other bad records;
    any other error (an unreachable LLM) propagates and stops the ingest.

    Args:
        records: what a loader yields.
        standardiser: e.g. :meth:`LLMStandardiser.require`.
    """
    for record in records:
        if not isinstance(record, RawTool) or record.standardized is not None:
            yield record
            continue
        try:
            standardized = standardiser(record)
        except CatalogRecordError as exc:
            yield RejectedRecord(
                record.source, record.position, exc.reason, record_id=exc.record_id, field=exc.field
            )
            continue
        yield record if standardized is None else replace(record, standardized=standardized)


# --- `toolsift standardize`: a catalog into MFTR's standardised-tools file ---------------------------


@dataclass
class StandardiseReport:
    """What :func:`write_standardised` did. ``ok`` is False when any record was rejected."""

    catalog: str
    format: str
    out: str
    tools: int = 0
    agents_skipped: int = 0
    sources: dict[str, int] = field(default_factory=dict)
    expansions: dict[str, int] = field(default_factory=dict)
    rejected: list[CatalogRecordError] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.rejected

    def to_dict(self) -> dict[str, object]:
        return {
            "catalog": self.catalog,
            "format": self.format,
            "out": self.out,
            "tools": self.tools,
            "agents_skipped": self.agents_skipped,
            "sources": dict(self.sources),
            "expansions": dict(self.expansions),
            "rejected": [e.to_dict() for e in self.rejected],
            "ok": self.ok,
        }


def write_standardised(
    path: Path,
    out: Path,
    standardiser: LLMStandardiser,
    *,
    fmt: str | None = None,
    limit: int | None = None,
    max_field_chars: int = DEFAULT_MAX_FIELD_CHARS,
    progress: Callable[[str, int, int], None] | None = None,
) -> StandardiseReport:
    """Standardise every tool of a catalog into MFTR's format: ``[{id, type, augmented, origin_documentation}]``.

    The file is the one ``shared/datasets/mftr/apibank/standardized_tools.gpt-4o-mini.json`` has, so
    the ``mftr`` loader reads it back (``toolsift ingest OUT``); ``augmented`` also holds the judged
    Tool-DE profile. It is written as the catalog streams and moved into place only when complete.
    ``type`` (MFTR's web / code / customized) is not kept by the loaders and is written as null;
    agents have no place in the format and are skipped (their tools are written without owner); an
    ``mftr`` catalog is standardised again from its origin documentation.

    Args:
        path: the catalog.
        out: the file to write.
        standardiser: the LLM (or cache) standardiser.
        fmt: loader name; detected when None.
        limit: standardise only the first ``limit`` tools.
        max_field_chars: as for ingest; a document normalisation would reject is rejected here.
        progress: called as ``("standardize", done, 0)``.

    Returns:
        The report; tools rejected (normalisation errors, LLM answers that stayed invalid) are
        listed in it and left out of the file.

    Raises:
        CatalogError: the catalog cannot be read.
        LLMUnavailableError: a tool is not cached and no LLM is configured (nothing is written).
    """
    fmt = fmt or detect_format(path)
    report = StandardiseReport(catalog=str(path), format=fmt, out=str(out))
    out.parent.mkdir(parents=True, exist_ok=True)
    partial = out.with_name(f".{out.name}.partial")
    done = 0
    try:
        with partial.open("w", encoding="utf-8") as handle:
            handle.write("[")
            for record in load_catalog(path, fmt):
                if limit is not None and done >= limit:
                    break
                if isinstance(record, RejectedRecord):
                    report.rejected.append(record.to_error())
                    continue
                if isinstance(record, RawAgent):
                    report.agents_skipped += 1
                    continue
                done += 1
                if progress:
                    progress("standardize", done, 0)
                entry = _standardised_entry(record, standardiser, max_field_chars, report)
                if entry is None:
                    continue
                handle.write(",\n" if report.tools else "\n")
                handle.write(json.dumps(entry, ensure_ascii=False, indent=2, default=str))
                report.tools += 1
            handle.write("\n]\n")
        os.replace(partial, out)
    finally:
        partial.unlink(missing_ok=True)
    return report


def _standardised_entry(
    raw: RawTool, standardiser: LLMStandardiser, max_field_chars: int, report: StandardiseReport
) -> dict[str, object] | None:
    try:
        outcome = standardiser.run_required(replace(raw, standardized=None))
        assert outcome.doc is not None
        tool_id = normalise_tool(
            replace(raw, standardized=outcome.doc), max_field_chars=max_field_chars
        ).tool_id
    except CatalogRecordError as exc:
        report.rejected.append(exc)
        return None
    report.sources[outcome.source] = report.sources.get(outcome.source, 0) + 1
    report.expansions[outcome.expansion] = report.expansions.get(outcome.expansion, 0) + 1
    return {
        "id": tool_id,
        "type": None,
        "augmented": outcome.doc,
        "origin_documentation": raw.documentation,
    }
