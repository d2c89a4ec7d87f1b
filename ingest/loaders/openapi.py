"""OpenAPI 3 specifications (JSON, or YAML when PyYAML is installed): one tool per operation.

The API (``info.title``) is the agent, id ``agent:<slug of title>``; its documentation is the spec
without ``paths``, ``components`` and ``webhooks``. Each operation becomes a tool whose documentation
the loader assembles::

    {name, method, path, description, tags, parameters: [...], responses: {...}}

* ``name`` is the ``operationId``, else ``"<METHOD> <path>"``; the tool id is
  ``<slug of title>/<operationId>``, else ``<slug of title>/<slug of "METHOD path">`` (without the
  prefix when the spec has no title, and so no agent).
* ``description`` is the operation's ``summary`` and ``description`` (the path item's when the
  operation has neither).
* ``parameters`` holds the path-level parameters merged with the operation's (the operation's win
  for the same ``name`` + ``in``), then one entry per property of the JSON request body schema
  (``in: body``; required when the schema's ``required`` lists it), or a single ``body`` entry when
  the body is not an object. Each has an explicit ``required``: path parameters always are, others
  when they say so (OpenAPI's default is optional).
* ``responses`` maps each status code to ``{description, schema}``.

Local ``$ref``\\s (``#/...``) are resolved inline. A reference met again while it is being resolved
becomes ``{"$ref": ..., "circular": true}``; one that points nowhere ``{"$ref": ..., "unresolved":
true}``; external references stay as they are.
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from toolsift.errors import CatalogError
from toolsift.ingest.loaders._common import (
    agent_id_for,
    catalog_label,
    peek_json,
    read_json,
    read_text,
    slugify,
    type_name,
)
from toolsift.ingest.records import LoadedRecord, RawAgent, RawTool, RejectedRecord

__all__ = ["NAME", "detect", "load"]

NAME = "openapi"
_METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")
_YAML_SUFFIXES = (".yaml", ".yml")
_YAML_MARKER = re.compile(r"""^["']?(openapi|swagger)["']?\s*:""", re.MULTILINE)
_MAX_REF_DEPTH = 64
# Shared references can multiply a schema's size with every level; past this many nodes per
# operation the rest is left as references instead of being inlined.
_NODE_BUDGET = 200_000
_MISSING = object()


def detect(path: Path) -> bool:
    """True for a JSON object with an ``openapi``/``swagger`` key, or YAML that starts one."""
    suffix = path.suffix.lower()
    if suffix == ".json":
        peek = peek_json(path)
        return peek is not None and peek.top == "object" and (
            "openapi" in peek.first or "swagger" in peek.first
        )
    if suffix in _YAML_SUFFIXES:
        try:
            with open(path, encoding="utf-8-sig") as handle:
                head = handle.read(64 * 1024)
        except (OSError, UnicodeDecodeError):
            return False
        return _YAML_MARKER.search(head) is not None
    return False


def load(path: Path) -> Iterator[LoadedRecord]:
    """Yield the API's :class:`RawAgent`, then one :class:`RawTool` per operation.

    Raises:
        CatalogError: the file is missing, not valid JSON/YAML, not an OpenAPI 3 object, or YAML
            without PyYAML installed.
    """
    spec = _read_spec(path)
    source = catalog_label(path, NAME)
    resolver = _Resolver(spec)
    raw_info = spec.get("info")
    info: dict[str, Any] = raw_info if isinstance(raw_info, dict) else {}
    title = info.get("title")
    agent_id: str | None = None
    id_prefix = ""
    if isinstance(title, str) and title.strip():
        agent_id = agent_id_for(title.strip())
        id_prefix = slugify(title) + "/"
        description = next(
            (v for v in (info.get("description"), info.get("summary")) if isinstance(v, str)), ""
        )
        documentation = {
            key: value
            for key, value in spec.items()
            if key not in ("paths", "components", "webhooks")
        }
        yield RawAgent(source, "info", agent_id, title.strip(), description, documentation)
    paths = spec.get("paths")
    if paths is None:
        return
    if not isinstance(paths, dict):
        raise CatalogError(
            f"catalog file {str(path)!r}: 'paths' must be an object, got {type_name(paths)}"
        )
    for path_key, raw_item in paths.items():
        # Only the item itself is dereferenced: its parts are resolved one by one below, and
        # resolving twice would expand the cycle markers of the first pass.
        item = resolver.deref(raw_item)
        if not isinstance(item, dict):
            yield RejectedRecord(
                source, f"paths.{path_key}", f"a path item must be an object, got {type_name(item)}"
            )
            continue
        for method in _METHODS:
            if method not in item:
                continue
            position = f"paths.{path_key}.{method}"
            operation = item[method]
            if not isinstance(operation, dict):
                yield RejectedRecord(
                    source, position, f"an operation must be an object, got {type_name(operation)}"
                )
                continue
            resolver.reset_budget()
            documentation = _operation_doc(resolver, str(path_key), method, item, operation)
            operation_id = operation.get("operationId")
            if isinstance(operation_id, str) and operation_id.strip():
                tool_id = id_prefix + operation_id.strip()
            else:
                tool_id = id_prefix + slugify(f"{method} {path_key}")
            yield RawTool(source, position, documentation, tool_id, agent_id)


def _read_spec(path: Path) -> dict[str, Any]:
    spec = _read_yaml(path) if path.suffix.lower() in _YAML_SUFFIXES else read_json(path)
    if not isinstance(spec, dict):
        raise CatalogError(
            f"catalog file {str(path)!r}: expected an OpenAPI object at the top level, "
            f"got {type_name(spec)}"
        )
    version = spec.get("openapi")
    if version is None and "swagger" in spec:
        raise CatalogError(
            f"catalog file {str(path)!r} is a Swagger {spec['swagger']} spec; only OpenAPI 3 is "
            f"supported (convert it, e.g. with swagger2openapi)"
        )
    if not isinstance(version, str) or not version.startswith("3"):
        raise CatalogError(
            f"catalog file {str(path)!r}: expected an OpenAPI 3 spec ('openapi: 3.x'), "
            f"got openapi={version!r}"
        )
    return spec


def _read_yaml(path: Path) -> Any:
    try:
        import yaml
    except ImportError as exc:
        raise CatalogError(
            f"catalog file {str(path)!r} is YAML; reading it needs PyYAML (pip install pyyaml), "
            f"or convert the spec to JSON"
        ) from exc
    text = read_text(path)
    try:
        return _jsonable(yaml.safe_load(text))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1} column {mark.column + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc)
        raise CatalogError(f"catalog file {str(path)!r} is not valid YAML: {problem}{where}") from exc


def _jsonable(value: Any) -> Any:
    """YAML's extra scalar types as JSON ones: keys as strings (``200:``), dates as ISO text."""
    if isinstance(value, dict):
        return {str(key): _jsonable(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_jsonable(item) for item in value]
    if isinstance(value, (datetime.date, datetime.datetime)):
        return value.isoformat()
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return str(value)


class _Resolver:
    """Inlines local ``$ref``\\s, marking cycles instead of following them."""

    def __init__(self, spec: dict[str, Any]) -> None:
        self._spec = spec
        self._budget = _NODE_BUDGET

    def reset_budget(self) -> None:
        self._budget = _NODE_BUDGET

    def resolve(self, node: Any) -> Any:
        """``node`` with every local reference inside it inlined."""
        return self._resolve(node, ())

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

    def _resolve(self, node: Any, stack: tuple[str, ...]) -> Any:
        self._budget -= 1
        if isinstance(node, list):
            return [self._resolve(item, stack) for item in node]
        if not isinstance(node, dict):
            return node
        ref = node.get("$ref")
        if not isinstance(ref, str):
            return {key: self._resolve(value, stack) for key, value in node.items()}
        if not ref.startswith("#"):
            return dict(node)
        if ref in stack:
            return {"$ref": ref, "circular": True}
        if len(stack) >= _MAX_REF_DEPTH or self._budget <= 0:
            return {"$ref": ref, "truncated": True}
        target = self._pointer(ref)
        if target is _MISSING:
            return {"$ref": ref, "unresolved": True}
        resolved = self._resolve(target, (*stack, ref))
        siblings = {key: value for key, value in node.items() if key != "$ref"}
        if siblings and isinstance(resolved, dict):
            # OpenAPI 3.1 lets a reference carry its own description/summary; those win.
            resolved = {**resolved, **self._resolve(siblings, stack)}
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


def _operation_doc(
    resolver: _Resolver, path_key: str, method: str, item: dict[str, Any], operation: dict[str, Any]
) -> dict[str, Any]:
    operation_id = operation.get("operationId")
    name = (
        operation_id.strip()
        if isinstance(operation_id, str) and operation_id.strip()
        else f"{method.upper()} {path_key}"
    )
    doc: dict[str, Any] = {"name": name, "method": method.upper(), "path": path_key}
    texts = [operation.get("summary"), operation.get("description")]
    if not any(isinstance(t, str) and t.strip() for t in texts):
        texts = [item.get("summary"), item.get("description")]
    parts = [t.strip() for t in texts if isinstance(t, str) and t.strip()]
    description = "\n\n".join(dict.fromkeys(parts))
    if description:
        doc["description"] = description
    tags = operation.get("tags")
    if isinstance(tags, list) and tags:
        doc["tags"] = [tag for tag in tags if isinstance(tag, str)]
    doc["parameters"] = _parameters(resolver, item, operation)
    responses = resolver.resolve(operation.get("responses"))
    if isinstance(responses, dict):
        doc["responses"] = {
            str(code): _response(response) for code, response in responses.items()
        }
    if operation.get("deprecated") is True:
        doc["deprecated"] = True
    return doc


def _parameters(
    resolver: _Resolver, item: dict[str, Any], operation: dict[str, Any]
) -> list[dict[str, Any]]:
    merged: dict[tuple[str, str], dict[str, Any]] = {}
    unnamed: list[dict[str, Any]] = []
    for level in (item.get("parameters"), operation.get("parameters")):
        if not isinstance(level, list):
            continue
        for raw in level:
            param = resolver.resolve(raw)
            if not isinstance(param, dict):
                continue
            entry = _parameter(param)
            name, where = entry.get("name"), entry.get("in")
            if isinstance(name, str) and isinstance(where, str):
                merged[(name, where)] = entry
            else:
                unnamed.append(entry)
    params = [*merged.values(), *unnamed]
    body = resolver.resolve(operation.get("requestBody"))
    if isinstance(body, dict):
        params.extend(_body_parameters(body))
    return params


def _parameter(param: dict[str, Any]) -> dict[str, Any]:
    entry: dict[str, Any] = {"name": param.get("name"), "in": param.get("in")}
    entry["required"] = param.get("in") == "path" or param.get("required") is True
    description = param.get("description")
    if isinstance(description, str) and description.strip():
        entry["description"] = description.strip()
    schema = param.get("schema")
    if schema is None:
        schema = _content_schema(param.get("content"))
    if schema is not None:
        entry["schema"] = schema
    return entry


def _content_schema(content: Any) -> Any:
    """The schema of the JSON media type of a ``content`` map, else of the first one that has one."""
    if not isinstance(content, dict):
        return None
    media = [(key, value) for key, value in content.items() if isinstance(value, dict)]
    media.sort(key=lambda kv: 0 if kv[0] == "application/json" else 1 if "json" in kv[0] else 2)
    for _, value in media:
        if "schema" in value:
            return value["schema"]
    return None


def _object_properties(schema: Any) -> tuple[dict[str, Any], list[str]] | None:
    """Properties and required names of an object schema (``allOf`` parts merged), else None."""
    if not isinstance(schema, dict):
        return None
    properties: dict[str, Any] = {}
    required: list[str] = []
    own = schema.get("properties")
    if isinstance(own, dict):
        properties.update(own)
    if isinstance(schema.get("required"), list):
        required.extend(r for r in schema["required"] if isinstance(r, str))
    for part in schema.get("allOf") or []:
        merged = _object_properties(part)
        if merged is not None:
            properties.update(merged[0])
            required.extend(merged[1])
    if not properties:
        return None
    return properties, required


def _body_parameters(body: dict[str, Any]) -> list[dict[str, Any]]:
    schema = _content_schema(body.get("content"))
    description = body.get("description")
    found = _object_properties(schema)
    if found is None:
        entry: dict[str, Any] = {"name": "body", "in": "body", "required": body.get("required") is True}
        if isinstance(description, str) and description.strip():
            entry["description"] = description.strip()
        if schema is not None:
            entry["schema"] = schema
        return [entry]
    properties, required = found
    params = []
    for name, prop in properties.items():
        entry = {"name": name, "in": "body", "required": name in required}
        if isinstance(prop, dict):
            text = prop.get("description")
            if isinstance(text, str) and text.strip():
                entry["description"] = text.strip()
            entry["schema"] = {key: value for key, value in prop.items() if key != "description"}
        params.append(entry)
    return params


def _response(response: Any) -> Any:
    if not isinstance(response, dict):
        return response
    entry: dict[str, Any] = {}
    description = response.get("description")
    if isinstance(description, str):
        entry["description"] = description.strip()
    schema = _content_schema(response.get("content"))
    if schema is not None:
        entry["schema"] = schema
    return entry
