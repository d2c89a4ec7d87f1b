"""Local ``$ref`` resolution in an OpenAPI spec: references inlined, cycles marked, size and depth bounded.

A reference met again while it is being resolved becomes ``{"$ref": ..., "circular": true}``; one
that points nowhere ``{"$ref": ..., "unresolved": true}``; one past the reference depth or node
budget, or whose target would nest the tool's documentation deeper than ``max_depth`` levels,
``{"$ref": ..., "truncated": true}``; external references stay as they are. A part of the spec that
is itself nested deeper than ``max_depth`` (no reference to cut) is returned as it is, unresolved:
the ingest rejects its record for depth (:func:`toolsift.ingest.nesting.nesting_problem`).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import unquote

from toolsift.ingest.nesting import DEFAULT_MAX_NESTING_DEPTH

__all__ = ["RefResolver"]

_MAX_REF_DEPTH = 64
# Shared references can multiply a schema's size with every level; past this many nodes per
# operation the rest is left as references instead of being inlined.
_NODE_BUDGET = 200_000
_MISSING = object()


class _TooDeep(Exception):
    """Resolving went past the depth bound; the nearest reference being inlined is cut instead."""


class RefResolver:
    """Inlines local ``$ref``\\s, marking cycles instead of following them.

    Args:
        spec: the whole spec, which ``#/...`` pointers are read in.
        max_depth: the deepest level of a tool's documentation a resolved value may reach (see
            :meth:`resolve`'s ``level``); the walk never goes deeper, so any spec is safe to resolve.
    """

    def __init__(self, spec: dict[str, Any], max_depth: int = DEFAULT_MAX_NESTING_DEPTH) -> None:
        self._spec = spec
        self._budget = _NODE_BUDGET
        self._max_depth = max_depth

    def reset_budget(self) -> None:
        self._budget = _NODE_BUDGET

    def resolve(self, node: Any, level: int = 1) -> Any:
        """``node`` with every local reference inside it inlined.

        Args:
            level: how deep in the tool's documentation the result goes (the documentation is level
                1); a reference whose target would nest past ``max_depth`` stays a reference
                (``truncated``), and a node nested past it with no reference to cut is returned as it is.
        """
        try:
            return self._resolve(node, (), level)
        except _TooDeep:
            return node

    def deref(self, node: Any) -> Any:
        """The node a (chain of) reference(s) points to, not resolved inside; else ``node``."""
        seen: set[str] = set()
        while isinstance(node, dict) and isinstance(node.get("$ref"), str):
            ref = node["$ref"]
            if not ref.startswith("#") or ref in seen:
                return node
            seen.add(ref)
            target = self._pointer(ref)
            if target is _MISSING:
                return node
            node = target
        return node

    def _resolve(self, node: Any, stack: tuple[str, ...], level: int) -> Any:
        self._budget -= 1
        if isinstance(node, (list, dict)) and level > self._max_depth:
            raise _TooDeep
        if isinstance(node, list):
            return [self._resolve(item, stack, level + 1) for item in node]
        if not isinstance(node, dict):
            return node
        ref = node.get("$ref")
        if not isinstance(ref, str):
            return {key: self._resolve(value, stack, level + 1) for key, value in node.items()}
        if not ref.startswith("#"):
            return dict(node)
        if ref in stack:
            return {"$ref": ref, "circular": True}
        if len(stack) >= _MAX_REF_DEPTH or self._budget <= 0:
            return {"$ref": ref, "truncated": True}
        target = self._pointer(ref)
        if target is _MISSING:
            return {"$ref": ref, "unresolved": True}
        try:
            resolved = self._resolve(target, (*stack, ref), level)
        except _TooDeep:  # inlined here, the target would nest too deep: it stays a reference
            return {"$ref": ref, "truncated": True}
        siblings = {key: value for key, value in node.items() if key != "$ref"}
        if siblings and isinstance(resolved, dict):
            # OpenAPI 3.1 lets a reference carry its own description/summary; those win.
            resolved = {**resolved, **self._resolve(siblings, stack, level)}
        return resolved

    def _pointer(self, ref: str) -> Any:
        node: Any = self._spec
        fragment = unquote(ref[1:])
        if not fragment:
            return node
        if not fragment.startswith("/"):
            return _MISSING
        for token in fragment[1:].split("/"):
            token = token.replace("~1", "/").replace("~0", "~")
            if isinstance(node, dict) and token in node:
                node = node[token]
            elif isinstance(node, list) and token.isdigit() and int(token) < len(node):
                node = node[int(token)]
            else:
                return _MISSING
        return node
