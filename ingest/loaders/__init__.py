"""Catalog loaders: one module per catalog format, and the registry that picks one for a file.

Every format is a :class:`~toolsift.ingest.loaders.base.CatalogLoader` (its module's ``LOADER``, with
``NAME``, ``detect`` and ``load`` also at module level): ``detect(path) -> bool`` sniffs the file name
and its first bytes or first record cheaply, ``load(path) -> Iterator[LoadedRecord]`` streams the
records. A loader raises :class:`~toolsift.errors.CatalogError` only for a whole-file problem
(missing, not valid JSON, wrong top-level shape); a bad record is yielded as a
:class:`~toolsift.ingest.records.RejectedRecord`, and everything else about a record is validated by
normalisation.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from types import MappingProxyType

from toolsift.errors import CatalogError
from toolsift.ingest.loaders import beir, mcp, mftr, openai_functions, openapi, toolret
from toolsift.ingest.loaders.base import CatalogLoader
from toolsift.ingest.loaders.files import read_json, require_file
from toolsift.ingest.records import LoadedRecord

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
