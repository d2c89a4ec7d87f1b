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

from toolsift.errors import CatalogError
from toolsift.ingest.loaders.base import JsonCatalogLoader
from toolsift.ingest.loaders.files import JsonPeek, read_json, read_text, type_name
from toolsift.ingest.loaders.naming import agent_id_for, nonblank, slugify
from toolsift.ingest.loaders.openapi_refs import RefResolver
from toolsift.ingest.nesting import DEFAULT_MAX_NESTING_DEPTH
from toolsift.ingest.raw_records import LoadedRecord, RawAgent, RawTool, RejectedRecord

__all__ = ["OpenApiLoader", "LOADER", "NAME", "detect", "load"]

_METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")
_YAML_SUFFIXES = (".yaml", ".yml")
_YAML_MARKER = re.compile(r"""^["']?(openapi|swagger)["']?\s*:""", re.MULTILINE)


class OpenApiLoader(JsonCatalogLoader):
    """The API's :class:`RawAgent`, then one :class:`RawTool` per operation.

    Raises (while loading):
        CatalogError: the file is missing, not valid JSON/YAML, not an OpenAPI 3 object, or YAML
            without PyYAML installed.
    """

    NAME = "openapi"
    SUFFIXES = (".json", *_YAML_SUFFIXES)

    def sniff(self, path: Path) -> bool:
        """A JSON object with an ``openapi``/``swagger`` key, or YAML that starts one."""
        if path.suffix.lower() not in _YAML_SUFFIXES:
            return super().sniff(path)
        try:
            with open(path, encoding="utf-8-sig") as handle:
                head = handle.read(64 * 1024)
        except (OSError, UnicodeDecodeError):
            return False
        return _YAML_MARKER.search(head) is not None

    def recognise(self, peek: JsonPeek) -> bool:
        return peek.top == "object" and ("openapi" in peek.first or "swagger" in peek.first)

    def records(self, path: Path, source: str) -> Iterator[LoadedRecord]:
        spec = _read_spec(path)
        resolver = RefResolver(spec)
        paths = spec.get("paths")
        if paths is not None and not isinstance(paths, dict):
            raise CatalogError(
                f"catalog file {str(path)!r}: 'paths' must be an object, got {type_name(paths)}"
            )
        if not paths:
            raise CatalogError(
                f"catalog file {str(path)!r}: the OpenAPI spec has no paths, so no operation to index"
            )
        raw_info = spec.get("info")
        info: dict[str, Any] = raw_info if isinstance(raw_info, dict) else {}
        title = nonblank(info.get("title"))
        agent_id: str | None = None
        id_prefix = ""
        if title is not None:
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
        operations = 0
        for path_key, raw_item in paths.items():
            # Only the item itself is dereferenced: its parts are resolved one by one below, and
            # resolving twice would expand the cycle markers of the first pass.
            item = resolver.deref(raw_item)
            if not isinstance(item, dict):
                yield RejectedRecord(
                    source, f"paths.{path_key}", f"a path item must be an object, got {type_name(item)}"
                )
                continue
            for record in _operations(source, resolver, str(path_key), item, id_prefix, agent_id):
                operations += 1
                yield record
        if not operations:
            raise CatalogError(
                f"catalog file {str(path)!r}: the OpenAPI spec's paths have no operations "
                f"({', '.join(_METHODS)}), so nothing to index"
            )


def _operations(
    source: str,
    resolver: RefResolver,
    path_key: str,
    item: dict[str, Any],
    id_prefix: str,
    agent_id: str | None,
) -> Iterator[LoadedRecord]:
    """One tool per operation of a path item, or why it is rejected."""
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
        documentation = _operation_doc(resolver, path_key, method, item, operation)
        operation_id = nonblank(operation.get("operationId"))
        if operation_id is not None:
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
        return _jsonable(yaml.safe_load(text), path, _YAML_NODE_BUDGET + 10 * len(text))
    except RecursionError:
        raise CatalogError(f"catalog file {str(path)!r} is too deep to parse: YAML nested too deep for the parser") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1} column {mark.column + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc)
        raise CatalogError(f"catalog file {str(path)!r} is not valid YAML: {problem}{where}") from exc


#: Values a YAML spec may expand to beyond one per character of its text: aliases (``*name``) repeat
#: what they point to, so a kilobyte can stand for billions of values ("billion laughs").
_YAML_NODE_BUDGET = 100_000


def _jsonable(value: Any, path: Path, budget: int) -> Any:
    """YAML's extra scalar types as JSON ones: keys as strings (``200:``), dates as ISO text.

    Copied without recursion, alias by alias (each repeat is a copy, as JSON would spell it out).

    Raises:
        CatalogError: the copy grows past ``budget`` values.
    """
    out: list[Any] = [None]
    # (value, the container its copy goes into, the key or index there)
    stack: list[tuple[Any, Any, Any]] = [(value, out, 0)]
    while stack:
        item, parent, key = stack.pop()
        budget -= 1
        if budget < 0:
            raise CatalogError(f"catalog file {str(path)!r}: the YAML expands to too many values "
                               "(its aliases repeat their anchors' values too often)")
        copy: Any
        if isinstance(item, dict):
            copy = {}
            stack.extend((inner, copy, str(name)) for name, inner in reversed(list(item.items())))
        elif isinstance(item, list):
            copy = [None] * len(item)
            stack.extend((inner, copy, index) for index, inner in enumerate(item))
        elif isinstance(item, (datetime.date, datetime.datetime)):
            copy = item.isoformat()
        elif item is None or isinstance(item, (str, int, float, bool)):
            copy = item
        else:
            copy = str(item)
        parent[key] = copy
    return out[0]


def _operation_doc(
    resolver: RefResolver, path_key: str, method: str, item: dict[str, Any], operation: dict[str, Any]
) -> dict[str, Any]:
    operation_id = nonblank(operation.get("operationId"))
    name = operation_id.strip() if operation_id is not None else f"{method.upper()} {path_key}"
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
    responses = resolver.resolve(operation.get("responses"), level=2)  # documentation → responses
    if isinstance(responses, dict):
        doc["responses"] = {
            str(code): _response(response) for code, response in responses.items()
        }
    if operation.get("deprecated") is True:
        doc["deprecated"] = True
    return doc


def _parameters(
    resolver: RefResolver, item: dict[str, Any], operation: dict[str, Any]
) -> list[dict[str, Any]]:
    merged: dict[tuple[str, str], dict[str, Any]] = {}
    unnamed: list[dict[str, Any]] = []
    for level in (item.get("parameters"), operation.get("parameters")):
        if not isinstance(level, list):
            continue
        for raw in level:
            param = resolver.resolve(raw, level=3)  # documentation → parameters → this parameter
            if not isinstance(param, dict):
                continue
            if isinstance(param.get("$ref"), str) and "name" not in param:
                # A reference that did not resolve stays one: normalisation names it in its note.
                unnamed.append({"$ref": param["$ref"]})
                continue
            entry = _parameter(param)
            name, where = entry.get("name"), entry.get("in")
            if isinstance(name, str) and isinstance(where, str):
                merged[(name, where)] = entry
            else:
                unnamed.append(entry)
    params = [*merged.values(), *unnamed]
    body = resolver.resolve(operation.get("requestBody"))  # its schema's properties move up, never down
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


def _object_properties(schema: Any, depth: int = 0) -> tuple[dict[str, Any], list[str]] | None:
    """Properties and required names of an object schema (``allOf`` parts merged, as deep as a
    record may nest), else None."""
    if not isinstance(schema, dict) or depth > DEFAULT_MAX_NESTING_DEPTH:
        return None
    properties: dict[str, Any] = {}
    required: list[str] = []
    own = schema.get("properties")
    if isinstance(own, dict):
        properties.update(own)
    if isinstance(schema.get("required"), list):
        required.extend(r for r in schema["required"] if isinstance(r, str))
    for part in schema.get("allOf") or []:
        merged = _object_properties(part, depth + 1)
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


LOADER = OpenApiLoader()
NAME = LOADER.NAME
detect = LOADER.detect
load = LOADER.load
