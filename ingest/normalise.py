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

import json
import re
import unicodedata
from collections.abc import Mapping, Sequence
from typing import Any

from toolsift.ingest.derive import derive_fields
from toolsift.ingest.loaders.files import type_name
from toolsift.ingest.nesting import DEFAULT_MAX_NESTING_DEPTH, nesting_problem
from toolsift.ingest.parameters import (
    _MAX_RENDER_DEPTH,
    _SIGNATURE_KEYS,
    _as_text,
    _declared_parameters,
    _keep_declared,
    _parameters,
    _parse_parameters,
    _parsed_json,
    _Record,
    _render,
)
from toolsift.ingest.raw_records import AGENT_ID_PREFIX, RawAgent, RawTool
from toolsift.mappings.scoped import SCOPE_MARK, reserved
from toolsift.mappings.model import (
    UNPARSED_PARAMETERS,
    AgentDoc,
    ParameterDoc,
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
_QUOTE_PAIRS = {'"': '"', "'": "'", "\u201c": "\u201d", "\u2018": "\u2019"}


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
