"""What :mod:`~toolsift.bench.scale_catalog` makes its tools from, and how it varies their texts.

It owns the vocabulary of generated catalogs (:data:`BOILERPLATE` in seven languages, server
description templates, server name patterns and qualifiers, verb and word synonyms), the source
*parts* (the real tools read from ``../shared/datasets``, their families and groups: :func:`_pool`),
the readers that turn each source's parameters into JSON Schema, and the helpers that make a
variant's name, description and parameters, a server's name, description and language. The random
draws are the caller's generator's, in the order the catalog generator makes them.
"""

from __future__ import annotations

import copy
import random
import re
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from toolsift.errors import CatalogError
from toolsift.ingest.benchmarks import read_json, read_jsonl
from toolsift.ingest.loaders.mcp import tool_id_for
from toolsift.ingest.loaders.naming import slugify

__all__ = ["BOILERPLATE"]

#: Boilerplate sentences modelled on ones the data holds, by language (hand translations);
#: ``{topic}`` is the family, ``{server}`` the server's name.
BOILERPLATE: Mapping[str, tuple[str, ...]] = {
    "en": ("In terms of {topic}.", "This tool belongs to the {server} API.", "Parameters may be combined as required.",
           "The result is in JSON format.", "Results are paginated.", "Requires an API key for authentication."),
    "zh": ("适用于{topic}领域。", "此工具属于 {server} API。", "参数可以按需组合。", "结果以 JSON 格式返回。",
           "结果分页返回。", "需要 API 密钥进行身份验证。"),
    "es": ("En el ámbito de {topic}.", "Esta herramienta pertenece a la API de {server}.",
           "Los parámetros se pueden combinar según sea necesario.", "El resultado está en formato JSON.",
           "Los resultados están paginados.", "Requiere una clave de API para la autenticación."),
    "de": ("Im Bereich {topic}.", "Dieses Tool gehört zur {server}-API.", "Parameter können nach Bedarf kombiniert werden.",
           "Das Ergebnis ist im JSON-Format.", "Die Ergebnisse sind seitenweise aufgeteilt.",
           "Erfordert einen API-Schlüssel zur Authentifizierung."),
    "fr": ("Dans le domaine {topic}.", "Cet outil fait partie de l'API {server}.",
           "Les paramètres peuvent être combinés selon les besoins.", "Le résultat est au format JSON.",
           "Les résultats sont paginés.", "Nécessite une clé API pour l'authentification."),
    "ja": ("{topic}の分野で使えます。", "このツールは {server} API に属します。", "パラメータは必要に応じて組み合わせられます。",
           "結果は JSON 形式です。", "結果はページ単位で返されます。", "認証には API キーが必要です。"),
    "pt": ("No âmbito de {topic}.", "Esta ferramenta pertence à API {server}.",
           "Os parâmetros podem ser combinados conforme necessário.", "O resultado está em formato JSON.",
           "Os resultados são paginados.", "Requer uma chave de API para autenticação."),
}
# A server's language, and how likely it is: about one server in six is not English.
_LANGUAGES: tuple[tuple[str, float], ...] = (
    ("en", 0.83), ("zh", 0.06), ("es", 0.03), ("de", 0.025), ("fr", 0.02), ("ja", 0.02), ("pt", 0.015),
)
_SERVER_TEMPLATES: Mapping[str, tuple[str, ...]] = {
    "en": ("MCP server for {topic}: {tools}.", "Tools for {topic}, including {tools}.",
           "A {topic} server exposing {n} tools: {tools}."),
    "zh": ("用于{topic}的 MCP 服务器：{tools}。", "提供{topic}相关工具，包括 {tools}。"),
    "es": ("Servidor MCP para {topic}: {tools}.", "Herramientas de {topic}, entre ellas {tools}."),
    "de": ("MCP-Server für {topic}: {tools}.", "Werkzeuge für {topic}, darunter {tools}."),
    "fr": ("Serveur MCP pour {topic} : {tools}.", "Outils pour {topic}, dont {tools}."),
    "ja": ("{topic}向けの MCP サーバー：{tools}。", "{topic}のためのツール群（{tools} など）。"),
    "pt": ("Servidor MCP para {topic}: {tools}.", "Ferramentas de {topic}, incluindo {tools}."),
}
_NESTED_DESCRIPTION: Mapping[str, str] = {
    "en": "Optional settings.", "zh": "可选设置。", "es": "Opciones adicionales.", "de": "Optionale Einstellungen.",
    "fr": "Options facultatives.", "ja": "任意の設定。", "pt": "Opções adicionais.",
}
_NESTED_NAMES = ("options", "filters", "settings", "config", "params")
_SERVER_PATTERNS = ("{w}-mcp", "mcp-{w}", "{w}-mcp-server", "{W} MCP Server", "{W} MCP", "MCP {W}", "{w}_mcp",
                    "{w}-server", "{W} API", "{w}-tools", "{W} Tools", "{W} Server", "mcp-server-{w}")
_QUALIFIERS = ("open", "simple", "pro", "lite", "fast", "cloud", "local", "smart", "easy", "ai", "community",
               "unofficial", "go", "py", "rs", "ts", "node", "hub", "kit", "plus", "next", "x", "v2", "free",
               "super", "mini", "auto", "quick", "deep", "my")
_FILLER_WORDS = frozenset({"mcp", "server", "servers", "the", "a", "an", "api", "for", "of", "and", "by", "tool",
                           "tools", "service", "model", "context", "protocol", "with", "to", "in"})
# Verbs of tool names, and the synonyms a variant may take instead.
_NAME_VERBS: Mapping[str, tuple[str, ...]] = {
    "get": ("fetch", "retrieve", "obtain", "query", "lookup"), "fetch": ("get", "retrieve", "load"),
    "retrieve": ("get", "fetch", "obtain"), "search": ("find", "lookup", "query"), "find": ("search", "lookup", "locate"),
    "list": ("get", "enumerate", "show"), "create": ("add", "make", "new", "generate"), "add": ("create", "insert"),
    "delete": ("remove", "drop", "erase"), "remove": ("delete", "drop"), "update": ("modify", "edit", "change"),
    "calculate": ("compute", "calc", "estimate", "determine"), "compute": ("calculate", "calc"),
    "check": ("verify", "validate"), "send": ("post", "submit", "dispatch"), "convert": ("transform", "change"),
    "generate": ("create", "make", "produce"), "analyze": ("analyse", "examine", "evaluate"),
    "book": ("reserve",), "reserve": ("book",), "read": ("load", "open"), "write": ("save", "store"),
    "run": ("execute", "start"), "execute": ("run",), "show": ("display", "list"), "predict": ("forecast",),
    "set": ("configure", "update"), "count": ("tally",), "is": ("check",),
}
# Words and phrases of descriptions, and their synonyms (matched case-insensitively, first letter kept).
_WORD_SWAPS: Mapping[str, tuple[str, ...]] = {
    "retrieve": ("get", "fetch", "obtain", "look up"), "retrieves": ("gets", "fetches", "obtains", "looks up"),
    "get": ("retrieve", "fetch", "obtain"), "gets": ("retrieves", "fetches", "obtains"), "fetch": ("get", "retrieve"),
    "fetches": ("gets", "retrieves"), "calculate": ("compute", "work out", "determine"),
    "calculates": ("computes", "works out", "determines"), "search for": ("look for", "find"),
    "create": ("make", "generate"), "creates": ("makes", "generates"), "check": ("verify", "validate"),
    "find": ("locate", "look up"), "finds": ("locates", "looks up"), "generate": ("create", "produce"),
    "generates": ("creates", "produces"), "update": ("modify", "change"), "updates": ("modifies", "changes"),
    "analyze": ("analyse", "examine"), "delete": ("remove", "erase"), "send": ("submit", "dispatch"),
    "convert": ("transform",), "returns": ("gives back", "outputs", "provides"), "return": ("give back", "output"),
    "takes": ("accepts", "receives"), "takes in": ("accepts", "receives"), "information": ("details", "data", "info"),
    "details": ("information", "data"), "specified": ("given", "provided"), "given": ("specified", "provided"),
    "provided": ("given", "specified"), "specific": ("particular", "given"), "based on": ("according to", "using"),
    "current": ("latest",), "list of": ("set of", "collection of"), "e.g.": ("for example", "such as"),
    "number of": ("count of",), "this tool": ("this function", "this API", "this endpoint"),
    "this method": ("this function", "this tool"), "this function": ("this tool", "this method"),
    "the result": ("the output",), "using": ("with", "via"), "allows you to": ("lets you", "helps you"),
}
_SWAP_PATTERN = re.compile(
    r"(?<![\w-])(" + "|".join(re.escape(k) for k in sorted(_WORD_SWAPS, key=len, reverse=True)) + r")(?![\w-])",
    re.IGNORECASE,
)
_SENTENCE_END = re.compile(r"(?<=[.!?。！？])\s+")
_CAMEL_WORDS = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")
_DEF = re.compile(r"def\s+([A-Za-z_]\w*)\s*\((.*?)\)\s*:", re.DOTALL)
_RETURN = re.compile(r"^\s*return\s+(.*?)\s*$", re.MULTILINE)
_KANA = re.compile(r"[\u3040-\u30ff]")
_HANGUL = re.compile(r"[\uac00-\ud7af]")
_HAN = re.compile(r"[\u4e00-\u9fff]")
_VIETNAMESE = re.compile(r"[ăđơưạảẹẻẽệịọỏộớờởỡợụủứừửữựỳỷỹỵ]", re.IGNORECASE)
# JSON Schema types for the type names the sources use.
_TYPES: Mapping[str, str] = {
    "str": "string", "string": "string", "text": "string", "enum": "string", "date": "string", "datetime": "string",
    "int": "integer", "integer": "integer", "long": "integer", "float": "number", "double": "number",
    "number": "number", "bool": "boolean", "boolean": "boolean", "dict": "object", "object": "object",
    "map": "object", "list": "array", "array": "array", "tuple": "array", "set": "array", "null": "null",
}
_SCHEMA_KEYWORDS = ("description", "enum", "default", "format", "minimum", "maximum", "pattern", "title", "example")
_ALPACA_PARAMETER = re.compile(r"^\s*(required|optional)\.\s*([\w\[\], ]+?)\.\s*(.*)$", re.IGNORECASE | re.DOTALL)


# ---------------------------------------------------------------------------------------------
# The source parts


@dataclass(frozen=True)
class _Part:
    """One real tool, read into the generator: its texts, its inputs as JSON Schema, where it belongs."""

    key: str
    source: str
    name: str
    description: str
    sentences: tuple[str, ...]
    schema: Mapping[str, Any]
    family: str
    group: str
    style: str = "mcp"  # "mcp", or "python" (Toolink's func_description shape)
    output: Mapping[str, Any] | None = None
    returns: str = ""  # python style: what the signature returns
    original: Mapping[str, Any] | None = None  # the tool exactly as its benchmark gives it
    server_description: str = ""


@dataclass
class _Family:
    label: str
    parts: list[int] = field(default_factory=list)
    groups: dict[str, list[int]] = field(default_factory=dict)
    details: dict[str, list[str]] = field(default_factory=dict)  # group → later sentences of its tools
    group_names: list[str] = field(default_factory=list)
    group_cum: list[int] = field(default_factory=list)

    def seal(self) -> None:
        self.group_names = list(self.groups)
        total = 0
        self.group_cum = []
        for name in self.group_names:
            total += len(self.groups[name])
            self.group_cum.append(total)


@dataclass(frozen=True)
class _Pool:
    parts: tuple[_Part, ...]
    families: Mapping[str, _Family]
    family_names: tuple[str, ...]
    family_cum: tuple[int, ...]
    by_key: Mapping[str, int]



def _sentences(text: str) -> tuple[str, ...]:
    return tuple(s.strip() for s in _SENTENCE_END.split(text.strip()) if s.strip())


def _text(value: Any) -> str:
    return value.strip() if isinstance(value, str) else ""


def _schema_type(value: Any) -> str | None:
    if not isinstance(value, str):
        return None
    key = value.strip().lower()
    return _TYPES.get(key, "string" if key else None)


def _names(value: Any) -> list[str]:
    """A JSON Schema ``required`` list's names (anything else, e.g. a per-property ``true``, gives none)."""
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


def _property(spec: Any) -> dict[str, Any]:
    """One parameter's spec, whatever shape the source gave it, as a JSON Schema (nesting kept)."""
    if isinstance(spec, str):
        match = _ALPACA_PARAMETER.match(spec)
        if match is None:
            return {"type": "string", "description": spec.strip()}
        kind = _schema_type(match.group(2).split("[")[0]) or "string"
        return {"type": kind, "description": match.group(3).strip()}
    if not isinstance(spec, Mapping):
        return {"type": "string"}
    out: dict[str, Any] = {}
    inner = spec.get("schema") if isinstance(spec.get("schema"), Mapping) else None
    schema_type = _schema_type(spec.get("type")) or (_schema_type(inner.get("type")) if inner else None)
    if schema_type is not None:
        out["type"] = schema_type
    for key in _SCHEMA_KEYWORDS:
        value = spec.get(key, inner.get(key) if inner else None)
        if value is not None and value != "":
            out[key] = value
    properties = spec.get("properties")
    if isinstance(properties, Mapping) and properties:
        out["properties"] = {str(k): _property(v) for k, v in properties.items()}
        required = [r for r in _names(spec.get("required")) if r in out["properties"]]
        if required:
            out["required"] = required
        out.setdefault("type", "object")
    items = spec.get("items")
    if isinstance(items, Mapping):
        out["items"] = _property(items)
    return out


def _input_schema(parameters: Any) -> dict[str, Any]:
    """A source tool's parameters (JSON Schema, RapidAPI lists, OpenAPI lists, name → spec) as one
    JSON Schema object."""
    properties: dict[str, Any] = {}
    required: list[str] = []
    if isinstance(parameters, Mapping) and isinstance(parameters.get("properties"), Mapping):
        properties = {str(k): _property(v) for k, v in parameters["properties"].items()}
        required = [r for r in _names(parameters.get("required")) if r in properties]
    elif isinstance(parameters, Mapping) and ("required_parameters" in parameters or "optional_parameters" in parameters):
        for key, is_required in (("required_parameters", True), ("optional_parameters", False)):
            for item in parameters.get(key) or []:
                if isinstance(item, Mapping) and _text(item.get("name")):
                    name = _text(item["name"])
                    properties[name] = _property(item)
                    if is_required:
                        required.append(name)
    elif isinstance(parameters, list):
        for item in parameters:
            if isinstance(item, Mapping) and _text(item.get("name")):
                name = _text(item["name"])
                properties[name] = _property(item)
                if item.get("required") is True:
                    required.append(name)
    elif isinstance(parameters, Mapping):
        for key, spec in parameters.items():
            properties[str(key)] = _property(spec)
            if isinstance(spec, Mapping) and spec.get("required") is True:
                required.append(str(key))
            elif isinstance(spec, str) and spec.strip().lower().startswith("required"):
                required.append(str(key))
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = list(dict.fromkeys(required))
    return schema


def _output_schema(response: Any) -> dict[str, Any] | None:
    """A response documented as ``{field: {type, description}}`` as a JSON Schema; else None."""
    if not isinstance(response, Mapping) or not response:
        return None
    if not all(isinstance(v, Mapping) and ("type" in v or "description" in v) for v in response.values()):
        return None
    return {"type": "object", "properties": {str(k): _property(v) for k, v in response.items()}}


def _first_word(name: str) -> str:
    words = _split_identifier(name)[0]
    return words[0] if words else name


def _train_parts(path: Path) -> Iterator[_Part]:
    """``train/tools.jsonl``: tool documents only (its queries are never read)."""
    for _, record in read_jsonl(path):
        yield from _train_record(record)


def _train_record(record: Mapping[str, Any]) -> Iterator[_Part]:
    source, tool_id, name = _text(record.get("source")), _text(record.get("id")), _text(record.get("name"))
    server = _text(record.get("server"))
    path = tool_id.split("/")
    if not name or not tool_id:
        return
    if source == "tooleyes":  # a toolkit: its functions are the tools, the toolkit their server
        family = path[1] if len(path) > 2 else "Toolkits"
        for function in record.get("parameters") or []:
            if isinstance(function, Mapping) and _text(function.get("name")):
                description = _text(function.get("description"))
                yield _Part(f"train:{tool_id}#{function['name']}", "train/tooleyes", _text(function["name"]), description,
                            _sentences(description), _input_schema(function.get("parameters")), family, name)
        return
    if source == "seal-tools":
        family, group = server.split("/")[0], server
    elif source == "stabletoolbench":
        family, group = (path[1] if len(path) > 2 else "RapidAPI"), server or name
    elif source == "restbench":
        family = group = server or "REST"
    elif source == "toolalpaca":
        family, group = "Public APIs", server or name
    elif source == "nestful-v1":
        family, group = "Services", server or _first_word(name)
    else:  # bfcl-v4: functions without a server are grouped by their module or leading word
        family = "Functions"
        group = server or (name.split(".")[0] if "." in name else _first_word(name))
    description = _text(record.get("description"))
    yield _Part(f"train:{tool_id}", f"train/{source}", name, description, _sentences(description),
                _input_schema(record.get("parameters")), family or "Tools", group or name,
                output=_output_schema(record.get("response")))


def _toolink_topic(names: Sequence[str]) -> str:
    """What a run of Toolink functions is about: the two commonest words of their names (no verbs)."""
    words = Counter(w for name in names for w in _split_identifier(name)[0] if w not in _NAME_VERBS and len(w) > 2)
    return " ".join(w for w, _ in words.most_common(2)) or "python"


def _toolink_parts(path: Path) -> Iterator[_Part]:
    records = read_json(path)
    if not isinstance(records, list):
        raise CatalogError(f"{path}: expected a list of ToolRet records")
    read: list[tuple[str, dict[str, Any], list[str], str]] = []
    for index, record in enumerate(records):
        doc = record.get("documentation") if isinstance(record, dict) else None
        signature = _text(doc.get("func_description")) if isinstance(doc, dict) else ""
        found = _DEF.search(signature)
        if not isinstance(doc, dict) or not _text(record.get("id")) or not (_text(doc.get("name")) or found):
            raise CatalogError(f"{path}: record {index} is not a Toolink tool (id, documentation with a name)")
        if not _text(doc.get("name")) and found:  # one tool names itself only in its signature
            doc = {**doc, "name": found.group(1)}
        args = [a.strip() for a in found.group(2).split(",") if a.strip()] if found else []
        returned = _RETURN.search(signature)
        read.append((str(record["id"]), doc, args, returned.group(1) if returned else "..."))
    # Toolink lists the functions of one task together: 20 consecutive ones make a group
    topics = [_toolink_topic([_text(doc["name"]) for _, doc, _, _ in read[start:start + 20]])
              for start in range(0, len(read), 20)]
    for index, (tool_id, doc, args, returns) in enumerate(read):
        description = _text(doc.get("description"))
        yield _Part(f"toolink:{tool_id}", "toolink", _text(doc["name"]), description, _sentences(description),
                    {"type": "object", "properties": {a: {} for a in args}}, "Python functions",
                    f"{topics[index // 20]} ({index // 20})", style="python", returns=returns, original=doc)


def _apibank_parts(path: Path) -> Iterator[_Part]:
    records = read_json(path)
    if not isinstance(records, list):
        raise CatalogError(f"{path}: expected a list of ToolRet records")
    for record in records:
        doc = record.get("documentation") if isinstance(record, dict) else None
        if not isinstance(doc, dict) or not _text(doc.get("name")):
            continue
        description = _text(doc.get("description")).strip('"')
        category = _text(doc.get("category")) or "API-Bank"
        yield _Part(f"apibank:{record.get('id')}", "apibank", _text(doc["name"]), description, _sentences(description),
                    _input_schema(doc.get("parameters")), category, category,
                    output=_output_schema(doc.get("responses")))


def _livemcpbench_servers(path: Path) -> list[dict[str, Any]]:
    servers = read_json(path)
    if not isinstance(servers, list) or not all(isinstance(s, dict) and _text(s.get("name")) for s in servers):
        raise CatalogError(f"{path}: expected a list of MCP servers with names")
    return servers


def _server_tool_lists(server: Mapping[str, Any]) -> list[list[Any]]:
    tools = server.get("tools")
    if isinstance(tools, list):
        return [tools]
    if isinstance(tools, Mapping):
        return [v["tools"] for v in tools.values() if isinstance(v, Mapping) and isinstance(v.get("tools"), list)]
    return []


def _server_tools(server: Mapping[str, Any]) -> list[dict[str, Any]]:
    return [t for tools in _server_tool_lists(server) for t in tools if isinstance(t, dict) and _text(t.get("name"))]


def _livemcpbench_parts(path: Path) -> Iterator[_Part]:
    for server in _livemcpbench_servers(path):
        name = _text(server["name"])
        for tool in _server_tools(server):
            description = _text(tool.get("description"))
            given = tool.get("inputSchema")
            schema: Mapping[str, Any] = given if isinstance(given, dict) else {"type": "object"}
            yield _Part(f"livemcpbench:{tool_id_for(name, tool['name'])}", "livemcpbench", _text(tool["name"]),
                        description, _sentences(description), schema, _text(server.get("category")) or "MCP", name,
                        original=tool, server_description=_text(server.get("description")))


@lru_cache(maxsize=2)
def _pool(datasets: str) -> _Pool:
    root = Path(datasets)
    parts = [
        *_train_parts(root / "train" / "tools.jsonl"),
        *_toolink_parts(root / "toolret" / "toolink" / "tools.json"),
        *_apibank_parts(root / "toolret" / "apibank" / "tools.json"),
        *_livemcpbench_parts(root / "livemcpbench" / "tools.json"),
    ]
    families: dict[str, _Family] = {}
    by_key: dict[str, int] = {}
    for index, part in enumerate(parts):
        if part.key in by_key:
            continue
        by_key[part.key] = index
        family = families.setdefault(part.family, _Family(part.family))
        family.parts.append(index)
        family.groups.setdefault(part.group, []).append(index)
        details = family.details.setdefault(part.group, [])
        if len(details) < 40:
            details.extend(s for s in part.sentences[1:3] if 20 <= len(s) <= 200 and s not in details)
    names = tuple(families)
    cum: list[int] = []
    total = 0
    for name in names:
        families[name].seal()
        total += len(families[name].parts)
        cum.append(total)
    return _Pool(tuple(parts), families, names, tuple(cum), by_key)


# ---------------------------------------------------------------------------------------------
# Names, texts and parameters of variants


def _split_identifier(name: str) -> tuple[list[str], str]:
    """An identifier's words (lower case) and its style: snake, kebab, camel, pascal or other."""
    if "_" in name and " " not in name:
        return [w.lower() for w in name.split("_") if w], "snake"
    if "-" in name and " " not in name:
        return [w.lower() for w in name.split("-") if w], "kebab"
    if re.fullmatch(r"[A-Za-z][A-Za-z0-9]*", name):
        words = [w.lower() for w in _CAMEL_WORDS.findall(name)]
        return words, "pascal" if name[0].isupper() else "camel"
    if re.fullmatch(r"[A-Za-z0-9]+(?: [A-Za-z0-9]+)+", name):
        return name.lower().split(), "space"
    return [], "other"


def _join_identifier(words: Sequence[str], style: str) -> str:
    if style == "snake":
        return "_".join(words)
    if style == "kebab":
        return "-".join(words)
    if style == "space":
        return " ".join(w[:1].upper() + w[1:] for w in words)
    titled = "".join(w[:1].upper() + w[1:] for w in words)
    return titled if style == "pascal" else titled[:1].lower() + titled[1:]


def _vary_name(name: str, rng: random.Random, *, must: bool) -> str:
    """The name kept (unless ``must``), its verb swapped for a synonym, or its naming style changed."""
    head, dot, tail = name.rpartition(".")
    words, style = _split_identifier(tail)
    roll = rng.random()
    if not words or (roll < 0.45 and not must):
        return name
    if words[0] in _NAME_VERBS and roll < 0.8:
        words = [rng.choice(_NAME_VERBS[words[0]]), *words[1:]]
        new = _join_identifier(words, style)
    else:
        styles = [s for s in ("snake", "camel", "kebab", "pascal", "space") if s != style]
        new = _join_identifier(words, rng.choice(styles) if len(words) > 1 else style)
        if new == tail:
            new = _join_identifier([rng.choice(_QUALIFIERS), *words], style)
    return f"{head}{dot}{new}"


def _swap_words(text: str, rng: random.Random, rate: float, limit: int = 3) -> str:
    done = 0

    def swap(match: re.Match[str]) -> str:
        nonlocal done
        found = match.group(0)
        if done >= limit or rng.random() >= rate:
            return found
        done += 1
        replacement = rng.choice(_WORD_SWAPS[found.lower()])
        return replacement[:1].upper() + replacement[1:] if found[:1].isupper() else replacement

    return _SWAP_PATTERN.sub(swap, text)


def _language_of(text: str) -> str:
    if _KANA.search(text):
        return "ja"
    if _HANGUL.search(text):
        return "ko"
    if _HAN.search(text):
        return "zh"
    if _VIETNAMESE.search(text):
        return "vi"
    return "en"


@dataclass(frozen=True)
class _Context:
    """The server a tool is made for."""

    name: str
    topic: str
    language: str
    group: Sequence[int]
    family: _Family
    details: Sequence[str] = ()  # later sentences of the group's tools, to recombine


def _vary_description(part: _Part, ctx: _Context, rng: random.Random, *, force: bool) -> tuple[str, str | None]:
    """A paraphrase of the part's description, and the language of any boilerplate added. A tool
    documented without a description stays without one."""
    sentences = list(part.sentences)
    if not sentences:
        return "", None
    if len(sentences) > 2 and rng.random() < 0.3:
        del sentences[rng.randrange(1, len(sentences))]
    if len(sentences) > 2 and rng.random() < 0.2:
        rest = sentences[1:]
        rng.shuffle(rest)
        sentences = [sentences[0], *rest]
    if ctx.details and rng.random() < (0.4 if force else 0.2):
        borrowed = rng.choice(ctx.details)
        if borrowed not in sentences:
            sentences.append(borrowed)
    text = _swap_words(_joined(sentences), rng, 0.8 if force else 0.5)
    english = ctx.language == "en"
    language: str | None = None
    if rng.random() < (0.45 if force else 0.25) or not english and rng.random() < 0.85:
        language = ctx.language if not english or rng.random() < 0.9 else rng.choice(list(BOILERPLATE))
        phrase = rng.choice(BOILERPLATE[language]).format(topic=ctx.topic, server=ctx.name)
        text = _joined([phrase, text] if text and rng.random() < 0.25 else [text, phrase])
    return text, language


def _joined(sentences: Sequence[str]) -> str:
    """Sentences as one text, a full stop added where one ends without punctuation."""
    out = ""
    for sentence in sentences:
        if not sentence:
            continue
        if out and out[-1].isalnum():
            out += "。" if _HAN.match(out[-1]) or _KANA.match(out[-1]) else "."
        out = f"{out} {sentence}" if out else sentence
    return out


def _vary_schema(part: _Part, ctx: _Context, pool: _Pool, rng: random.Random) -> dict[str, Any]:
    schema = dict(part.schema)
    raw = schema.get("properties")
    properties: dict[str, Any] = dict(raw) if isinstance(raw, Mapping) else {}
    required = [r for r in _names(schema.get("required")) if r in properties]
    if ctx.group and rng.random() < 0.25:
        donor = pool.parts[rng.choice(ctx.group)].schema.get("properties")
        if isinstance(donor, Mapping) and donor:
            for name in rng.sample(list(donor), min(len(donor), rng.randint(1, 2))):
                properties.setdefault(name, donor[name])
    optional = [p for p in properties if p not in required]
    if optional and len(properties) > 1 and rng.random() < 0.2:
        del properties[rng.choice(optional)]
        optional = [p for p in properties if p not in required]
    scalar = [p for p in optional if isinstance(properties[p], Mapping) and properties[p].get("type") != "object"]
    if part.style == "mcp" and len(scalar) >= 2 and rng.random() < 0.15:
        nested_name = next((n for n in rng.sample(_NESTED_NAMES, len(_NESTED_NAMES)) if n not in properties), None)
        if nested_name is not None:
            moved = set(rng.sample(scalar, min(len(scalar), rng.randint(2, 4))))
            nested = {k: v for k, v in properties.items() if k in moved}
            properties = {k: v for k, v in properties.items() if k not in moved}
            properties[nested_name] = {"type": "object", "description": _NESTED_DESCRIPTION[ctx.language],
                                       "properties": nested}
    if len(properties) > 1 and rng.random() < 0.2:
        items = list(properties.items())
        rng.shuffle(items)
        properties = dict(items)
    schema["properties"] = properties
    if required:
        schema["required"] = [r for r in required if r in properties]
    else:
        schema.pop("required", None)
    return schema


def _python_doc(name: str, description: str, args: Sequence[str], returns: str) -> dict[str, Any]:
    signature = f"```python\ndef {name}({', '.join(args)}):\n    ...\n    return {returns}\n```"
    return {"func_description": signature, "name": name, "description": description}


def _render(part: _Part, name: str, description: str, schema: Mapping[str, Any]) -> dict[str, Any]:
    """A tool document in the part's own shape."""
    if part.style == "python":
        return _python_doc(name, description, list(schema.get("properties", {})), part.returns)
    tool: dict[str, Any] = {"name": name, "description": description, "inputSchema": schema}
    if part.original is not None:  # keep the source's other keys (LiveMCPBench's annotations, outputSchema)
        for key, value in part.original.items():
            if key not in tool:
                tool[key] = value
    elif part.output is not None:
        tool["outputSchema"] = part.output
    return tool


def _as_is(part: _Part) -> dict[str, Any]:
    if part.original is not None:
        return copy.deepcopy(dict(part.original))
    return _render(part, part.name, part.description, part.schema)


# ---------------------------------------------------------------------------------------------
# Servers: names, descriptions and languages


class _ServerNames:
    """Server names recombined from real ones, never two with the same slug (the agent id)."""

    def __init__(self) -> None:
        self._used: set[str] = set()

    def reserve(self, name: str) -> None:
        self._used.add(slugify(name))

    def new(self, topic: str, rng: random.Random, *, qualified: bool = False) -> str:
        found = [w for w in re.findall(r"[^\W_]+", _topic(topic)) if w.lower() not in _FILLER_WORDS]
        words = list(dict.fromkeys(w.lower() for w in found))[:3] or ["tools"]
        lower = [w.lower() for w in words]
        for attempt in range(12):
            parts = list(lower)
            if qualified or attempt > 0 or rng.random() < 0.3:
                qualifier = rng.choice(_QUALIFIERS)
                parts = [qualifier, *parts] if rng.random() < 0.5 else [*parts, qualifier]
            if attempt >= 8:
                parts.append(str(rng.randint(2, 99)))
            pattern = rng.choice(_SERVER_PATTERNS)
            name = pattern.format(w="-".join(parts), W=" ".join(p[:1].upper() + p[1:] for p in parts))
            if "_" in pattern:
                name = name.replace("-", "_")
            slug = slugify(name)
            if slug and slug not in self._used:
                self._used.add(slug)
                return name
        serial = len(self._used)
        name = f"{'-'.join(lower)}-mcp-{serial}"
        while slugify(name) in self._used:
            serial += 1
            name = f"{'-'.join(lower)}-mcp-{serial}"
        self._used.add(slugify(name))
        return name


def _topic(group: str) -> str:
    """A group's name as a topic: its last ``/`` segment (``Chemical Engineering/Forensic engineering``
    → ``Forensic engineering``), without a ``(n)`` serial."""
    return re.sub(r"\s*\(\d+\)$", "", group.split("/")[-1]).strip() or group


def _template(rng: random.Random, language: str, topic: str, tool_names: Sequence[str]) -> str:
    shown = ", ".join(tool_names[:3])
    return rng.choice(_SERVER_TEMPLATES[language]).format(topic=topic, tools=shown, n=len(tool_names))


def _language(rng: random.Random) -> str:
    roll = rng.random()
    for language, share in _LANGUAGES:
        roll -= share
        if roll < 0:
            return language
    return "en"
