"""Rule-based standardisation: a catalog's raw documentation into the MFTR fields of a :class:`ToolDoc`.

Pure functions, deterministic, and nothing is invented: every value comes from a field the
documentation has (under one of several customary names), and a field it lacks stays empty. A record
that cannot be used raises :class:`~toolsift.errors.CatalogRecordError` naming its source, position,
id and the field to blame.

How each field is found (the first name present wins):

* **name** — ``name``, ``api_name``, ``tool_name``, ``function_name``, ``func_name``,
  ``operationId``, else the function of a ``def name(...)`` signature in ``func_description``.
  OpenAI's ``{"function": {...}}`` wrapper is looked into; a BEIR record's ToolBench ``text``
  (``category_name:..., tool_name:..., api_name:..., ...``) is parsed into those fields first, and a
  plain BEIR record uses ``title`` as the name and ``text`` as the description.
* **description** — ``description``, ``api_description``, ``func_description``, ``summary``,
  ``desc``, ``doc``, ``docstring``. Surrounding whitespace and one pair of surrounding quotes are
  removed; a text without a letter or digit (``"."``) counts as no description.
* **parameters** — ``parameters``, ``api_arguments``, ``inputSchema``, ``input_schema``,
  ``arguments``, ``args``, ``properties``, ``required_params`` + ``optional_params``,
  ``input_parameters``; failing those, a Python signature (``def f(a, b=1)`` in ``func_description``
  or ``signature``). Accepted shapes: a list of ``{name, type | schema.type, description, required,
  optional, default}`` (or of bare names), an object ``name -> spec``, a JSON schema (``properties``
  + ``required``), JSON text of one of those, or a parenthesised signature ``"(a: str, b=1)"``.
* **response** — ``response``, ``responses``, ``returns``, ``return``, ``output``,
  ``output_parameters``, ``return_schema``, ``expected_output``, ``outputSchema``, ``output_schema``;
  text is kept, objects and lists become compact text (``name (type): description; ...``).
* **examples** — only an explicit ``examples`` / ``example`` / ``usage`` field: strings, or objects'
  ``user_intent`` / ``query`` / ``text``; anything else there is ignored.
* **Tool-DE profile** — ``function``, ``when_to_use``, ``limitations`` only from fields of those
  names; ``tags`` from ``tags``, ``category``, ``categories``, ``category_name``.

**Which parameters are required.** In a JSON schema a property is required only when the schema's
``required`` list names it (or the property itself says ``"required": true``): that is JSON Schema's
own rule, and the one MCP and OpenAI schemas follow, so a schema without a ``required`` list declares
every property optional. In every other shape a parameter is required unless the documentation says
otherwise: ``required: false``, ``optional: true``, a non-null ``default``, being listed in
``optional_params``, having a default in a signature, or a description that says so (starts with
"optional" / "(optional)", contains "(optional)", or "this is an optional parameter").

**Standardised documents** (:attr:`RawTool.standardized`, MFTR's ``augmented``): each of its
``description``, ``parameters``, ``response``, ``examples``, ``function``, ``tags``, ``when_to_use``
and ``limitations`` replaces the rule-based value when present; the name, the Full-Doc text and
``raw`` still come from the original documentation.

**Fields still empty after that** are filled by :mod:`toolsift.ingest.derive`'s rules from the
documentation's own words (a description from the name, method, path, tags, parameters and response;
the name as one user intent), and the document lists them in ``derived``.
"""

from __future__ import annotations

import ast
import json
import re
import unicodedata
from collections.abc import Mapping, Sequence
from typing import Any

from toolsift.errors import CatalogRecordError
from toolsift.ingest.derive import derive_fields
from toolsift.ingest.loaders.files import type_name
from toolsift.ingest.records import AGENT_ID_PREFIX, RawAgent, RawTool
from toolsift.mappings.model import AgentDoc, ParameterDoc, ToolDoc

__all__ = ["normalise_tool", "normalise_agent", "full_doc_text", "tool_overview", "agent_overview"]

DEFAULT_MAX_FIELD_CHARS = 100_000
# OpenSearch rejects a document _id longer than this many bytes.
MAX_ID_BYTES = 512

_NAME_KEYS = ("name", "api_name", "tool_name", "function_name", "func_name", "operationId")
_DESCRIPTION_KEYS = (
    "description",
    "api_description",
    "func_description",
    "summary",
    "desc",
    "doc",
    "docstring",
)
_PARAMETER_KEYS_BEFORE_PROPERTIES = (
    "parameters",
    "api_arguments",
    "inputSchema",
    "input_schema",
    "arguments",
    "args",
)
_SIGNATURE_KEYS = ("func_description", "signature")
_RESPONSE_KEYS = (
    "response",
    "responses",
    "returns",
    "return",
    "output",
    "output_parameters",
    "return_schema",
    "expected_output",
    "outputSchema",
    "output_schema",
)
_EXAMPLE_KEYS = ("examples", "example", "usage")
_INTENT_KEYS = ("user_intent", "query", "text")
_TAG_KEYS = ("tags", "category", "categories", "category_name")
_PROFILE_TEXT_KEYS = ("function", "when_to_use", "limitations")

_TOOLBENCH_KEYS = (
    "category_name",
    "tool_name",
    "api_name",
    "api_description",
    "required_params",
    "optional_params",
    "return_schema",
)
_TOOLBENCH_FIELD = re.compile(r"(?:^|, )(" + "|".join(_TOOLBENCH_KEYS) + r"):[ ]?")
_DEF_NAME = re.compile(r"\bdef\s+([A-Za-z_]\w*)\s*\(")
_OPTIONAL_TEXT = re.compile(
    r"^\s*[(\[]?optional\b"
    r"|[(\[]optional[)\]]"
    r"|\bthis (?:parameter |argument |field |value )?is (?:an )?optional\b",
    re.IGNORECASE,
)
_QUOTE_PAIRS = {'"': '"', "'": "'", "\u201c": "\u201d", "\u2018": "\u2019"}
_SCHEMA_HINT_KEYS = frozenset(
    {"type", "description", "schema", "properties", "items", "required", "title", "default",
     "enum", "format", "anyOf", "oneOf", "allOf", "additionalProperties", "nullable", "example",
     "examples", "$schema", "minimum", "maximum", "minLength", "maxLength", "pattern", "in"}
)
_TYPE_WORDS = frozenset(
    {"string", "str", "int", "integer", "number", "float", "double", "bool", "boolean", "array",
     "list", "object", "dict", "any", "null", "none", "tuple", "date", "datetime"}
)
_MAX_RENDER_DEPTH = 6


def full_doc_text(documentation: Mapping[str, Any]) -> str:
    """The Full-Doc baseline text of a tool or agent: its raw documentation serialised as JSON.

    Args:
        documentation: the documentation exactly as the catalog gave it.

    Returns:
        ``json.dumps(documentation)`` with Python's defaults (non-ASCII escaped as ``\\uXXXX``;
        values JSON cannot hold are written with ``str``). This is the serialisation the MFTR
        paper's Full-Doc rows were measured on: with it, BM25 Full-Doc reproduces the published
        NDCG@10 on APIBank and Toolink.

        A BEIR record (``{_id, title, text, metadata}``) is already flat text: its Full-Doc text
        is ``title`` and ``text`` as written. Wrapping it in JSON only adds the ``_id`` / ``metadata``
        keys and escaped quotes, which cost ToolLens' dense top-3 TRACC 0.016 (0.179 → 0.163).
    """
    if _is_beir_record(documentation):
        return "\n".join(str(documentation.get(k) or "") for k in ("title", "text")).strip()
    return json.dumps(documentation, default=str)


_BEIR_KEYS = frozenset({"_id", "title", "text", "metadata"})


def _is_beir_record(documentation: Mapping[str, Any]) -> bool:
    return "_id" in documentation and "text" in documentation and set(documentation) <= _BEIR_KEYS


_IDENTIFIER_JOINERS = re.compile(r"[_\-]+")


def _readable(name: str) -> str:
    """An identifier as words: ``get-weread_rank`` → ``get weread rank`` (what an embedding model reads best)."""
    return " ".join(_IDENTIFIER_JOINERS.sub(" ", name).split())


def tool_overview(name: str, description: str, parameter_names: Sequence[str]) -> str:
    """A tool in one line: ``"<name>: <description> Parameters: <a>, <b>"`` (identifiers as words).

    The joint tool+agent representation (Tool-to-Agent Retrieval §2 indexes tool names and
    descriptions; the parameter names say what the tool acts on — "path, content" for a
    ``write_file``). On LiveMCPBench, MiniLM on this text instead of the description alone lifts
    step-wise agent Recall@5 by about 0.09 (``docs/evaluation.md``).
    """
    text = f"{_readable(name)}: {description}".strip() if description else _readable(name)
    params = [_readable(p) for p in parameter_names if p.strip()]
    return f"{text} Parameters: {', '.join(params)}" if params else text


def agent_overview(name: str, description: str, tool_names: Sequence[str]) -> str:
    """An agent in one line: ``"<name>: <description> Tools: <t1>, <t2>"`` (identifiers as words).

    Its tools' names put what the agent can do into its own document: a server whose description is
    vague or in another language ("基于 MCP 协议的全网热点趋势…") still says "get weibo trending,
    get bbc news".
    """
    text = f"{name}: {description}".strip() if description else name
    tools = [_readable(t) for t in tool_names if t.strip()]
    return f"{text} Tools: {', '.join(tools)}" if tools else text


def normalise_tool(raw: RawTool, *, max_field_chars: int = DEFAULT_MAX_FIELD_CHARS) -> ToolDoc:
    """Standardise one raw tool into a :class:`ToolDoc`, by the rules in the module docstring.

    Args:
        raw: the tool as a loader yielded it.
        max_field_chars: the longest text accepted in any one field (``Settings.max_field_chars``).

    Returns:
        The tool document, with ``tool_id`` = ``raw.tool_id`` or, when that is None, the name.

    Raises:
        CatalogRecordError: no name; a field of the wrong type; a text field longer than
            ``max_field_chars``; an id that is empty, too long, has control characters, or starts
            with ``agent:``.
    """
    record = _Record(raw.source, raw.position, raw.tool_id)
    documentation = raw.documentation
    if not isinstance(documentation, Mapping):
        raise record.error("the documentation must be an object", "documentation")
    standard = raw.standardized
    if standard is not None and not isinstance(standard, Mapping):
        raise record.error("the standardised documentation must be an object", "standardized")
    view = _view(documentation)
    name = _name(view, record)
    if record.record_id is None:
        record.record_id = name
    tool_id = raw.tool_id if raw.tool_id is not None else name
    _check_id(tool_id, record, "id")
    if tool_id.startswith(AGENT_ID_PREFIX):
        raise record.error(f"a tool id may not start with {AGENT_ID_PREFIX!r}", "id")
    if raw.agent_id is not None:
        _check_agent_id(raw.agent_id, record, "agent_id")

    std: Mapping[str, Any] = standard or {}
    description = _std_text(std, "description", record) or _description(view, record)
    if std.get("parameters") is not None:
        parameters = _parse_parameters(std["parameters"], record, "standardized.parameters")
    else:
        parameters = _parameters(view, record)
    if std.get("response") is not None:
        response = _render_field(std["response"], record, "standardized.response")
    else:
        response = _response(view, record)
    examples = _examples(std) if std.get("examples") is not None else _examples(view)
    profile = {
        key: _std_text(std, key, record) or _profile_text(view, key, record)
        for key in _PROFILE_TEXT_KEYS
    }
    tags = _tags(std) or _tags(view)
    derived = derive_fields(
        view, name=name, description=description, parameters=parameters, response=response,
        examples=examples, tags=tags,
    )
    # The overview already is the name and parameters a derived description would repeat.
    overview = tool_overview(name, description, [p.name for p in parameters])
    description = description or derived.description
    examples = examples or derived.examples

    doc = ToolDoc(
        tool_id=tool_id,
        name=name,
        source=raw.source,
        agent_id=raw.agent_id,
        description=description,
        parameters=parameters,
        response=response,
        examples=examples,
        function=profile["function"],
        tags=tags,
        when_to_use=profile["when_to_use"],
        limitations=profile["limitations"],
        derived=derived.fields,
        # Each part was checked against the limit; together they are cut to it, not rejected.
        overview=overview[:max_field_chars],
        full_doc=full_doc_text(documentation),
        raw=dict(documentation),
    )
    _check_tool_lengths(doc, record, max_field_chars)
    return doc


def normalise_agent(raw: RawAgent, *, max_field_chars: int = DEFAULT_MAX_FIELD_CHARS) -> AgentDoc:
    """Validate one raw agent and turn it into an :class:`AgentDoc`.

    Args:
        raw: the agent as a loader yielded it.
        max_field_chars: the longest text accepted in any one field.

    Returns:
        The agent document; ``full_doc`` is :func:`full_doc_text` of its documentation.

    Raises:
        CatalogRecordError: an empty name, a field of the wrong type, a text longer than
            ``max_field_chars``, or an id that is not ``agent:`` followed by a usable slug.
    """
    record = _Record(raw.source, raw.position, raw.agent_id or None)
    _check_agent_id(raw.agent_id, record, "agent_id")
    name: Any = raw.name
    if not isinstance(name, str):
        raise record.error(f"must be a string, got {type_name(name)}", "name")
    if not name.strip():
        raise record.error("the agent has no name", "name")
    description: Any = raw.description
    if not isinstance(description, str):
        raise record.error(f"must be a string, got {type_name(description)}", "description")
    if not isinstance(raw.documentation, Mapping):
        raise record.error("the documentation must be an object", "documentation")
    tags = tuple(dict.fromkeys(t.strip() for t in raw.tags if isinstance(t, str) and t.strip()))
    tool_names = tuple(t for t in raw.tool_names if isinstance(t, str))
    doc = AgentDoc(
        agent_id=raw.agent_id,
        name=name.strip(),
        description=_clean_text(description),
        source=raw.source,
        tags=tags,
        overview=agent_overview(name.strip(), _clean_text(description), tool_names)[:max_field_chars],
        full_doc=full_doc_text(raw.documentation),
        raw=dict(raw.documentation),
    )
    checks: list[tuple[str, str]] = [("name", doc.name), ("description", doc.description)]
    checks += [("tags", tag) for tag in doc.tags]
    checks.append(("full_doc", doc.full_doc))
    for field, text in checks:
        _check_length(text, field, record, max_field_chars)
    return doc


class _Record:
    """Where a record came from, to build its errors."""

    def __init__(self, source: str, position: str, record_id: str | None) -> None:
        self.source = source
        self.position = position
        self.record_id = record_id

    def error(self, reason: str, field: str | None = None) -> CatalogRecordError:
        return CatalogRecordError(
            self.source, self.position, reason, record_id=self.record_id, field=field
        )


# --- ids and lengths -------------------------------------------------------------------------------


def _check_id(value: Any, record: _Record, field: str) -> None:
    if not isinstance(value, str):
        raise record.error(f"the id must be a string, got {type_name(value)}", field)
    if not value.strip():
        raise record.error("the id is empty", field)
    size = len(value.encode("utf-8"))
    if size > MAX_ID_BYTES:
        raise record.error(f"the id is {size} bytes long; at most {MAX_ID_BYTES} are allowed", field)
    if any(unicodedata.category(char) == "Cc" for char in value):
        raise record.error("the id contains control characters", field)


def _check_agent_id(value: Any, record: _Record, field: str) -> None:
    _check_id(value, record, field)
    if not value.startswith(AGENT_ID_PREFIX) or not value[len(AGENT_ID_PREFIX) :].strip():
        raise record.error(
            f"an agent id must be {AGENT_ID_PREFIX!r} followed by a slug of the name, got {value!r}",
            field,
        )


def _check_length(text: str, field: str, record: _Record, limit: int) -> None:
    if len(text) > limit:
        raise record.error(f"{len(text):,} characters long; at most {limit:,} are allowed", field)


def _check_tool_lengths(doc: ToolDoc, record: _Record, limit: int) -> None:
    checks: list[tuple[str, str]] = [("name", doc.name), ("description", doc.description)]
    for param in doc.parameters:
        checks += [
            ("parameters.name", param.name),
            (f"parameters.{param.name[:80]}.type", param.type),
            (f"parameters.{param.name[:80]}.description", param.description),
        ]
    checks.append(("response", doc.response))
    checks += [("examples", example) for example in doc.examples]
    checks += [
        ("function", doc.function),
        ("when_to_use", doc.when_to_use),
        ("limitations", doc.limitations),
    ]
    checks += [("tags", tag) for tag in doc.tags]
    checks.append(("full_doc", doc.full_doc))
    for field, text in checks:
        _check_length(text, field, record, limit)


# --- the documentation as one flat view ------------------------------------------------------------


def _view(documentation: Mapping[str, Any]) -> dict[str, Any]:
    """The documentation with OpenAI's function wrapper opened and a BEIR ``text`` parsed."""
    view = dict(documentation)
    function = view.get("function")
    if isinstance(function, Mapping):
        del view["function"]
        view.update(function)
    if "_id" in view and isinstance(view.get("text"), str) and not _has_any(view, _NAME_KEYS):
        parsed = _toolbench_fields(view["text"])
        if parsed:
            del view["text"]
            view.update(parsed)
        else:
            title = view.pop("title", None)
            text = view.pop("text")
            if isinstance(title, str) and title.strip():
                view["name"] = title
            view.setdefault("description", text)
    return view


def _has_any(view: Mapping[str, Any], keys: tuple[str, ...]) -> bool:
    return any(view.get(key) is not None for key in keys)


def _toolbench_fields(text: str) -> dict[str, Any]:
    """``category_name:X, tool_name:Y, ...`` as a dict; the params and schema parsed as JSON."""
    accepted: list[tuple[str, int, int]] = []
    last = -1
    for match in _TOOLBENCH_FIELD.finditer(text):
        order = _TOOLBENCH_KEYS.index(match.group(1))
        # Keys come in a fixed order; a key name inside a description is not a new field.
        if order > last:
            accepted.append((match.group(1), match.start(), match.end()))
            last = order
    if not accepted or accepted[0][1] != 0:
        return {}
    fields: dict[str, Any] = {}
    for index, (key, _, value_start) in enumerate(accepted):
        value_end = accepted[index + 1][1] if index + 1 < len(accepted) else len(text)
        value = text[value_start:value_end].strip()
        if key in ("required_params", "optional_params", "return_schema"):
            try:
                fields[key] = json.loads(value)
                continue
            except json.JSONDecodeError:
                pass
        fields[key] = value
    return fields


# --- name, description, profile ---------------------------------------------------------------------


def _name(view: Mapping[str, Any], record: _Record) -> str:
    for key in _NAME_KEYS:
        value = view.get(key)
        if value is None:
            continue
        if not isinstance(value, str):
            raise record.error(f"the name must be a string, got {type_name(value)}", key)
        if value.strip():
            return value.strip()
    for key in _SIGNATURE_KEYS:
        value = view.get(key)
        match = _DEF_NAME.search(value) if isinstance(value, str) else None
        if match is not None:
            return match.group(1)
    raise record.error(
        "the tool has no name (looked for: " + ", ".join(_NAME_KEYS) + ", function.name, "
        "and a 'def name(...)' signature)",
        "name",
    )


def _clean_text(text: str) -> str:
    text = text.strip()
    close = _QUOTE_PAIRS.get(text[:1])
    if close is not None and len(text) >= 2 and text.endswith(close):
        inner = text[1:-1]
        if text[0] not in inner and close not in inner:
            text = inner.strip()
    if not any(char.isalnum() for char in text):
        return ""
    return text


def _description(view: Mapping[str, Any], record: _Record) -> str:
    for key in _DESCRIPTION_KEYS:
        value = view.get(key)
        if value is None:
            continue
        if not isinstance(value, str):
            raise record.error(f"the description must be a string, got {type_name(value)}", key)
        text = _clean_text(value)
        if text:
            return text
    return ""


def _std_text(std: Mapping[str, Any], key: str, record: _Record) -> str:
    value = std.get(key)
    if value is None:
        return ""
    return _text_value(value, record, f"standardized.{key}")


def _profile_text(view: Mapping[str, Any], key: str, record: _Record) -> str:
    value = view.get(key)
    if value is None:
        return ""
    return _text_value(value, record, key)


def _text_value(value: Any, record: _Record, field: str) -> str:
    """Text, or a list of texts joined with ``; ``."""
    if isinstance(value, str):
        return _clean_text(value)
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return "; ".join(text for text in (_clean_text(item) for item in value) if text)
    raise record.error(f"must be text or a list of texts, got {type_name(value)}", field)


def _tags(view: Mapping[str, Any]) -> tuple[str, ...]:
    tags: list[str] = []
    for key in _TAG_KEYS:
        value = view.get(key)
        values = value if isinstance(value, list) else [value]
        tags.extend(item.strip() for item in values if isinstance(item, str) and item.strip())
    return tuple(dict.fromkeys(tags))


def _examples(view: Mapping[str, Any]) -> tuple[str, ...]:
    value = next((view[key] for key in _EXAMPLE_KEYS if view.get(key) is not None), None)
    items = value if isinstance(value, list) else [value]
    texts: list[str] = []
    for item in items:
        if isinstance(item, Mapping):
            item = next((item[key] for key in _INTENT_KEYS if isinstance(item.get(key), str)), None)
        if isinstance(item, str) and item.strip():
            texts.append(item.strip())
    return tuple(dict.fromkeys(texts))


# --- parameters -------------------------------------------------------------------------------------


def _parameters(view: Mapping[str, Any], record: _Record) -> tuple[ParameterDoc, ...]:
    for key in _PARAMETER_KEYS_BEFORE_PROPERTIES:
        if view.get(key) is not None:
            return _parse_parameters(view[key], record, key)
    if isinstance(view.get("properties"), Mapping):
        return _schema_parameters(view, record, "properties")
    if view.get("required_params") is not None or view.get("optional_params") is not None:
        required = _parse_parameters(view.get("required_params"), record, "required_params")
        optional = _parse_parameters(
            view.get("optional_params"), record, "optional_params", optional=True
        )
        return required + optional
    if view.get("input_parameters") is not None:
        return _parse_parameters(view["input_parameters"], record, "input_parameters")
    for key in _SIGNATURE_KEYS:
        value = view.get(key)
        if isinstance(value, str) and "def " in value:
            found = _signature_parameters(value)
            if found is not None:
                return found
    return ()


def _parse_parameters(
    value: Any, record: _Record, field: str, *, optional: bool = False
) -> tuple[ParameterDoc, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        return _text_parameters(value, record, field, optional=optional)
    if isinstance(value, list):
        params = []
        for index, item in enumerate(value):
            if isinstance(item, str):
                item = {"name": item}
            if not isinstance(item, Mapping):
                raise record.error(
                    f"parameter {index} must be an object or a name, got {type_name(item)}", field
                )
            params.append(
                _parameter(item.get("name"), item, record, field, index=index, optional=optional)
            )
        return tuple(params)
    if isinstance(value, Mapping):
        if _is_schema(value):
            return _schema_parameters(value, record, field, optional=optional)
        return tuple(
            _parameter(name, _spec(spec, record, field, name), record, field, optional=optional)
            for name, spec in value.items()
        )
    raise record.error(
        f"parameters must be a list, an object or a JSON schema, got {type_name(value)}", field
    )


def _text_parameters(
    text: str, record: _Record, field: str, *, optional: bool
) -> tuple[ParameterDoc, ...]:
    stripped = text.strip()
    if not stripped:
        return ()
    if stripped[0] in "[{":
        try:
            parsed = json.loads(stripped)
        except json.JSONDecodeError as exc:
            raise record.error(f"parameters are not valid JSON: {exc.msg}", field) from None
        return _parse_parameters(parsed, record, field, optional=optional)
    if stripped.startswith("(") or stripped.startswith("def "):
        found = _signature_parameters(stripped if "def " in stripped else f"def _{stripped}:")
        if found is not None:
            return found
    raise record.error(
        "parameters must be a list, an object, a JSON schema or a signature such as "
        "'(a: str, b=1)', got other text",
        field,
    )


def _is_schema(value: Mapping[str, Any]) -> bool:
    return isinstance(value.get("properties"), Mapping) or value.get("type") == "object"


def _schema_parameters(
    schema: Mapping[str, Any], record: _Record, field: str, *, optional: bool = False
) -> tuple[ParameterDoc, ...]:
    properties = schema.get("properties")
    if properties is None:
        return ()
    if not isinstance(properties, Mapping):
        raise record.error(f"properties must be an object, got {type_name(properties)}", field)
    listed = schema.get("required")
    required_names = {n for n in listed if isinstance(n, str)} if isinstance(listed, list) else set()
    params = []
    for name, spec in properties.items():
        spec = _spec(spec, record, field, name)
        params.append(
            _parameter(
                name,
                spec,
                record,
                field,
                optional=optional,
                required=name in required_names or spec.get("required") is True,
            )
        )
    return tuple(params)


def _spec(spec: Any, record: _Record, field: str, name: Any) -> Mapping[str, Any]:
    """A parameter's spec as an object: a bare type word or description becomes one."""
    if spec is None:
        return {}
    if isinstance(spec, Mapping):
        return spec
    if isinstance(spec, str):
        return {"type": spec} if spec.strip().lower() in _TYPE_WORDS else {"description": spec}
    raise record.error(
        f"the spec of parameter {name!r} must be an object or text, got {type_name(spec)}", field
    )


def _parameter(
    name: Any,
    spec: Mapping[str, Any],
    record: _Record,
    field: str,
    *,
    index: int | None = None,
    optional: bool = False,
    required: bool | None = None,
) -> ParameterDoc:
    where = f"parameter {index}" if index is not None else "a parameter"
    if not isinstance(name, str):
        reason = "has no name" if name is None else f"has a name of type {type_name(name)}"
        raise record.error(f"{where} {reason}", field)
    if not name.strip():
        raise record.error(f"{where} has an empty name", field)
    description = spec.get("description")
    if description is None:
        description = ""
    if not isinstance(description, str):
        raise record.error(
            f"the description of parameter {name!r} must be a string, got {type_name(description)}",
            field,
        )
    if optional:
        required = False
    elif required is None:
        required = _declared_required(spec, description)
    return ParameterDoc(
        name=name.strip(),
        type=_type_of(spec),
        description=description.strip(),
        required=required,
    )


def _declared_required(spec: Mapping[str, Any], description: str) -> bool:
    """Required unless the spec says optional (non-schema shapes; see the module docstring)."""
    flag = spec.get("required")
    if isinstance(flag, bool):
        return flag
    if isinstance(flag, str) and flag.strip().lower() in ("false", "no", "optional"):
        return False
    if isinstance(flag, str) and flag.strip().lower() in ("true", "yes", "required"):
        return True
    if spec.get("optional") is True:
        return False
    schema = spec.get("schema")
    if spec.get("default") is not None or (
        isinstance(schema, Mapping) and schema.get("default") is not None
    ):
        return False
    return not _OPTIONAL_TEXT.search(description)


def _type_of(spec: Mapping[str, Any]) -> str:
    kind = _type_text(spec.get("type"))
    if not kind and isinstance(spec.get("schema"), Mapping):
        kind = _type_of(spec["schema"])
    if not kind:
        for key in ("anyOf", "oneOf"):
            options = spec.get(key)
            if isinstance(options, list):
                kinds = [_type_of(o) for o in options if isinstance(o, Mapping)]
                kind = "|".join(dict.fromkeys(k for k in kinds if k))
                if kind:
                    break
    return kind


def _type_text(value: Any) -> str:
    if isinstance(value, str):
        return value.strip()
    if isinstance(value, list):
        return "|".join(item.strip() for item in value if isinstance(item, str) and item.strip())
    return ""


def _signature_parameters(text: str) -> tuple[ParameterDoc, ...] | None:
    """Parameters of the first ``def name(...)`` in ``text``; None when it does not parse."""
    start = text.find("def ")
    opening = text.find("(", start)
    if start < 0 or opening < 0:
        return None
    depth = 0
    closing = -1
    for position in range(opening, len(text)):
        char = text[position]
        if char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
            if depth == 0:
                closing = position
                break
    if closing < 0:
        return None
    try:
        module = ast.parse(f"def _f({text[opening + 1 : closing]}): pass")
    except SyntaxError:
        return None
    function = module.body[0]
    if not isinstance(function, ast.FunctionDef):
        return None
    args = function.args
    positional = [*args.posonlyargs, *args.args]
    first_default = len(positional) - len(args.defaults)
    found: list[tuple[ast.arg, bool]] = [
        (arg, index < first_default) for index, arg in enumerate(positional)
    ]
    if args.vararg is not None:
        found.append((args.vararg, False))
    found += [(arg, default is None) for arg, default in zip(args.kwonlyargs, args.kw_defaults, strict=True)]
    if args.kwarg is not None:
        found.append((args.kwarg, False))
    return tuple(
        ParameterDoc(
            name=arg.arg,
            type=ast.unparse(arg.annotation) if arg.annotation is not None else "",
            required=required,
        )
        for arg, required in found
        if arg.arg not in ("self", "cls")
    )


# --- response ---------------------------------------------------------------------------------------


def _response(view: Mapping[str, Any], record: _Record) -> str:
    for key in _RESPONSE_KEYS:
        if view.get(key) is not None:
            return _render_field(view[key], record, key)
    return ""


def _render_field(value: Any, record: _Record, field: str) -> str:
    if isinstance(value, (str, Mapping, list)):
        return _render(value, 0)
    raise record.error(f"must be text, an object or a list, got {type_name(value)}", field)


def _compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(", ", ": "), default=str)


def _render(value: Any, depth: int) -> str:
    """Readable text of a response: ``name (type): description; ...``."""
    if isinstance(value, str):
        return value.strip()
    if isinstance(value, list):
        parts = []
        for item in value:
            if isinstance(item, Mapping) and isinstance(item.get("name"), str):
                rest = {k: v for k, v in item.items() if k != "name"}
                parts.append(_entry(item["name"], rest, depth))
            else:
                parts.append(_render(item, depth + 1))
        return "; ".join(part for part in parts if part)
    if isinstance(value, Mapping):
        if _is_schema(value) or _describes_a_value(value):
            return _entry("", value, depth).strip()
        return "; ".join(part for part in (_entry(str(k), v, depth) for k, v in value.items()) if part)
    return "" if value is None else str(value)


def _describes_a_value(spec: Any) -> bool:
    """True for a schema-like ``{type, description, properties, items, ...}`` object."""
    if not isinstance(spec, Mapping) or not set(spec) <= _SCHEMA_HINT_KEYS:
        return False
    expected: dict[str, type | tuple[type, ...]] = {
        "type": (str, list),
        "description": str,
        "properties": Mapping,
        "items": Mapping,
        "schema": Mapping,
    }
    return all(
        key not in spec or spec[key] is None or isinstance(spec[key], kind)
        for key, kind in expected.items()
    )


def _nested_properties(spec: Mapping[str, Any]) -> Mapping[str, Any] | None:
    properties = spec.get("properties")
    if isinstance(properties, Mapping) and properties:
        return properties
    items = spec.get("items")
    if isinstance(items, Mapping):
        return _nested_properties(items)
    schema = spec.get("schema")
    if isinstance(schema, Mapping):
        return _nested_properties(schema)
    return None


def _entry(name: str, spec: Any, depth: int) -> str:
    """One named part of a response; ``name`` may be empty for the top-level object itself."""
    label = name
    if spec is None:
        return label
    if isinstance(spec, str):
        return f"{label}: {spec.strip()}" if label and spec.strip() else label or spec.strip()
    if isinstance(spec, Mapping) and isinstance(spec.get("$ref"), str):
        # A reference left in place (a cycle, or one pointing elsewhere): name what it points to.
        target = spec["$ref"].rstrip("/").rsplit("/", 1)[-1]
        return f"{label} ({target})" if label else target
    if not _describes_a_value(spec):
        return f"{label}: {_compact(spec)}" if label else _compact(spec)
    kind = _type_of(spec)
    description = spec.get("description")
    text = description.strip() if isinstance(description, str) else ""
    nested = _nested_properties(spec)
    if label:
        head = f"{label} ({kind})" if kind else label
    else:
        # The top-level object's own type says nothing its listed properties do not.
        head = f"({kind})" if kind and nested is None else ""
    rendered = f"{head}: {text}" if head and text else head or text
    if nested is not None:
        if depth >= _MAX_RENDER_DEPTH:
            inner = _compact(dict(nested))
        else:
            inner = "; ".join(
                part for part in (_entry(str(k), v, depth + 1) for k, v in nested.items()) if part
            )
        rendered = f"{rendered} {{{inner}}}" if rendered else inner
    return rendered
