"""Load, check and import the saved objects into OpenSearch Dashboards.

The file is the saved-objects export format of OpenSearch Dashboards 2.x (a Kibana 7.10 fork): one
JSON object a line with ``id``, ``type``, ``attributes``, ``references`` and ``migrationVersion``;
the nested documents (``visState``, ``uiStateJSON``, ``panelsJSON``, ``optionsJSON``,
``kibanaSavedObjectMeta.searchSourceJSON``) are JSON *strings*, and objects point at each other
through ``references`` (``indexRefName`` / ``panelRefName``), never by id inside those strings.

The import is ``POST {url}/api/saved_objects/_import?overwrite=true`` with the file as multipart
form field ``file`` and the ``osd-xsrf`` header; Dashboards answers ``{"success", "successCount",
"errors"}`` and reports per-object failures (missing references, conflicts) with HTTP 200.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from dataclasses import asdict, dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import httpx

from toolsift.errors import ClusterError, ConfigError

__all__ = [
    "DEFAULT_URL",
    "ImportSummary",
    "check_saved_objects",
    "import_saved_objects",
    "load_saved_objects",
    "read_saved_objects_file",
    "validate_saved_objects",
]

DEFAULT_URL = "http://localhost:5601"
_RESOURCE = "saved_objects.ndjson"
_RETRY_PAUSE_S = 2.0

#: Attributes each supported type must carry (the ones Dashboards' own exports always have).
REQUIRED_ATTRIBUTES: dict[str, tuple[str, ...]] = {
    "index-pattern": ("title",),
    "visualization": ("title", "visState", "uiStateJSON", "description", "version", "kibanaSavedObjectMeta"),
    "search": ("title", "columns", "sort", "kibanaSavedObjectMeta"),
    "dashboard": ("title", "panelsJSON", "optionsJSON", "timeRestore", "kibanaSavedObjectMeta"),
}
#: Attributes that hold a JSON document as a string.
JSON_STRING_ATTRIBUTES = ("fields", "visState", "uiStateJSON", "panelsJSON", "optionsJSON")


@dataclass(frozen=True)
class ImportSummary:
    """What one import sent and what Dashboards answered."""

    url: str
    source: str
    success_count: int
    overwrite: bool
    objects: list[tuple[str, str, str]] = field(default_factory=list)  # (type, id, title) as sent

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "objects": [{"type": t, "id": i, "title": title} for t, i, title in self.objects]}


def read_saved_objects_file(file: Path | None = None) -> tuple[str, str]:
    """``(source name, text)`` of ``file``, or of the bundled ``saved_objects.ndjson``."""
    if file is None:
        resource = resources.files("toolsift.dashboards").joinpath(_RESOURCE)
        return f"toolsift.dashboards/{_RESOURCE}", resource.read_text(encoding="utf-8")
    try:
        return str(file), Path(file).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read the saved objects file {file}: {exc}") from exc


def load_saved_objects(file: Path | None = None) -> list[dict[str, Any]]:
    """The saved objects of ``file`` (default: the bundled ones), one dict per non-empty line."""
    source, text = read_saved_objects_file(file)
    return _parse(source, text)


def check_saved_objects(file: Path | None = None) -> tuple[str, list[dict[str, Any]]]:
    """``(source name, objects)`` of ``file`` (default: the bundled ones) once they pass
    :func:`validate_saved_objects`; :class:`ConfigError` listing every problem otherwise."""
    source, _, objects = _checked(file)
    return source, objects


def _checked(file: Path | None) -> tuple[str, str, list[dict[str, Any]]]:
    source, text = read_saved_objects_file(file)
    objects = _parse(source, text)
    problems = validate_saved_objects(objects)
    if problems:
        raise ConfigError(f"{source}: not a valid saved-objects file:\n" + "\n".join(f"  - {p}" for p in problems))
    return source, text, objects


def _parse(source: str, text: str) -> list[dict[str, Any]]:
    objects: list[dict[str, Any]] = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ConfigError(f"{source} line {number}: not JSON ({exc.msg})") from exc
        if not isinstance(obj, dict):
            raise ConfigError(f"{source} line {number}: a saved object must be a JSON object")
        objects.append(obj)
    if not objects:
        raise ConfigError(f"{source}: no saved objects")
    return objects


def validate_saved_objects(objects: list[dict[str, Any]]) -> list[str]:
    """Every format problem of ``objects`` (empty when the file is importable as far as can be told
    offline): required keys and attributes per type, the JSON-string attributes, every reference
    resolving to an object of the file, every ``indexRefName`` and ``panelRefName`` to a reference."""
    problems: list[str] = []
    known = Counter((o.get("type"), o.get("id")) for o in objects)
    problems += [f"{t}:{i}: defined {n} times" for (t, i), n in known.items() if n > 1]
    for obj in objects:
        problems += [f"{_name(obj)}: {p}" for p in _object_problems(obj, set(known))]
    return problems


def _name(obj: dict[str, Any]) -> str:
    return f"{obj.get('type', '?')}:{obj.get('id', '?')}"


def _object_problems(obj: dict[str, Any], known: set[tuple[Any, Any]]) -> list[str]:
    kind, attributes, references = obj.get("type"), obj.get("attributes"), obj.get("references")
    if kind not in REQUIRED_ATTRIBUTES:
        return [f"unsupported type {kind!r} (expected one of {sorted(REQUIRED_ATTRIBUTES)})"]
    if not isinstance(obj.get("id"), str) or not obj["id"]:
        return ["no id"]
    if not isinstance(attributes, dict):
        return ["no attributes object"]
    if not isinstance(references, list):
        return ["no references list"]
    problems = [f"attribute {name!r} missing" for name in REQUIRED_ATTRIBUTES[kind] if name not in attributes]
    migration = obj.get("migrationVersion")
    if not isinstance(migration, dict) or kind not in migration:
        problems.append(f"migrationVersion lacks {kind!r}")
    documents: dict[str, Any] = {}
    for name in JSON_STRING_ATTRIBUTES:
        if name in attributes:
            documents[name] = _json_string(attributes[name], name, problems)
    meta = attributes.get("kibanaSavedObjectMeta")
    if meta is not None:
        if not isinstance(meta, dict) or "searchSourceJSON" not in meta:
            problems.append("kibanaSavedObjectMeta lacks searchSourceJSON")
        else:
            documents["searchSourceJSON"] = _json_string(meta["searchSourceJSON"], "searchSourceJSON", problems)
    ref_names: set[str] = set()
    for ref in references:
        if not isinstance(ref, dict) or not all(isinstance(ref.get(k), str) for k in ("name", "type", "id")):
            problems.append(f"malformed reference {ref!r}")
            continue
        ref_names.add(ref["name"])
        if (ref["type"], ref["id"]) not in known:
            problems.append(f"reference {ref['name']!r} points at {ref['type']}:{ref['id']}, which the file lacks")
    source = documents.get("searchSourceJSON")
    if isinstance(source, dict):
        if "index" in source:
            problems.append("searchSourceJSON names its index by id; use indexRefName and a reference")
        if "indexRefName" in source and source["indexRefName"] not in ref_names:
            problems.append(f"indexRefName {source['indexRefName']!r} has no reference")
    if kind == "visualization":
        problems += _vis_problems(documents.get("visState"), attributes.get("title"))
    if kind == "dashboard":
        problems += _panel_problems(documents.get("panelsJSON"), ref_names)
    return problems


def _json_string(value: Any, name: str, problems: list[str]) -> Any:
    if not isinstance(value, str):
        problems.append(f"{name} must be a JSON string, not {type(value).__name__}")
        return None
    try:
        return json.loads(value)
    except json.JSONDecodeError as exc:
        problems.append(f"{name} is not valid JSON ({exc.msg})")
        return None


def _vis_problems(vis_state: Any, title: Any) -> list[str]:
    if not isinstance(vis_state, dict):
        return [] if vis_state is None else ["visState is not an object"]
    problems = [f"visState lacks {key!r}" for key in ("type", "aggs", "params") if key not in vis_state]
    if vis_state.get("title") != title:
        problems.append("visState title differs from the title attribute")
    for agg in vis_state.get("aggs") or []:
        if not isinstance(agg, dict) or not all(k in agg for k in ("id", "type", "schema", "params")):
            problems.append(f"malformed aggregation {agg!r}")
    return problems


def _panel_problems(panels: Any, ref_names: set[str]) -> list[str]:
    if not isinstance(panels, list):
        return [] if panels is None else ["panelsJSON is not a list"]
    problems: list[str] = []
    for number, panel in enumerate(panels):
        if not isinstance(panel, dict):
            problems.append(f"panel {number} is not an object")
            continue
        ref = panel.get("panelRefName")
        if ref not in ref_names:
            problems.append(f"panel {number}: panelRefName {ref!r} has no reference")
        grid = panel.get("gridData")
        if not isinstance(grid, dict) or not all(k in grid for k in ("x", "y", "w", "h", "i")):
            problems.append(f"panel {number}: gridData needs x, y, w, h and i")
    return problems


def import_saved_objects(
    url: str = DEFAULT_URL,
    *,
    file: Path | None = None,
    overwrite: bool = True,
    auth: tuple[str, str] | None = None,
    headers: dict[str, str] | None = None,
    timeout: float = 30.0,
    wait: float = 0.0,
    transport: httpx.BaseTransport | None = None,
) -> ImportSummary:
    """Import ``file`` (default: the bundled saved objects) into the Dashboards at ``url``.

    The file is checked offline first (:func:`validate_saved_objects`). ``wait`` > 0 keeps trying
    that many seconds while Dashboards is unreachable or still starting (HTTP 503). ``transport``
    is handed to :class:`httpx.Client` (tests pass an ``httpx.MockTransport``).

    Raises:
        ConfigError: the file is unreadable or not a valid saved-objects file.
        ClusterError: Dashboards is unreachable, answered with an HTTP error, or rejected objects
            (the message lists each with its reason).
    """
    source, text, objects = _checked(file)
    base = url.rstrip("/")
    endpoint = f"{base}/api/saved_objects/_import"
    deadline = time.monotonic() + wait
    with httpx.Client(timeout=timeout, auth=auth, transport=transport) as client:
        while True:
            try:
                response = client.post(
                    endpoint,
                    params={"overwrite": "true"} if overwrite else None,
                    headers={"osd-xsrf": "true", **(headers or {})},
                    files={"file": (Path(source).name, text.encode("utf-8"), "application/ndjson")},
                )
            except httpx.TransportError as exc:
                if time.monotonic() < deadline:
                    time.sleep(_RETRY_PAUSE_S)
                    continue
                raise ClusterError(f"OpenSearch Dashboards at {base} is unreachable: {exc}") from exc
            if response.status_code == 503 and time.monotonic() < deadline:
                time.sleep(_RETRY_PAUSE_S)
                continue
            break
    return _summary(response, base, source, overwrite, objects)


def _summary(response: httpx.Response, base: str, source: str, overwrite: bool, objects: list[dict[str, Any]]) -> ImportSummary:
    if response.status_code >= 400:
        raise ClusterError(
            f"OpenSearch Dashboards at {base} answered HTTP {response.status_code} to the saved-objects import: "
            f"{_error_text(response)}"
        )
    try:
        body = response.json()
    except ValueError as exc:
        raise ClusterError(f"{base} answered the saved-objects import with something that is not JSON; "
                           "is it OpenSearch Dashboards?") from exc
    if not isinstance(body, dict) or "success" not in body:
        raise ClusterError(f"{base} answered the saved-objects import without a 'success' field: {str(body)[:300]}")
    count = int(body.get("successCount", 0))
    if not body["success"]:
        errors = body.get("errors") or []
        lines = "\n".join(f"  - {_describe(e)}" for e in errors)
        raise ClusterError(
            f"OpenSearch Dashboards at {base} rejected {len(errors)} of {len(objects)} saved object(s) from "
            f"{source} ({count} imported):\n{lines}"
        )
    sent = [(str(o["type"]), str(o["id"]), str(o["attributes"].get("title", ""))) for o in objects]
    return ImportSummary(url=base, source=source, success_count=count, overwrite=overwrite, objects=sent)


def _error_text(response: httpx.Response) -> str:
    try:
        body = response.json()
    except ValueError:
        return response.text[:300] or response.reason_phrase
    if isinstance(body, dict) and "message" in body:
        return str(body["message"])
    return json.dumps(body)[:300]


def _describe(error: Any) -> str:
    """One rejected object of an import answer, e.g. ``visualization:x "T": missing_references (index-pattern:p)``."""
    if not isinstance(error, dict):
        return str(error)
    what = f"{error.get('type', '?')}:{error.get('id', '?')}"
    title = error.get("title") or (error.get("meta") or {}).get("title")
    if title:
        what += f" {title!r}"
    detail = error.get("error") or {}
    reason = str(detail.get("type", "unknown")) if isinstance(detail, dict) else str(detail)
    if isinstance(detail, dict):
        if detail.get("references"):
            reason += " (" + ", ".join(f"{r.get('type')}:{r.get('id')}" for r in detail["references"]) + ")"
        if detail.get("message"):
            reason += f": {detail['message']}"
        if detail.get("type") == "conflict":
            reason += " (the object exists; import with overwrite)"
    return f"{what}: {reason}"
