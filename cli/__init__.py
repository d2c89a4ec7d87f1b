"""The ``toolsift`` command line: one click group (:mod:`.main`) whose commands are thin front ends
over the search backend, ingest, evaluation and the node scripts."""

from __future__ import annotations

from toolsift.lazy import lazy_exports

#: Public name → the module that defines it, imported on first use (:mod:`toolsift.lazy`).
_EXPORTS: dict[str, str] = {
    "cli": "toolsift.cli.main",
}

__all__ = list(_EXPORTS)

__getattr__ = lazy_exports(__name__, _EXPORTS)
