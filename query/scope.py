"""What one search may see: the caller's tenant and the request's filters, as OpenSearch clauses.

Every first-stage query carries the scope *inside* the query: the lexical ``bool``'s filter, and for
k-NN the ``knn`` clause's own ``filter``, so the nearest neighbours are found among the allowed
documents instead of being cut afterwards. The tenant boundary holds inside nested k-NN too (the
parameter and example sub-documents carry their tool's tenants, copied at ingest); the agent and
tag filters, which narrow rather than guard, apply to a nested k-NN's parent documents.

A document with no ``tenants`` is public: every tenant sees it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from toolsift.errors import BadQueryError
from toolsift.mappings import F
from toolsift.mappings.scoped import is_scoped, scoped_id

__all__ = ["Scope", "tenant_clause", "UNSCOPED"]

#: Most values one filter may list (servers, agents, tags).
MAX_FILTER_VALUES = 100


def tenant_clause(tenant: str, field: str = "tenants") -> dict[str, Any]:
    """Documents of ``tenant`` or public (no tenants), on ``field`` (``<path>.tenants`` inside nested)."""
    return {"bool": {"should": [{"term": {field: tenant}}, {"bool": {"must_not": {"exists": {"field": field}}}}],
                     "minimum_should_match": 1}}


@dataclass(frozen=True)
class Scope:
    """The caller's tenant and the request's filters.

    Args:
        tenant: the caller's tenant; None sees every tenant (no keys configured, or an admin key for ``*``).
        agents: only tools of these agents or MCP servers (ids ``agent:<slug>``; for a tenant's caller
            also its own server of that name, ``agent:@<tenant>/<slug>``).
        tags: only tools carrying at least one of these tags (exact, as ingested).
        exclude_flagged: leave out the tools the ingest screen flagged (``ToolDoc.risk``).

    Raises:
        BadQueryError: an empty value, or more than 100 of one kind.
    """

    tenant: str | None = None
    agents: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    exclude_flagged: bool = False

    def __post_init__(self) -> None:
        for name in ("agents", "tags"):
            values = tuple(dict.fromkeys(str(v).strip() for v in getattr(self, name)))
            if not all(values):
                raise BadQueryError(f"filters.{name}: a value is empty")
            if len(values) > MAX_FILTER_VALUES:
                raise BadQueryError(f"filters.{name}: at most {MAX_FILTER_VALUES} values, got {len(values)}")
            object.__setattr__(self, name, values)

    @property
    def narrows(self) -> bool:
        """Whether the request's own filters (agents, tags) narrow the search."""
        return bool(self.agents or self.tags)

    def clauses(self) -> list[dict[str, Any]]:
        """Filter clauses on tool and agent documents."""
        out: list[dict[str, Any]] = []
        if self.tenant is not None:
            out.append(tenant_clause(self.tenant))
        if self.agents:
            out.append({"terms": {F.agent_id: list(self._agent_ids())}})
        if self.tags:
            out.append({"terms": {"tags.keyword": list(self.tags)}})
        if self.exclude_flagged:
            out.append({"bool": {"must_not": [{"term": {F.risk: "flagged"}}]}})
        return out

    def _agent_ids(self) -> tuple[str, ...]:
        """The agents filtered on: for a tenant's caller, a server's name as a catalog gives it also names
        the tenant's own server of that name (its id scoped to the tenant, :mod:`toolsift.mappings.scoped`)."""
        if self.tenant is None:
            return self.agents
        own = (scoped_id(a, (self.tenant,)) for a in self.agents if not is_scoped(a))
        return tuple(dict.fromkeys((*self.agents, *own)))

    def nested_clauses(self, path: str) -> list[dict[str, Any]]:
        """The tenant boundary on the sub-documents of nested field ``path`` (parameters, examples)."""
        return [] if self.tenant is None else [tenant_clause(self.tenant, f"{path}.tenants")]

    def key(self) -> tuple[str | None, tuple[str, ...], tuple[str, ...], bool]:
        """A hashable identity, for caches of scoped answers."""
        return (self.tenant, self.agents, self.tags, self.exclude_flagged)


#: No tenant boundary, no filters.
UNSCOPED = Scope()
