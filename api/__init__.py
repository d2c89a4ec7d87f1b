"""The serving front ends agents call: the search API (``toolsift serve api``) and the MCP server
(``toolsift serve mcp``), both thin over :class:`~toolsift.api.search_service.ToolSearchService` and the one
search backend."""

from __future__ import annotations

from toolsift.lazy import lazy_exports

#: Public name → the module that defines it, imported on first use (:mod:`toolsift.lazy`).
_EXPORTS: dict[str, str] = {
    "ToolSearchService": "toolsift.api.search_service",
    "Delivery": "toolsift.api.search_service",
    "agent_filter": "toolsift.api.search_service",
    "create_app": "toolsift.api.app",
    "create_mcp_server": "toolsift.api.mcp_server",
}

__all__ = list(_EXPORTS)

__getattr__ = lazy_exports(__name__, _EXPORTS)
