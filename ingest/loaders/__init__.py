"""Catalog loaders: one module per catalog format, and the registry that picks one for a file.

Every loader module exposes ``NAME``, ``detect(path) -> bool`` (cheap sniffing of the file name and
its first bytes or first record) and ``load(path) -> Iterator[LoadedRecord]``. A loader raises
:class:`~toolsift.errors.CatalogError` only for a whole-file problem (missing, not valid JSON, wrong
top-level shape); a bad record is yielded as a :class:`~toolsift.ingest.records.RejectedRecord`, and
everything else about a record is validated by normalisation.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Protocol

from toolsift.errors import CatalogError
from toolsift.ingest.loaders import beir, mcp, mftr, openai_functions, openapi, toolret
from toolsift.ingest.loaders._common import read_json, require_file
from toolsift.ingest.records import LoadedRecord

__all__ = ["CatalogLoader", "LOADERS", "get_loader", "detect_format", "load_catalog"]


class CatalogLoader(Protocol):
    """What a loader module provides."""

    NAME: str

    def detect(self, path: Path) -> bool: ...

    def load(self, path: Path) -> Iterator[LoadedRecord]: ...


def _registry(*modules: CatalogLoader) -> Mapping[str, CatalogLoader]:
    return MappingProxyType({module.NAME: module for module in modules})


#: Loaders by format name, in detection priority (the most specific shapes first).
LOADERS: Mapping[str, CatalogLoader] = _registry(mftr, toolret, mcp, openai_functions, openapi, beir)


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
    if path.suffix.lower() == ".json":
        read_json(path)  # a parse error says more than "unknown format"
    raise CatalogError(
        f"cannot tell the format of catalog file {str(path)!r}; known formats: {_known()} "
        f"(name one explicitly)"
    )


def load_catalog(path: Path | str, format: str | None = None) -> Iterator[LoadedRecord]:
    """Read a catalog: agents (each before its tools), tools, and rejected records, in file order.

    Args:
        path: the catalog file.
        format: a name from :data:`LOADERS`; detected from the file when None.

    Raises:
        CatalogError: at once for a missing file, an unknown format or an undetectable one; while
            iterating for a file that turns out to be unreadable or not valid JSON.
    """
    path = Path(path)
    loader = get_loader(format) if format is not None else get_loader(detect_format(path))
    require_file(path)
    return loader.load(path)
