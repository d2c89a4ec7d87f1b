"""The BM25 peer of ``toolsift eval --level request``: a FastMCP server holding a LiveMCPBench
catalog's tools behind FastMCP's own ``BM25SearchTransform`` (``search_tools`` + ``call_tool``).

Run as ``python -m toolsift.evaluation.peer_fastmcp TOOLS_JSON`` (stdio). Every tool of every server
is registered under its own name, with its description and input schema, as the peer's users would
register them; a name several servers share is registered once, for the first server in the file
(FastMCP keys tools by name). The tools cannot be called: the benchmark only searches. Needs
``fastmcp`` (the ``bench`` extra).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from toolsift.errors import BadQueryError

__all__ = ["catalog_tools", "first_owners", "peer_server", "main"]


def catalog_tools(tools_json: Path) -> list[tuple[str, dict[str, Any]]]:
    """(server name, MCP tool object) for every tool in a LiveMCPBench ``tools.json``, in file order."""
    out = []
    for server in json.loads(Path(tools_json).read_text(encoding="utf-8")):
        listings = server.get("tools") if isinstance(server, dict) else None
        if not isinstance(listings, dict):
            continue
        for listing in listings.values():
            for tool in (listing.get("tools") or []) if isinstance(listing, dict) else []:
                if isinstance(tool, dict) and isinstance(tool.get("name"), str):
                    out.append((str(server.get("name")), tool))
    return out


def first_owners(tools_json: Path) -> dict[str, str]:
    """Tool name → the server the peer registers it for (the first in the file)."""
    owners: dict[str, str] = {}
    for server, tool in catalog_tools(tools_json):
        owners.setdefault(tool["name"], server)
    return owners


def peer_server(tools_json: Path) -> Any:
    """The FastMCP server with the catalog's tools behind ``BM25SearchTransform`` (max 10 results)."""
    from fastmcp import FastMCP
    from fastmcp.server.transforms.search import BM25SearchTransform
    from fastmcp.tools.base import Tool, ToolResult

    class CatalogTool(Tool):
        async def run(self, arguments: dict[str, Any]) -> ToolResult:
            raise BadQueryError("catalog tools are searched, not called, in this benchmark")

    server = FastMCP("fastmcp-bm25-peer")
    seen: set[str] = set()
    for _, tool in catalog_tools(tools_json):
        if tool["name"] in seen:
            continue
        seen.add(tool["name"])
        schema = tool.get("inputSchema") if isinstance(tool.get("inputSchema"), dict) else {"type": "object"}
        server.add_tool(CatalogTool(name=tool["name"], description=str(tool.get("description") or ""),
                                    parameters=schema))
    server.add_transform(BM25SearchTransform(max_results=10))
    return server


def main() -> None:
    if len(sys.argv) != 2:
        sys.exit("usage: python -m toolsift.evaluation.peer_fastmcp TOOLS_JSON")
    peer_server(Path(sys.argv[1])).run(show_banner=False)


if __name__ == "__main__":
    main()
