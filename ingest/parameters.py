"""Messy parameter specs into :class:`~toolsift.mappings.model.ParameterDoc` records, for the normaliser.

Owns reading a catalog's parameter specs however they come — a JSON schema, a list of specs or names,
an object of specs or of default values, JSON or Python-literal text of one of those, names in text,
a Python signature, free text (kept as text) — and holding a standardised document's parameters to
the declared ones. The accepted shapes and which parameters are required are described in
:mod:`toolsift.ingest.normalise`'s docstring.

Also here, because reading a spec needs them and the normaliser builds on them: ``_Record`` (a
record's identity for its errors, and the notes, schema quality and unparsed text normalising
gathers), JSON text read within a nesting limit, and spec-like values rendered as text
(``name (type): description; ...``, for responses and for a field that should be text and is not).
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from toolsift.errors import CatalogRecordError
from toolsift.ingest.loaders.files import type_name
from toolsift.ingest.nesting import DEFAULT_MAX_NESTING_DEPTH, too_deep
from toolsift.mappings.model import SCHEMA_QUALITIES, ParameterDoc, SchemaQuality

#: Nothing public: every name here is private to :mod:`toolsift.ingest` (normalise imports them by name).
__all__: list[str] = []

_PARAMETER_KEYS_BEFORE_PROPERTIES = (
    "parameters",
    "api_arguments",
    "inputSchema",
    "input_schema",
    "arguments",
    "args",
)
_SIGNATURE_KEYS = ("func_description", "signature")
_OPTIONAL_TEXT = re.compile(
    r"^\s*[(\[]?optional\b"
    r"|[(\[]optional[)\]]"
    r"|\bthis (?:parameter |argument |field |value )?is (?:an )?optional\b",
    re.IGNORECASE,
)
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
#: Parameter texts that say there are none ("N/A"), compared in lower case without a final full stop.
_NO_PARAMETERS = frozenset(
    {"", "n/a", "na", "none", "null", "nil", "-", "--", "nothing", "not applicable", "no parameters",
     "no arguments", "no args", "no input", "no inputs", "{}", "[]", "()"}
)
_IDENTIFIER = re.compile(r"[A-Za-z_][\w.\-]*")


class _Record:
    """Where a record came from, to build its errors, and what normalising it had to infer or keep."""

    def __init__(
        self, source: str, position: str, record_id: str | None, max_depth: int = DEFAULT_MAX_NESTING_DEPTH
    ) -> None:
        self.source = source
        self.position = position
        self.record_id = record_id
        self.max_depth = max_depth
        self.notes: list[str] = []
        self.quality: SchemaQuality = "declared"
        #: Parts of a parameter spec that could not be read, kept as text.
        self.unparsed: list[str] = []

    def error(self, reason: str, field: str | None = None) -> CatalogRecordError:
        return CatalogRecordError(
            self.source, self.position, reason, record_id=self.record_id, field=field
        )

    def note(self, reason: str, field: str, quality: SchemaQuality | None = None) -> None:
        """Record what was inferred or kept as text (once per reason), lowering the schema quality."""
        text = f"field {field!r}: {reason}"
        if text not in self.notes:
            self.notes.append(text)
        if quality is not None and SCHEMA_QUALITIES.index(quality) > SCHEMA_QUALITIES.index(self.quality):
            self.quality = quality

    def keep_text(self, value: Any, reason: str, field: str) -> None:
        """Keep an unreadable part of a parameter spec as text, with a note saying why."""
        text = value if isinstance(value, str) else _compact(value)
        if text.strip():
            self.unparsed.append(text.strip())
        self.note(f"{reason}; kept as text", field, "text")


def _parsed_json(text: str, limit: int) -> tuple[Any, str | None]:
    """``(value, None)`` for JSON text nesting at most ``limit`` levels; ``(None, why not)`` otherwise.

    Raises:
        json.JSONDecodeError: the text is not JSON.
    """
    try:
        value = json.loads(text)
    except RecursionError:
        return None, "nested too deep to parse"
    if too_deep(value, limit) is not None:
        return None, f"nested deeper than {limit} levels"
    return value, None


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


def _declared_parameters(view: Mapping[str, Any], record: _Record) -> tuple[ParameterDoc, ...] | None:
    """The parameters the documentation itself declares, or None when it declares none in a form that
    was read as declared (no parameter field, or one that had to be inferred or kept as text)."""
    keys = (*_PARAMETER_KEYS_BEFORE_PROPERTIES, "properties", "required_params", "optional_params", "input_parameters")
    if all(view.get(key) is None for key in keys):
        return None
    scratch = _Record(record.source, record.position, record.record_id, record.max_depth)
    parameters = _parameters(view, scratch)
    return parameters if scratch.quality == "declared" and not scratch.unparsed else None


def _keep_declared(
    standardised: tuple[ParameterDoc, ...], declared: tuple[ParameterDoc, ...], record: _Record
) -> tuple[ParameterDoc, ...]:
    """A standardised document's parameters held to the names the documentation declares.

    A standardisation (an LLM's answer) may reword a declared parameter but not add, drop or rename
    one: that would change the tool's call structure, which is what injected tool text aims at. A
    declared parameter the answer left out keeps the documentation's own spec; one it invented is
    dropped; both are noted.
    """
    by_name = {p.name.lower(): p for p in standardised}
    kept = tuple(by_name.get(p.name.lower(), p) for p in declared)
    kept = tuple(replace(k, name=d.name) for k, d in zip(kept, declared, strict=True))
    missing = [p.name for p in declared if p.name.lower() not in by_name]
    declared_names = {p.name.lower() for p in declared}
    invented = [p.name for p in standardised if p.name.lower() not in declared_names]
    if missing:
        record.note(f"the standardisation left out declared parameter(s) {', '.join(missing)}; kept from "
                    "the documentation", "standardized.parameters")
    if invented:
        record.note(f"the standardisation named parameter(s) the documentation does not declare "
                    f"({', '.join(invented)}); dropped", "standardized.parameters")
    return kept


def _parse_parameters(
    value: Any, record: _Record, field: str, *, optional: bool = False
) -> tuple[ParameterDoc, ...]:
    """A parameter spec in any of the shapes :mod:`toolsift.ingest.normalise`'s docstring lists; what
    cannot be read is kept as text (:meth:`_Record.keep_text`), never raised."""
    if value is None:
        return ()
    if isinstance(value, str):
        return _text_parameters(value, record, field, optional=optional)
    if isinstance(value, list):
        params: list[ParameterDoc] = []
        for index, item in enumerate(value):
            params.extend(_list_item(index, item, record, field, optional=optional))
        return tuple(params)
    if isinstance(value, Mapping):
        if _is_schema(value):
            return _schema_parameters(value, record, field, optional=optional)
        # In a dict of default values ({"alpha": 0.0001, "random_state": null}) a null is a default too.
        defaults = any(_is_value(spec) for spec in value.values())
        return tuple(
            param
            for name, spec in value.items()
            for param in _named(str(name), spec, record, field, optional=optional, defaults=defaults)
        )
    record.keep_text(
        json.dumps(value), f"parameters should be a list, an object or a JSON schema, got {type_name(value)}", field
    )
    return ()


def _list_item(
    index: int, item: Any, record: _Record, field: str, *, optional: bool
) -> tuple[ParameterDoc, ...]:
    """One item of a list of parameters: a name, a ``{name, ...}`` spec or a one-key ``{name: spec}``."""
    if isinstance(item, str):
        return (ParameterDoc(name=item.strip(), required=not optional),) if item.strip() else ()
    if not isinstance(item, Mapping):
        record.keep_text(item, f"parameter {index} is {type_name(item)}, not an object or a name", field)
        return ()
    if "name" in item:
        return _named(item.get("name"), item, record, field, index=index, optional=optional)
    if isinstance(item.get("$ref"), str):
        record.keep_text(
            item, f"parameter {index} is a reference that does not resolve: {item['$ref']!r}", field
        )
        return ()
    if len(item) == 1 and not set(item) & _SCHEMA_HINT_KEYS:
        ((name, spec),) = item.items()
        return _named(str(name), spec, record, field, optional=optional)
    record.keep_text(item, f"parameter {index} has no name", field)
    return ()


def _text_parameters(
    text: str, record: _Record, field: str, *, optional: bool
) -> tuple[ParameterDoc, ...]:
    stripped = text.strip()
    if stripped.lower().rstrip(".") in _NO_PARAMETERS:
        return ()
    if stripped[0] in "[{":
        limit = record.max_depth - 1  # the text is a field of the documentation
        try:
            parsed, too_deep_why = _parsed_json(stripped, limit)
        except json.JSONDecodeError as exc:
            parsed = _python_literal(stripped)
            if parsed is None:
                record.keep_text(stripped, f"the parameters are not valid JSON ({exc.msg})", field)
                return ()
            if too_deep(parsed, limit) is not None:
                record.keep_text(stripped, f"the parameters' Python literal is nested deeper than {limit} levels", field)
                return ()
            record.note("the parameters are a Python literal, not JSON; read as one", field)
        else:
            if too_deep_why is not None:
                record.keep_text(stripped, f"the parameters' JSON is {too_deep_why}", field)
                return ()
        return _parse_parameters(parsed, record, field, optional=optional)
    if stripped.startswith("(") or stripped.startswith("def "):
        found = _signature_parameters(stripped if "def " in stripped else f"def _{stripped}:")
        if found is not None:
            return found
    names = _listed_names(stripped)
    if names is not None:
        record.note("the parameters are a list of names in text; their types are unknown", field, "inferred")
        return tuple(
            ParameterDoc(name=name, required=not (optional or is_optional)) for name, is_optional in names
        )
    record.keep_text(stripped, "the parameters are free text, not a list, an object, a schema or a signature", field)
    return ()


def _python_literal(text: str) -> Any:
    """``text`` as a Python literal (``"{'a': 1}"``, ``"['x']"``), or None when it is not one."""
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None
    return value if isinstance(value, (list, dict)) else None


def _listed_names(text: str) -> list[tuple[str, bool]] | None:
    """``"image, optional text"`` → ``[("image", False), ("text", True)]``; None unless every item is
    an identifier (so prose stays prose)."""
    names: list[tuple[str, bool]] = []
    for item in re.split(r"[,;]", text):
        words = item.split()
        is_optional = len(words) == 2 and words[0].lower() in ("optional", "[optional]", "(optional)")
        if is_optional:
            words = words[1:]
        if len(words) != 1 or not _IDENTIFIER.fullmatch(words[0]):
            return None
        names.append((words[0], is_optional))
    return names or None


def _is_schema(value: Mapping[str, Any]) -> bool:
    return isinstance(value.get("properties"), Mapping) or value.get("type") == "object"


def _schema_parameters(
    schema: Mapping[str, Any], record: _Record, field: str, *, optional: bool = False
) -> tuple[ParameterDoc, ...]:
    properties = schema.get("properties")
    listed = schema.get("required")
    required_names = [n for n in listed if isinstance(n, str)] if isinstance(listed, list) else []
    if properties is None:
        properties = {}
    if not isinstance(properties, Mapping):
        record.keep_text(properties, f"properties should be an object, got {type_name(properties)}", field)
        properties = {}
    params: list[ParameterDoc] = []
    for name, spec in properties.items():
        params.extend(
            _named(
                str(name),
                spec,
                record,
                field,
                optional=optional,
                required=name in required_names or (isinstance(spec, Mapping) and spec.get("required") is True),
            )
        )
    for name in dict.fromkeys(required_names):
        if name not in properties and name.strip():
            record.note(f"required parameter {name!r} is not among the properties; kept, type unknown", field, "inferred")
            params.append(ParameterDoc(name=name.strip(), required=not optional))
    return tuple(params)


def _named(
    name: Any,
    spec: Any,
    record: _Record,
    field: str,
    *,
    index: int | None = None,
    optional: bool = False,
    required: bool | None = None,
    defaults: bool = False,
) -> tuple[ParameterDoc, ...]:
    """A named parameter from its spec: an object of spec keys, a type word, a description, or a
    default value (whose type is inferred); ``defaults``: its siblings are default values, so a null
    spec is a null default (optional), not an empty spec."""
    where = f"parameter {index}" if index is not None else "a parameter"
    if isinstance(name, (int, float)) and not isinstance(name, bool):
        name = str(name)
    if not isinstance(name, str) or not name.strip():
        reason = "has an empty name" if isinstance(name, str) else f"has a name of type {type_name(name)}"
        record.keep_text(spec, f"{where} {reason}", field)
        return ()
    if isinstance(spec, Mapping) and not _is_value(spec):
        return (_parameter(name, spec, record, field, optional=optional, required=required),)
    if spec is None and not defaults:
        return (_parameter(name, {}, record, field, optional=optional, required=required),)
    if isinstance(spec, str) and not _is_value(spec):
        as_spec = {"type": spec} if spec.strip().lower() in _TYPE_WORDS else {"description": spec}
        return (_parameter(name, as_spec, record, field, optional=optional, required=required),)
    record.note("parameters are given as default values; their types are inferred from them", field, "inferred")
    return (
        ParameterDoc(
            name=name.strip(),
            type="" if spec is None else _value_type(spec),
            description=f"Default: {_short(spec)}",
            required=False,
        ),
    )


def _is_value(spec: Any) -> bool:
    """Whether a parameter's spec is a default value rather than a spec: a number, a boolean, a list,
    an object of no spec keys, or one word that is not a type name. Text with a space between words
    describes; it is a description."""
    if isinstance(spec, str):
        return spec.strip().lower() not in _TYPE_WORDS and len(spec.split()) <= 1
    if isinstance(spec, Mapping):
        return bool(spec) and not set(spec) & _SCHEMA_HINT_KEYS and "name" not in spec
    return spec is not None


def _value_type(value: Any) -> str:
    """The JSON Schema type of a default value; ``"True"`` and ``"0.5"`` count as what they spell."""
    if isinstance(value, str):
        lowered = value.strip().lower()
        if lowered in ("true", "false"):
            return "boolean"
        if re.fullmatch(r"[+-]?\d+", lowered):
            return "integer"
        if re.fullmatch(r"[+-]?(\d+\.\d*|\.\d+|\d+)(e[+-]?\d+)?", lowered):
            return "number"
        return "string"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, list):
        return "array"
    return "object"


_MAX_DEFAULT_CHARS = 120


def _short(value: Any) -> str:
    """A default value as text, cut to :data:`_MAX_DEFAULT_CHARS` (a list of 100 floats says little more)."""
    text = value if isinstance(value, str) else _compact(value)
    return text if len(text) <= _MAX_DEFAULT_CHARS else text[: _MAX_DEFAULT_CHARS - 1].rstrip() + "…"


def _parameter(
    name: str,
    spec: Mapping[str, Any],
    record: _Record,
    field: str,
    *,
    optional: bool = False,
    required: bool | None = None,
) -> ParameterDoc:
    description = spec.get("description")
    if description is None:
        description = ""
    if not isinstance(description, str):
        description = _as_text(description, record, f"{field}.{name[:80]}.description")
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
    """Required unless the spec says optional (non-schema shapes; see :mod:`toolsift.ingest.normalise`)."""
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
    except (SyntaxError, ValueError, RecursionError, MemoryError):  # nested too deep for Python's parser
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
    try:
        return tuple(
            ParameterDoc(
                name=arg.arg,
                type=ast.unparse(arg.annotation) if arg.annotation is not None else "",
                required=required,
            )
            for arg, required in found
            if arg.arg not in ("self", "cls")
        )
    except RecursionError:  # an annotation that parsed but nests too deep to write back
        return None

# --- specs as text ---------------------------------------------------------------------------------


def _as_text(value: Any, record: _Record, field: str) -> str:
    """A value where text was expected, as text (noted): list items joined, an object rendered."""
    record.note(f"expected text, got {type_name(value)}; read as text", field)
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return "; ".join(item.strip() for item in value if item.strip())
    if isinstance(value, (Mapping, list)):
        return _render(value, 0)
    return "" if value is None else str(value)


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
