"""MCP catalogs: a list of servers with their tools, or one server's ``tools/list`` result.

Two shapes are read:

* **servers** (LiveMCPBench's ``tools.json``): a list of ``{name, description, category, config,
  tools: {server_key: {server_name, tools: [...]}}}`` (``tools`` may also be a plain list). Each
  server becomes a :class:`RawAgent` with id ``agent:<slug of name>``, tags from ``category``, its
  tools' names, and the entry without its tool lists as documentation; it is followed by its tools, each a
  :class:`RawTool` with id ``<slug of server name>/<tool name>``.
* **one server** (a ``tools/list`` result): ``{"tools": [...]}`` or a bare list of
  ``{name, description, inputSchema}``. When the file names the server (``serverInfo.name``,
  ``name`` or ``server_name``) the server becomes the agent; otherwise the tools have none. Tool ids
  are ``<slug of the server name, else of the catalog name>/<tool name>``, so two servers' files can
  share one index.

Tools are never merged: two tools of one server with the same name get the same id, and the pipeline
reports the second as a duplicate.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from toolsift.ingest.loaders.base import JsonCatalogLoader, not_expected
from toolsift.ingest.loaders.files import JsonPeek, list_records, listed_under, read_json, type_name
from toolsift.ingest.loaders.naming import agent_id_for, catalog_name, nonblank, slugify
from toolsift.ingest.raw_records import LoadedRecord, RawAgent, RawTool, RejectedRecord

__all__ = ["McpLoader", "LOADER", "NAME", "detect", "load", "tool_id_for"]

_SCHEMA_KEYS = ("inputSchema", "input_schema")


def _is_mcp_tool(item: Any) -> bool:
    return isinstance(item, dict) and any(key in item for key in _SCHEMA_KEYS)


def _is_server(item: Any) -> bool:
    return isinstance(item, dict) and "name" in item and isinstance(item.get("tools"), (dict, list))


class McpLoader(JsonCatalogLoader):
    """Each server's :class:`RawAgent` followed by its tools.

    Raises (while loading):
        CatalogError: the file is missing, not valid JSON, or neither MCP shape.
    """

    NAME = "mcp"

    def recognise(self, peek: JsonPeek) -> bool:
        """A list of servers with tools, a list of MCP tools, or ``{"tools": [MCP tools]}``."""
        if peek.top == "list":
            return _is_server(peek.first) or _is_mcp_tool(peek.first)
        tools = peek.first.get("tools")
        if not isinstance(tools, list):
            return False
        return _is_mcp_tool(tools[0]) if tools else "serverInfo" in peek.first

    def records(self, path: Path, source: str) -> Iterator[LoadedRecord]:
        data = read_json(path)
        if isinstance(data, dict):
            tools = listed_under(
                data,
                path,
                ("tools",),
                "MCP tools",
                "a list of MCP servers or a tools/list result with a 'tools' list",
            )
            yield from _single_server(source, path, data, tools)
            return
        records = list_records(data, path, "MCP servers or tools")
        first = next((item for item in records if isinstance(item, dict)), None)
        if first is not None and "tools" in first and not _is_mcp_tool(first):
            for index, entry in enumerate(records):
                yield from _server(source, index, entry)
        else:
            yield from _single_server(source, path, {}, records)


def _tags(entry: dict[str, Any]) -> tuple[str, ...]:
    tags: list[str] = []
    for key in ("category", "categories", "tags"):
        value = entry.get(key)
        values = value if isinstance(value, list) else [value]
        tags.extend(v.strip() for v in values if isinstance(v, str) and v.strip())
    return tuple(dict.fromkeys(tags))


def _server_tools(tools: Any) -> list[Any] | None:
    """The server's tools in catalog order, or None when ``tools`` has neither known shape."""
    if isinstance(tools, list):
        return tools
    if not isinstance(tools, dict):
        return None
    collected: list[Any] = []
    for value in tools.values():
        inner = value.get("tools") if isinstance(value, dict) else value
        if not isinstance(inner, list):
            return None
        collected.extend(inner)
    return collected


def _tool_names(tools: list[Any]) -> tuple[str, ...]:
    """The names of the server's tools that have one, in catalog order, each once."""
    names = (t.get("name") for t in tools if isinstance(t, dict))
    return tuple(dict.fromkeys(n.strip() for n in names if isinstance(n, str) and n.strip()))


def _without_tool_lists(entry: dict[str, Any]) -> dict[str, Any]:
    documentation = {key: value for key, value in entry.items() if key != "tools"}
    tools = entry.get("tools")
    if isinstance(tools, dict):
        # Keep what the catalog says about each server key (server_name, version), not the tools.
        documentation["tools"] = {
            key: {k: v for k, v in value.items() if k != "tools"}
            for key, value in tools.items()
            if isinstance(value, dict)
        }
    return documentation


def _server(source: str, index: int, entry: Any) -> Iterator[LoadedRecord]:
    position = f"server {index}"
    if not isinstance(entry, dict):
        yield not_expected(source, position, entry, "a server object")
        return
    name = entry.get("name")
    tools = _server_tools(entry.get("tools"))
    if not isinstance(name, str) or not name.strip():
        reason = "the server has no name" if not name else f"name must be a string, got {type_name(name)}"
        yield RejectedRecord(source, position, reason, field="name")
        for tool_index, _ in enumerate(tools or []):
            yield RejectedRecord(
                source, f"{position} tool {tool_index}", f"its server ({position}) has no usable name"
            )
        return
    name = name.strip()
    agent_id = agent_id_for(name)
    description = entry.get("description")
    if description is not None and not isinstance(description, str):
        yield RejectedRecord(
            source,
            position,
            f"description must be a string, got {type_name(description)}",
            record_id=agent_id,
            field="description",
        )
    else:
        yield RawAgent(
            source,
            position,
            agent_id,
            name,
            description or "",
            _without_tool_lists(entry),
            _tags(entry),
            _tool_names(tools or []),
        )
    if tools is None:
        yield RejectedRecord(
            source,
            position,
            "tools must be a list of tools or an object of {server: {tools: [...]}}",
            record_id=agent_id,
            field="tools",
        )
        return
    yield from _tools(source, f"{position} ", tools, slugify(name), agent_id)


def _single_server(
    source: str, path: Path, data: dict[str, Any], tools: list[Any]
) -> Iterator[LoadedRecord]:
    server_info = data.get("serverInfo")
    info: dict[str, Any] = server_info if isinstance(server_info, dict) else {}
    name = next(
        (
            value.strip()
            for value in (info.get("name"), data.get("name"), data.get("server_name"))
            if isinstance(value, str) and value.strip()
        ),
        None,
    )
    agent_id: str | None = None
    if name is not None:
        agent_id = agent_id_for(name)
        description = next(
            (
                value
                for value in (
                    info.get("description"),
                    data.get("description"),
                    data.get("instructions"),
                )
                if isinstance(value, str)
            ),
            "",
        )
        yield RawAgent(
            source,
            "server",
            agent_id,
            name,
            description,
            _without_tool_lists(data),
            _tags(data),
            _tool_names(tools),
        )
    yield from _tools(source, "", tools, slugify(name or catalog_name(path)), agent_id)


def tool_id_for(server_name: str, tool_name: str) -> str:
    """The id a tool of MCP server ``server_name`` gets: ``<slug of server name>/<tool name>``.

    Benchmarks that name tools by server and tool (LiveMCPBench's annotations) use this to build
    qrels with the index's ids.
    """
    return f"{slugify(server_name.strip())}/{tool_name.strip()}"


def _tools(
    source: str, prefix: str, tools: list[Any], id_prefix: str, agent_id: str | None
) -> Iterator[LoadedRecord]:
    for index, tool in enumerate(tools):
        position = f"{prefix}tool {index}"
        if not isinstance(tool, dict):
            yield not_expected(source, position, tool, "a tool object")
            continue
        name = nonblank(tool.get("name"))
        tool_id = f"{id_prefix}/{name.strip()}" if name is not None else None
        # id_prefix is slugify(server name), so this equals tool_id_for(server, name)
        yield RawTool(source, position, tool, tool_id, agent_id)


LOADER = McpLoader()
NAME = LOADER.NAME
detect = LOADER.detect
load = LOADER.load
