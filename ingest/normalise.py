"""Rule-based standardisation: a catalog's raw documentation into the MFTR fields of a :class:`ToolDoc`.

Pure functions, deterministic, and nothing is invented: every value comes from a field the
documentation has (under one of several customary names), and a field it lacks stays empty.

A user's catalog is what it is: **a record with an identity and some text is a tool.** What can be
parsed is parsed, what cannot is kept as text, and the document says so: ``schema_quality``
(``declared``, ``inferred`` or ``text``, :data:`~toolsift.mappings.model.SchemaQuality`) and one
``schema_notes`` sentence per thing read loosely, naming its field. Only a record with no usable
identity (no name and no id, or an id OpenSearch cannot take), no text at all, a field over
``max_field_chars``, or lists and objects nested deeper than ``max_nesting_depth`` (measured first,
:mod:`toolsift.ingest.nesting`) raises :class:`~toolsift.errors.CatalogRecordError` naming its
source, position, id and the field to blame.

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
  optional, default}`` (or of bare names, or of one-key ``{name: spec}`` objects), an object
  ``name -> spec``, a JSON schema (``properties`` + ``required``), JSON (or Python-literal) text of
  one of those, or a parenthesised signature ``"(a: str, b=1)"``. Messy specs as real catalogs have
  them:

  - ``"N/A"``, ``"none"``, ``"-"``, empty text: no parameters.
  - a dict of default values (``{"alpha": 0.0001, "solver": "adam", "random_state": null,
    "mean": [0.485, 0.456]}``): optional parameters whose types are inferred from the values
    (``number``, ``string``, ``array``; ``"True"`` is a boolean) and whose description is
    ``Default: <value>`` (*inferred*). A spec value that is a type word is a type, text of several
    words a description, a single other word a default.
  - names in text (``"question, context"``, ``"image, optional text"``): untyped parameters
    (*inferred*).
  - a ``required`` name with no property: kept as a required parameter of unknown type, so the
    missing-parameter penalty still sees it (*inferred*).
  - anything else — free text, a number, an item with no name, a ``$ref`` that does not resolve —
    is kept as text in one optional parameter sub-document named
    :data:`~toolsift.mappings.model.UNPARSED_PARAMETERS` (type ``text``), searchable like any
    parameter and handed to agents as the input schema's description, not as an argument (*text*).
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
``raw`` still come from the original documentation. Where the documentation declares its parameters,
the standardised ones are held to the declared names (reworded, never added, dropped or renamed: an
LLM's answer cannot change a tool's call structure), with a note when the answer differed.

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
from dataclasses import replace
from typing import Any

from toolsift.errors import CatalogRecordError
from toolsift.ingest.derive import derive_fields
from toolsift.ingest.loaders.files import type_name
from toolsift.ingest.nesting import DEFAULT_MAX_NESTING_DEPTH, nesting_problem, too_deep
from toolsift.ingest.raw_records import AGENT_ID_PREFIX, RawAgent, RawTool
from toolsift.mappings.scoped import SCOPE_MARK, reserved
from toolsift.mappings.model import (
    SCHEMA_QUALITIES,
    UNPARSED_PARAMETERS,
    AgentDoc,
    ParameterDoc,
    SchemaQuality,
    ToolDoc,
)

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
#: Parameter texts that say there are none ("N/A"), compared in lower case without a final full stop.
_NO_PARAMETERS = frozenset(
    {"", "n/a", "na", "none", "null", "nil", "-", "--", "nothing", "not applicable", "no parameters",
     "no arguments", "no args", "no input", "no inputs", "{}", "[]", "()"}
)
_IDENTIFIER = re.compile(r"[A-Za-z_][\w.\-]*")


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


def normalise_tool(
    raw: RawTool, *, max_field_chars: int = DEFAULT_MAX_FIELD_CHARS, max_depth: int = DEFAULT_MAX_NESTING_DEPTH
) -> ToolDoc:
    """Standardise one raw tool into a :class:`ToolDoc`, by the rules in the module docstring.

    Args:
        raw: the tool as a loader yielded it.
        max_field_chars: the longest text accepted in any one field (``Settings.max_field_chars``).
        max_depth: the deepest nesting of lists and objects accepted in the documentation or the
            standardised document (``Settings.max_nesting_depth``); JSON text in a parameter spec
            nested deeper is kept as text.

    Returns:
        The tool document, with ``tool_id`` = ``raw.tool_id`` or, when that is None, the name; a
        record with an id and no name is named by its id. What was read loosely is in its
        ``schema_quality`` and ``schema_notes``.

    Raises:
        CatalogRecordError: no text at all; neither a name nor an id; a text field longer than
            ``max_field_chars``; lists and objects nested deeper than ``max_depth``; an id that is
            empty, too long, has control characters, or starts with ``agent:``.
    """
    record = _Record(raw.source, raw.position, raw.tool_id, max_depth)
    documentation = raw.documentation
    if not isinstance(documentation, Mapping):
        raise record.error("the documentation must be an object", "documentation")
    standard = raw.standardized
    if standard is not None and not isinstance(standard, Mapping):
        raise record.error("the standardised documentation must be an object", "standardized")
    # Before anything walks them: every reader below (and json.dumps) recurses into nested values.
    _check_nesting(documentation, record)
    if standard is not None:
        _check_nesting(standard, record, "standardized.")
    view = _view(documentation, max_depth)
    if not _has_text(documentation):
        raise record.error("the record has no text: no name, description, parameters or anything else to search", "documentation")
    name = _name(view, record, raw.tool_id)
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
        declared = _declared_parameters(view, record)
        if declared is not None:
            parameters = _keep_declared(parameters, declared, record)
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
    if record.unparsed:
        parameters += (
            ParameterDoc(
                name=UNPARSED_PARAMETERS, type="text", description="; ".join(record.unparsed), required=False
            ),
        )
    derived = derive_fields(
        view, name=name, description=description, parameters=parameters, response=response,
        examples=examples, tags=tags,
    )
    # The overview already is the name and parameters a derived description would repeat.
    overview = tool_overview(name, description, [p.name for p in parameters if p.name != UNPARSED_PARAMETERS])
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
        schema_quality=record.quality,
        schema_notes=tuple(record.notes),
        # Each part was checked against the limit; together they are cut to it, not rejected.
        overview=overview[:max_field_chars],
        full_doc=full_doc_text(documentation),
        raw=dict(documentation),
    )
    _check_tool_lengths(doc, record, max_field_chars)
    return doc


def normalise_agent(
    raw: RawAgent, *, max_field_chars: int = DEFAULT_MAX_FIELD_CHARS, max_depth: int = DEFAULT_MAX_NESTING_DEPTH
) -> AgentDoc:
    """Validate one raw agent and turn it into an :class:`AgentDoc`.

    Args:
        raw: the agent as a loader yielded it.
        max_field_chars: the longest text accepted in any one field.
        max_depth: the deepest nesting of lists and objects accepted in its documentation.

    Returns:
        The agent document; ``full_doc`` is :func:`full_doc_text` of its documentation.

    Raises:
        CatalogRecordError: an empty name, a field of the wrong type, a text longer than
            ``max_field_chars``, lists and objects nested deeper than ``max_depth``, or an id that is
            not ``agent:`` followed by a usable slug.
    """
    record = _Record(raw.source, raw.position, raw.agent_id or None, max_depth)
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
    _check_nesting(raw.documentation, record)
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
    if reserved(value):  # toolsift's tenant-scoped ids (toolsift.mappings.scoped): no catalog may name one
        raise record.error(f"an id may not start with {SCOPE_MARK!r} (after {AGENT_ID_PREFIX!r} for an agent): "
                           "that prefix marks toolsift's tenant-scoped ids", field)


def _check_agent_id(value: Any, record: _Record, field: str) -> None:
    _check_id(value, record, field)
    if not value.startswith(AGENT_ID_PREFIX) or not value[len(AGENT_ID_PREFIX) :].strip():
        raise record.error(
            f"an agent id must be {AGENT_ID_PREFIX!r} followed by a slug of the name, got {value!r}",
            field,
        )


def _check_nesting(documentation: Mapping[str, Any], record: _Record, prefix: str = "") -> None:
    problem = nesting_problem(documentation, record.max_depth, prefix)
    if problem is not None:
        field, reason = problem
        raise record.error(reason, field)


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


def _view(documentation: Mapping[str, Any], max_depth: int = DEFAULT_MAX_NESTING_DEPTH) -> dict[str, Any]:
    """The documentation with OpenAI's function wrapper opened and a BEIR ``text`` parsed (JSON in
    it nested deeper than the documentation may be stays text)."""
    view = dict(documentation)
    function = view.get("function")
    if isinstance(function, Mapping):
        del view["function"]
        view.update(function)
    if "_id" in view and isinstance(view.get("text"), str) and not _has_any(view, _NAME_KEYS):
        parsed = _toolbench_fields(view["text"], max_depth - 1)
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


def _toolbench_fields(text: str, max_depth: int = DEFAULT_MAX_NESTING_DEPTH) -> dict[str, Any]:
    """``category_name:X, tool_name:Y, ...`` as a dict; the params and schema parsed as JSON (kept as
    text when nested deeper than ``max_depth``)."""
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
                parsed, too_deep_why = _parsed_json(value, max_depth)
            except json.JSONDecodeError:
                pass
            else:
                if too_deep_why is None:
                    fields[key] = parsed
                    continue
        fields[key] = value
    return fields


# --- name, description, profile ---------------------------------------------------------------------


def _name(view: Mapping[str, Any], record: _Record, tool_id: str | None) -> str:
    """The tool's name; a numeric name becomes text, and a record with an id but no name is named by it."""
    for key in _NAME_KEYS:
        value = view.get(key)
        if value is None or isinstance(value, bool):
            continue
        if isinstance(value, (int, float)):
            record.note(f"the name is a number ({value}); used as text", key)
            return str(value)
        if not isinstance(value, str):
            if tool_id is None:
                raise record.error(f"the name must be a string, got {type_name(value)}", key)
            record.note(f"the name is {type_name(value)}, not text; the record's id is used as its name", key)
            return tool_id
        if value.strip():
            return value.strip()
    for key in _SIGNATURE_KEYS:
        value = view.get(key)
        match = _DEF_NAME.search(value) if isinstance(value, str) else None
        if match is not None:
            return match.group(1)
    if tool_id is not None:
        record.note("the record has no name; its id is used as its name", "name")
        return tool_id
    raise record.error(
        "the tool has no name and no id (looked for: " + ", ".join(_NAME_KEYS) + ", function.name, "
        "and a 'def name(...)' signature)",
        "name",
    )


_ID_KEYS = frozenset({"id", "_id"})


def _has_text(value: Any, depth: int = 0) -> bool:
    """Whether a record holds any words (a string with a letter or digit) outside its id."""
    if isinstance(value, str):
        return any(char.isalnum() for char in value)
    if depth > _MAX_RENDER_DEPTH * 4:
        return True
    if isinstance(value, Mapping):
        return any(
            _has_text(item, depth + 1) or (key not in _ID_KEYS and depth > 0 and _has_text(key, depth + 1))
            for key, item in value.items()
            if not (depth == 0 and key in _ID_KEYS)
        )
    if isinstance(value, list):
        return any(_has_text(item, depth + 1) for item in value)
    return False


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
        text = _clean_text(value if isinstance(value, str) else _as_text(value, record, key))
        if text:
            return text
    return ""


def _as_text(value: Any, record: _Record, field: str) -> str:
    """A value where text was expected, as text (noted): list items joined, an object rendered."""
    record.note(f"expected text, got {type_name(value)}; read as text", field)
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return "; ".join(item.strip() for item in value if item.strip())
    if isinstance(value, (Mapping, list)):
        return _render(value, 0)
    return "" if value is None else str(value)


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
    return _clean_text(_as_text(value, record, field))


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
    """A parameter spec in any of the shapes the module docstring lists; what cannot be read is kept
    as text (:meth:`_Record.keep_text`), never raised."""
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


# --- response ---------------------------------------------------------------------------------------


def _response(view: Mapping[str, Any], record: _Record) -> str:
    for key in _RESPONSE_KEYS:
        if view.get(key) is not None:
            return _render_field(view[key], record, key)
    return ""


def _render_field(value: Any, record: _Record, field: str) -> str:
    if isinstance(value, (str, Mapping, list)):
        return _render(value, 0)
    return _as_text(value, record, field)


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
