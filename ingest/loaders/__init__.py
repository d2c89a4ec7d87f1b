"""Catalog loaders: one module per catalog format, and the registry that picks one for a file.

Every format is a :class:`~toolsift.ingest.loaders.base.CatalogLoader` (its module's ``LOADER``, with
``NAME``, ``detect`` and ``load`` also at module level): ``detect(path) -> bool`` sniffs the file name
and its first bytes or first record cheaply, ``load(path) -> Iterator[LoadedRecord]`` streams the
records. A loader raises :class:`~toolsift.errors.CatalogError` only for a whole-file problem
(missing, not valid JSON, wrong top-level shape); a bad record is yielded as a
:class:`~toolsift.ingest.raw_records.RejectedRecord`, and everything else about a record is validated by
normalisation.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any

from toolsift.errors import CatalogError
from toolsift.ingest.loaders import beir, mcp, mftr, openai_functions, openapi, toolret
from toolsift.ingest.loaders.base import CatalogLoader
from toolsift.ingest.loaders.files import read_json, read_text, require_file, type_name
from toolsift.ingest.nesting import DEFAULT_MAX_NESTING_DEPTH, nesting_problem
from toolsift.ingest.raw_records import LoadedRecord, RawTool, RejectedRecord

__all__ = ["CatalogLoader", "LOADERS", "get_loader", "detect_format", "load_catalog"]


def _registry(*loaders: CatalogLoader) -> Mapping[str, CatalogLoader]:
    return MappingProxyType({loader.NAME: loader for loader in loaders})


#: Loaders by format name, in detection priority (the most specific shapes first).
LOADERS: Mapping[str, CatalogLoader] = _registry(
    mftr.LOADER, toolret.LOADER, mcp.LOADER, openai_functions.LOADER, openapi.LOADER, beir.LOADER
)


def _known() -> str:
    return ", ".join(LOADERS)


def get_loader(name: str) -> CatalogLoader:
    """The loader of format ``name``.

    Raises:
        CatalogError: no loader has that name; the message lists the known formats.
    """
    try:
        return LOADERS[name]
    except KeyError:
        raise CatalogError(f"unknown catalog format {name!r}; known formats: {_known()}") from None


def detect_format(path: Path | str) -> str:
    """The name of the first loader (in :data:`LOADERS` order) that recognises the file.

    Raises:
        CatalogError: the file is missing, is JSON that does not parse (with line and column), or
            no loader recognises it (the message names the path and the known formats).
    """
    path = Path(path)
    require_file(path)
    for name, loader in LOADERS.items():
        if loader.detect(path):
            return name
    if path.stat().st_size == 0 or not read_text(path).strip():
        raise CatalogError(f"catalog file {str(path)!r} is empty: no tools to read")
    if path.suffix.lower() == ".json":
        _undetected_json(path, read_json(path))  # a parse error says more than "unknown format"
    raise CatalogError(
        f"cannot tell the format of catalog file {str(path)!r}; known formats: {_known()} "
        f"(name one explicitly)"
    )


def _undetected_json(path: Path, data: Any) -> None:
    """Raise the :class:`CatalogError` that says what a JSON file no loader recognised holds."""
    where = f"catalog file {str(path)!r}"
    if isinstance(data, list) and not data:
        raise CatalogError(f"{where} is an empty list: no tools to read")
    if isinstance(data, list) and not isinstance(data[0], dict):
        raise CatalogError(f"{where}: expected a list of tool objects, but its first item is {type_name(data[0])}")
    if isinstance(data, list):
        keys = sorted(data[0])[:10]
        raise CatalogError(
            f"{where}: its records have keys {keys}, which no format recognises (ToolRet records have "
            f"'id' and 'documentation'; MCP tools 'name' and 'inputSchema'; OpenAI functions 'name' and "
            f"'parameters'); known formats: {_known()}"
        )
    if not isinstance(data, dict):
        raise CatalogError(f"{where}: expected a JSON list or object of tools at the top level, got {type_name(data)}")
    if not data:
        raise CatalogError(f"{where} is an empty object: no tools to read")
    raise CatalogError(
        f"{where}: an object with keys {sorted(data)[:10]}, which no format recognises (an OpenAPI spec has "
        f"'openapi'; an MCP tools/list result or OpenAI file has 'tools'); known formats: {_known()}"
    )


def load_catalog(
    path: Path | str, format: str | None = None, *, max_depth: int = DEFAULT_MAX_NESTING_DEPTH
) -> Iterator[LoadedRecord]:
    """Read a catalog: agents (each before its tools), tools, and rejected records, in file order.

    Args:
        path: the catalog file.
        format: a name from :data:`LOADERS`; detected from the file when None.
        max_depth: a record whose documentation (or standardised document) nests lists and objects
            deeper than this (``Settings.max_nesting_depth``) comes out rejected, naming the field,
            before anything walks it.

    Raises:
        CatalogError: at once for a missing file, an unknown format or an undetectable one; while
            iterating for a file that turns out to be unreadable, not valid JSON, or nested too deep
            for Python's parser.
    """
    path = Path(path)
    loader = get_loader(format) if format is not None else get_loader(detect_format(path))
    require_file(path)
    return _depth_checked(loader.load(path), max_depth)


def _depth_checked(records: Iterator[LoadedRecord], max_depth: int) -> Iterator[LoadedRecord]:
    for record in records:
        if isinstance(record, RejectedRecord):
            yield record
            continue
        record_id = record.tool_id if isinstance(record, RawTool) else record.agent_id
        standardized = record.standardized if isinstance(record, RawTool) else None
        problem = nesting_problem(record.documentation, max_depth)
        if problem is None and isinstance(standardized, Mapping):
            problem = nesting_problem(standardized, max_depth, "standardized.")
        if problem is None:
            yield record
            continue
        field, reason = problem
        yield RejectedRecord(record.source, record.position, reason, record_id=record_id, field=field)
