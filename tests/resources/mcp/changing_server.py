"""A real MCP server (the official SDK's low-level server, stdio) whose tools change at run time.

``python changing_server.py SPEC`` serves the tools listed in the JSON file SPEC
(``{"name": ..., "tools": [{"name", "description", "inputSchema"}], "page_size": 2}``), two per
``tools/list`` page by default. It re-reads SPEC every 0.1 s; when the file changes it serves the new
tools and sends ``notifications/tools/list_changed``. A SPEC holding ``{"crash": true}`` makes it exit
at once (and fail to start while it says so); ``{"hang": true}`` makes it stop answering ``tools/list``; ``{"garbage": true}`` makes it answer
``tools/list`` with an error. A call of any tool answers with its name and arguments as JSON (a tool
named ``fail`` answers with an error result). Tests write SPEC to add, change and remove tools while toolsift syncs.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
from mcp.server.lowlevel import NotificationOptions, Server
from mcp.server.stdio import stdio_server

SPEC = Path(sys.argv[1])
sessions: list[Any] = []


def read_spec() -> dict[str, Any]:
    try:
        return dict(json.loads(SPEC.read_text(encoding="utf-8")))
    except (OSError, ValueError):
        return {"tools": []}


state = {"spec": read_spec()}


async def list_tools(ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
    if ctx.session not in sessions:
        sessions.append(ctx.session)
    spec = state["spec"]
    if spec.get("hang"):
        await anyio.sleep(3600)
    if spec.get("garbage"):
        raise ValueError("the tool registry is corrupt")
    tools = [types.Tool(name=t["name"], description=t.get("description", ""),
                        input_schema=t.get("inputSchema") or {"type": "object", "properties": {}})
             for t in spec.get("tools", [])]
    size = int(spec.get("page_size", 2))
    start = int(params.cursor) if params is not None and params.cursor else 0
    end = start + size
    return types.ListToolsResult(tools=tools[start:end], next_cursor=str(end) if end < len(tools) else None)


async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
    """Echo the call: ``{"tool", "arguments", "calls"}``; a tool named ``fail`` answers with an error."""
    state["calls"] = int(state.get("calls", 0)) + 1
    answer = json.dumps({"tool": params.name, "arguments": params.arguments or {}, "calls": state["calls"]})
    return types.CallToolResult(content=[types.TextContent(type="text", text=answer)],
                                is_error=params.name == "fail")


async def watch() -> None:
    last = SPEC.stat().st_mtime_ns if SPEC.exists() else 0
    while True:
        await anyio.sleep(0.1)
        now = SPEC.stat().st_mtime_ns if SPEC.exists() else 0
        if now == last:
            continue
        last = now
        state["spec"] = read_spec()
        if state["spec"].get("crash"):
            os._exit(3)
        for session in list(sessions):
            try:
                await session.send_tool_list_changed()
            except Exception:  # noqa: BLE001 - a closed session
                sessions.remove(session)


async def main() -> None:
    if state["spec"].get("crash"):
        sys.exit(3)
    server = Server(name=str(state["spec"].get("name", "changing")), on_list_tools=list_tools, on_call_tool=call_tool)
    options = server.create_initialization_options(notification_options=NotificationOptions(tools_changed=True))
    async with stdio_server() as (read, write), anyio.create_task_group() as group:
        group.start_soon(watch)
        await server.run(read, write, options)
        group.cancel_scope.cancel()


if __name__ == "__main__":
    anyio.run(main)
