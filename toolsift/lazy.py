"""Lazy front doors: a package lists its public names in ``__all__`` without importing every module.

Importing one module of a package runs the package's ``__init__`` first; a front door that imported
the whole package would load torch for ``toolsift --help``. :func:`lazy_exports` gives the module
``__getattr__`` of PEP 562 instead, importing a name's module on first use.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["lazy_exports"]


def lazy_exports(package: str, exports: Mapping[str, str]) -> Callable[[str], Any]:
    """A module ``__getattr__`` for ``package`` that imports each name of ``exports`` (name → the module
    defining it) on first use; other names raise ``AttributeError`` as usual."""

    def __getattr__(name: str) -> Any:
        if name in exports:
            return getattr(importlib.import_module(exports[name]), name)
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    return __getattr__
