"""A real MCP server whose tools change at run time: the live source of ``toolsift bench freshness`` and
of the live-catalog tests.

``python -m toolsift.bench.changing_server SPEC [--http PORT [--token T]]`` serves, with the
official SDK's low-level server, over stdio (or streamable HTTP at ``http://127.0.0.1:PORT/mcp``,
answering only requests bearing ``Authorization: Bearer T`` when a token is given), the tools listed
in the JSON file SPEC::

    {"name": "notes", "page_size": 2, "tools": [{"name": ..., "description": ..., "inputSchema": {...}}]}

``page_size`` tools per ``tools/list`` page (default 2, so paging is always exercised). It re-reads
SPEC every 0.1 s; when the file changes it serves the new tools and sends
``notifications/tools/list_changed``. A call of any tool answers with its name and arguments as JSON (a
tool named ``fail`` answers with an error result). Faults on demand: ``{"crash": true}`` exits at once
(and fails to start while SPEC says so), ``{"hang": true}`` stops answering ``tools/list``,
``{"garbage": true}`` answers ``tools/list`` with an error.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import anyio

__all__ = ["main"]


def _read(spec: Path) -> dict[str, Any]:
    try:
        return dict(json.loads(spec.read_text(encoding="utf-8")))
    except (OSError, ValueError):
        return {"tools": []}


def _mtime(spec: Path) -> int:
    try:
        return spec.stat().st_mtime_ns
    except OSError:
        return 0


def _bearer(app: Any, token: str) -> Any:
    """``app`` answering 401 to an HTTP request without ``Authorization: Bearer <token>``."""
    expected = f"Bearer {token}".encode()

    async def guarded(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http" and dict(scope["headers"]).get(b"authorization") != expected:
            await send({"type": "http.response.start", "status": 401, "headers": [(b"content-type", b"text/plain")]})
            await send({"type": "http.response.body", "body": b"missing or wrong bearer token"})
            return
        await app(scope, receive, send)

    return guarded


async def _serve(spec: Path, port: int | None = None, token: str | None = None) -> None:
    import mcp_types as types
    from mcp.server.lowlevel import NotificationOptions, Server
    from mcp.server.stdio import stdio_server
    from mcp.shared.exceptions import MCPError

    state: dict[str, Any] = {"spec": _read(spec), "calls": 0}
    sessions: list[Any] = []
    if state["spec"].get("crash"):
        sys.exit(3)

    async def list_tools(ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        if ctx.session not in sessions:
            sessions.append(ctx.session)
        current = state["spec"]
        if current.get("hang"):
            await anyio.sleep(3600)
        if current.get("garbage"):
            raise MCPError(-32603, "the tool registry is corrupt")  # JSON-RPC internal error
        tools = [types.Tool(name=t["name"], description=t.get("description", ""),
                            input_schema=t.get("inputSchema") or {"type": "object", "properties": {}})
                 for t in current.get("tools", [])]
        size = max(1, int(current.get("page_size", 2)))
        start = int(params.cursor) if params is not None and params.cursor else 0
        end = start + size
        return types.ListToolsResult(tools=tools[start:end], next_cursor=str(end) if end < len(tools) else None)

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        state["calls"] += 1
        answer = json.dumps({"tool": params.name, "arguments": params.arguments or {}, "calls": state["calls"]})
        return types.CallToolResult(content=[types.TextContent(type="text", text=answer)],
                                    is_error=params.name == "fail")

    async def watch() -> None:
        last = _mtime(spec)
        while True:
            await anyio.sleep(0.1)
            now = _mtime(spec)
            if now == last:
                continue
            last = now
            state["spec"] = _read(spec)
            if state["spec"].get("crash"):
                os._exit(3)
            for session in list(sessions):
                try:
                    await session.send_tool_list_changed()
                except Exception:  # noqa: BLE001 - a closed session
                    sessions.remove(session)

    server = Server(name=str(state["spec"].get("name", "changing")), on_list_tools=list_tools, on_call_tool=call_tool)
    options = server.create_initialization_options(notification_options=NotificationOptions(tools_changed=True))
    if port is None:
        async with stdio_server() as (read, write), anyio.create_task_group() as group:
            group.start_soon(watch)
            await server.run(read, write, options)
            group.cancel_scope.cancel()
        return
    import uvicorn

    app = server.streamable_http_app()
    web = uvicorn.Server(uvicorn.Config(_bearer(app, token) if token else app, host="127.0.0.1", port=port,
                                        log_level="warning"))
    async with anyio.create_task_group() as group:
        group.start_soon(watch)
        await web.serve()
        group.cancel_scope.cancel()


def main(argv: Sequence[str] | None = None) -> None:
    import argparse

    parser = argparse.ArgumentParser(prog="python -m toolsift.bench.changing_server")
    parser.add_argument("spec", type=Path)
    parser.add_argument("--http", type=int, metavar="PORT", help="serve streamable HTTP on this port, not stdio")
    parser.add_argument("--token", help="with --http: the bearer token every request must carry")
    args = parser.parse_args(argv)
    anyio.run(_serve, args.spec, args.http, args.token)


if __name__ == "__main__":
    main()
