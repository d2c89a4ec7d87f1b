"""The ``toolsift`` command line: one click group (:mod:`.main`) whose commands are thin front ends
over the search backend, ingest, evaluation and the node scripts."""

from __future__ import annotations

import importlib
from typing import Any

#: Public name → the module that defines it; imported on first use (PEP 562), so importing one
#: module of the package does not load the rest (torch, FastAPI).
_EXPORTS: dict[str, str] = {
    "cli": "toolsift.cli.main",
}

__all__ = list(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
