"""Catalogs of N tools that look like real ones, with a benchmark's tools and queries inside (needles).

:func:`generate_catalog` writes, from a seed and byte for byte the same for the same arguments, an MCP
catalog of exactly ``tools`` tools (1k … 1M) grouped into servers, and the **needle set**: the real
tools of a benchmark (Toolink or LiveMCPBench) placed inside it, with the benchmark's queries and
their relevance judgements rewritten to the catalog's tool ids, so that NDCG@10 and tool R@5 can be
measured at any catalog size with the evaluation code (:meth:`ScaleCatalog.benchmark`).

**The format** is the one ``toolsift ingest`` reads as ``mcp`` (LiveMCPBench's ``tools.json``): a JSON
list of servers ``{name, description, category, tools: [...]}``; every server becomes an agent (the
join field's parent) and its tools its children, with the id ``<slug of server name>/<tool name>``.
Tools are MCP tools ``{name, description, inputSchema}`` (JSON Schema, nested objects kept), plus
``outputSchema`` where the source documents a structured response; tools taken from Toolink keep
Toolink's own shape (``func_description`` with the Python signature, ``name``, ``description``).

**What it is made of.** Tool documents only, never a query, from ``../shared/datasets``:
``train/tools.jsonl`` (8,996 tools of seven public benchmarks; ToolEyes toolkits split into their
functions), Toolink and APIBank (ToolRet) and LiveMCPBench (70 MCP servers). Each source tool is a
*part* with a *family* (a broad topic: the Seal-Tools domain, the RapidAPI category, the LiveMCPBench
category …) and a *group* (its real server, toolkit or API; Toolink: 20 consecutive ids). 11,844
parts in all (one Toolink tool with an empty name is named from its signature).

**The needles.** ``needles="toolink"``: the gold tools of the benchmark's queries (all 497, or a
seeded sample of ``queries``), their documentation exactly as Toolink gives it, grouped in id order
into servers named after their tools; a needle's id changes to ``<server>/<name>`` (the manifest maps
every Toolink id to it, and the qrels use the new ids). ``needles="livemcpbench"``: every server that
owns a gold tool, exactly as ``tools.json`` gives it, so tool ids are the ones ``toolsift eval`` on
LiveMCPBench uses and the qrels are the benchmark's own (``load_livemcpbench_benchmark``). Needle
servers sit at seeded places among the others. A needle server with fewer than 5 tools is padded
with generated tools of its family (they are distractors).

**The distractors** fill the catalog to exactly ``tools`` tools, server by server. Server sizes are
drawn from a log-normal around 9 truncated to 5–50 (mean about 13), the last ones adjusted so the
total is exact.
A server takes one family (chosen in proportion to its size) and one group in it, and draws its
tools from that group first, then from the rest of the family. The first time a part is drawn it is
used as it is (a real tool, on a server of a recombined name); every later draw is a **variant**:

* name: kept (45 %; so the same tool name is on several servers), its verb swapped for a synonym
  (``get_weather`` → ``fetch_weather``), or its naming style changed (``getWeather`` ↔ ``get_weather``);
* description: the part's sentences, one of the later ones sometimes dropped or reordered, sometimes
  a later sentence of another tool of the same group appended; words and verbs swapped for synonyms
  from a fixed table (Retrieve → Get / Fetch / Obtain, information → details, takes → accepts …);
  sometimes a boilerplate sentence modelled on ones the data holds ("In terms of {topic}.", "This
  tool belongs to the {server} API.", "Parameters may be combined as required.", "The result is in
  JSON format.", …), in the server's language: English, or (about one server in six) Chinese,
  Spanish, German, French, Japanese or Portuguese, translated by hand
  (:data:`~toolsift.bench.scale_text.BOILERPLATE`);
* parameters: the part's own, sometimes with one or two borrowed from a tool of the same group,
  one optional one dropped, the order changed, or two to four optional ones nested into an object
  (``options``, ``filters`` …).

A variant's description is regenerated (at most three times, with more changes) when any tool
before it has the same one, so descriptions are distinct almost everywhere
(``manifest["distinct_descriptions"]``, ``["duplicate_descriptions"]``); a tool the source documents
without a description (``["empty_descriptions"]``, mostly RapidAPI endpoints) keeps none. Non-English text comes from the real tools in other
languages (LiveMCPBench's Chinese servers, Vietnamese and Spanish tools of the training set) and
from the translated boilerplate; each tool's language is counted in ``manifest["languages"]``
(the boilerplate's language, else the description's script: ``zh``, ``ja``, ``ko``, ``vi``, ``en``).
Server names recombine the group's words with patterns and qualifiers of real MCP server names
(``{w}-mcp``, ``mcp-server-{w}``, ``{W} MCP Server``, ``open-``, ``-lite``, …), never twice the
same slug; server descriptions are the real server's (LiveMCPBench) or a template in the server's
language naming its topic and first tools.

**Near-duplicates make it harder, not easier.** A needle's part is never used as it is again: a
variant of a gold tool always differs from it (name or description), has another id and is never
relevant. A catalog of N tools draws each part about N / 11,800 times, needles included, so gold
tools get variants like any other tool, and more from **forks**: about
``fork_share`` (1 %) of the distractor servers are a fork of a needle server (chosen in proportion
to its gold tools), holding variants of its gold tools and most of its other tools under another
server name, as registries hold many copies of popular servers. ``manifest["near_duplicates"]``
lists every variant of every gold tool.

The file is streamed one server at a time: memory holds the source parts, the servers' names and
an 8-byte hash per description, never the catalog. Needle servers are padded before any distractor
is made, and each distractor server has a random generator of its own, so a larger catalog of the
same seed holds a smaller one's servers (all but the last one or two).

The vocabulary, the source parts and the helpers that vary a tool's texts are
:mod:`~toolsift.bench.scale_text`'s; this module plans the servers, places the needles, makes the tools
and writes the files.

Example:
    >>> scale = generate_catalog("scale-10k", tools=10_000, needles="toolink", seed=0)
    >>> scale.benchmark().qrels  # {query id: {catalog tool id: 1}}
"""

from __future__ import annotations

import bisect
import copy
import csv
import hashlib
import json
import math
import os
import random
import re
import time
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from toolsift.errors import CatalogError
from toolsift.ingest.benchmarks import Benchmark, load_livemcpbench_benchmark, load_toolret_benchmark, read_json
from toolsift.ingest.loaders.mcp import tool_id_for
from toolsift.bench.scale_text import (
    BOILERPLATE,
    _as_is,
    _Context,
    _Family,
    _language,
    _language_of,
    _livemcpbench_servers,
    _Pool,
    _pool,
    _render,
    _server_tool_lists,
    _server_tools,
    _ServerNames,
    _swap_words,
    _template,
    _text,
    _toolink_topic,
    _topic,
    _vary_description,
    _vary_name,
    _vary_schema,
)

__all__ = [
    "COPIES_FILE",
    "GENERATOR",
    "NEEDLE_SETS",
    "CATALOG_FORMAT",
    "MIN_SERVER_TOOLS",
    "MAX_SERVER_TOOLS",
    "DEFAULT_FORK_SHARE",
    "ScaleCatalog",
    "generate_catalog",
    "load_scale_catalog",
    "default_datasets_dir",
]

#: The benchmarks whose tools and queries can be the needle set.
NEEDLE_SETS: tuple[str, ...] = ("toolink", "livemcpbench")
#: The ``toolsift ingest --format`` of the generated catalog.
CATALOG_FORMAT = "mcp"
#: Every server holds at least this many tools …
MIN_SERVER_TOOLS = 5
#: … and at most this many.
MAX_SERVER_TOOLS = 50
#: The share of distractor servers that are forks of a needle server.
DEFAULT_FORK_SHARE = 0.01

CATALOG_FILE = "catalog.json"
QUERIES_FILE = "queries.jsonl"
QRELS_FILE = "qrels/test.tsv"
MANIFEST_FILE = "manifest.json"
#: Groups of tools made from the same source tool (its first use and its variants), two or more each.
COPIES_FILE = "copies.json"
_GENERATOR_VERSION = 2
#: What a manifest names as its maker: a catalog another version wrote is written again, not reused.
GENERATOR = f"toolsift.bench.scale_catalog v{_GENERATOR_VERSION}"



# ---------------------------------------------------------------------------------------------
# The result


@dataclass(frozen=True)
class ScaleCatalog:
    """A generated catalog and its needle set, as written under ``folder``.

    Args:
        folder: where the files are: ``catalog.json`` (the MCP catalog), ``queries.jsonl`` (BEIR
            queries: ``{_id, text, metadata}``), ``qrels/test.tsv`` (BEIR qrels: query id, catalog
            tool id, grade) and ``manifest.json`` (the arguments, counts and needle ids).
        needles: the benchmark whose tools and queries are the needles (:data:`NEEDLE_SETS`).
        seed: the seed it was generated from.
        tools: tools in the catalog (exactly what was asked for).
        servers: servers (agents) in the catalog.
        needle_tools: tools of the needle servers that are the benchmark's own (the rest is padding).
        query_count: queries with at least one relevant tool.
        seconds: how long generating it took (0 when read back with :func:`load_scale_catalog`).
    """

    folder: Path
    needles: str
    seed: int
    tools: int
    servers: int
    needle_tools: int
    query_count: int
    seconds: float = 0.0

    @property
    def catalog_path(self) -> Path:
        """The catalog file, for ``toolsift ingest PATH --format mcp``."""
        return self.folder / CATALOG_FILE

    @property
    def queries_path(self) -> Path:
        return self.folder / QUERIES_FILE

    @property
    def qrels_path(self) -> Path:
        return self.folder / QRELS_FILE

    @property
    def manifest_path(self) -> Path:
        return self.folder / MANIFEST_FILE

    def queries(self) -> dict[str, str]:
        """Query id → text, in the benchmark's order."""
        return {qid: text for qid, text, _ in _read_queries(self.queries_path)}

    def qrels(self) -> dict[str, dict[str, int]]:
        """Query id → catalog tool id → grade (the ir_measures / BEIR shape)."""
        return _read_qrels(self.qrels_path)

    def copy_groups(self) -> dict[str, int]:
        """Tool id → its copy group (tools made from one source tool: the first use, its variants and,
        for a gold tool, the needle itself); tools of no group (made once) are absent."""
        path = self.folder / COPIES_FILE
        groups = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else []
        return {tool_id: number for number, group in enumerate(groups) for tool_id in group}

    def manifest(self) -> dict[str, object]:
        """What ``manifest.json`` holds: the arguments, the counts, ``needle_ids`` (benchmark id →
        catalog id) and ``near_duplicates`` (gold tool id → ids of its variants)."""
        data = _read_json_object(self.manifest_path)
        return dict(data)

    def benchmark(self) -> Benchmark:
        """The needle set as a :class:`~toolsift.ingest.benchmarks.Benchmark` over the catalog file.

        ``extra`` holds ``metadata`` (query id → the benchmark's instruction or steps),
        ``needle_ids`` (benchmark tool id → catalog id) and ``catalog_size``.
        """
        queries: dict[str, str] = {}
        metadata: dict[str, Mapping[str, Any]] = {}
        for qid, text, meta in _read_queries(self.queries_path):
            queries[qid] = text
            metadata[qid] = meta
        manifest = self.manifest()
        return Benchmark(
            name=f"{self.needles}-{self.tools}",
            path=self.folder,
            format="scale",
            queries=queries,
            qrels=self.qrels(),
            catalog_path=self.catalog_path,
            catalog_format=CATALOG_FORMAT,
            splits={"test": list(queries)},
            extra={"metadata": metadata, "needle_ids": manifest.get("needle_ids", {}), "catalog_size": self.tools},
        )


def default_datasets_dir() -> Path:
    """``../shared/datasets``: beside the working directory, else beside the repository.

    Raises:
        CatalogError: neither exists.
    """
    candidates = (Path.cwd() / ".." / "shared" / "datasets", Path(__file__).resolve().parents[2] / "shared" / "datasets")
    for candidate in candidates:
        if candidate.is_dir():
            return candidate.resolve()
    raise CatalogError(f"benchmark data not found at {candidates[0]} or {candidates[1]}; name the folder (--datasets)")


def _read_json_object(path: Path) -> dict[str, Any]:
    data = read_json(path)
    if not isinstance(data, dict):
        raise CatalogError(f"{path}: expected a JSON object")
    return data


# ---------------------------------------------------------------------------------------------
# The needle sets


@dataclass
class _NeedleServer:
    entry: dict[str, Any]  # the server as the catalog holds it (tools included)
    parts: list[int]  # its benchmark tools, in the pool
    gold: list[int]  # of which gold
    padding: int = 0  # generated tools to add


@dataclass
class _Needles:
    name: str
    servers: list[_NeedleServer]
    queries: dict[str, str]
    metadata: dict[str, dict[str, Any]]
    qrels: dict[str, dict[str, int]]
    needle_ids: dict[str, str]  # benchmark tool id → catalog tool id
    in_catalog: frozenset[int]  # pool parts placed as needles: never used as they are again
    gold: dict[int, str]  # pool part → catalog id of a gold tool


def _pick_queries(qids: Sequence[str], limit: int | None, seed: int) -> list[str]:
    if limit is None or limit >= len(qids):
        return list(qids)
    chosen = set(random.Random(f"{seed}:queries").sample(list(qids), limit))
    return [q for q in qids if q in chosen]


def _draw_size(rng: random.Random) -> int:
    while True:
        size = round(rng.lognormvariate(math.log(9), 0.75))
        if MIN_SERVER_TOOLS <= size <= MAX_SERVER_TOOLS:
            return size


def _toolink_needles(root: Path, pool: _Pool, queries: int | None, seed: int, names: _ServerNames) -> _Needles:
    benchmark = load_toolret_benchmark(root / "toolret" / "toolink")
    qids = _pick_queries([q for q in benchmark.queries if q in benchmark.qrels], queries, seed)
    instructions = benchmark.extra.get("instructions", {})
    gold_ids = sorted({t for q in qids for t in benchmark.qrels[q]}, key=lambda t: int(re.sub(r"\D", "", t) or 0))
    missing = [t for t in gold_ids if f"toolink:{t}" not in pool.by_key]
    if missing:
        raise CatalogError(f"{root / 'toolret' / 'toolink'}: judged tools missing from tools.json: {missing[:5]}")
    rng = random.Random(f"{seed}:needle-servers")
    servers: list[_NeedleServer] = []
    needle_ids: dict[str, str] = {}
    gold: dict[int, str] = {}
    start = 0
    while start < len(gold_ids):
        size = _draw_size(rng)
        chunk = gold_ids[start:start + size]
        if 0 < len(gold_ids) - start - size < MIN_SERVER_TOOLS:
            chunk = gold_ids[start:]  # no server of fewer than five: the rest joins this one
        start += len(chunk)
        indices = [pool.by_key[f"toolink:{t}"] for t in chunk]
        topic = _toolink_topic([pool.parts[i].name for i in indices])
        name = names.new(topic, rng)
        entry = {"name": name, "description": _template(rng, "en", f"{topic} in Python",
                                                        [pool.parts[i].name for i in indices]),
                 "category": "Python functions", "tools": [_as_is(pool.parts[i]) for i in indices]}
        for tool_id, index in zip(chunk, indices, strict=True):
            catalog_id = tool_id_for(name, pool.parts[index].name)
            needle_ids[tool_id] = catalog_id
            gold[index] = catalog_id
        servers.append(_NeedleServer(entry, indices, list(indices)))
    qrels = {q: {needle_ids[t]: g for t, g in benchmark.qrels[q].items()} for q in qids}
    return _Needles("toolink", servers, {q: benchmark.queries[q] for q in qids},
                    {q: {"instruction": instructions[q]} for q in qids if q in instructions}, qrels, needle_ids,
                    frozenset(gold), gold)


def _livemcpbench_needles(root: Path, pool: _Pool, queries: int | None, seed: int, names: _ServerNames) -> _Needles:
    folder = root / "livemcpbench"
    benchmark = load_livemcpbench_benchmark(folder, tool_id_for=tool_id_for)
    qids = _pick_queries([q for q in benchmark.queries if q in benchmark.qrels], queries, seed)
    gold_ids = {t for q in qids for t in benchmark.qrels[q]}
    steps = benchmark.extra.get("steps", {})
    servers: list[_NeedleServer] = []
    in_catalog: set[int] = set()
    gold: dict[int, str] = {}
    for server in _livemcpbench_servers(folder / "tools.json"):
        ids = [tool_id_for(server["name"], t["name"]) for t in _server_tools(server)]
        if not gold_ids.intersection(ids):
            continue
        names.reserve(server["name"])
        indices = [pool.by_key[f"livemcpbench:{i}"] for i in dict.fromkeys(ids)]
        in_catalog.update(indices)
        gold.update({pool.by_key[f"livemcpbench:{i}"]: i for i in ids if i in gold_ids})
        servers.append(_NeedleServer(copy.deepcopy(server), indices,
                                     [pool.by_key[f"livemcpbench:{i}"] for i in dict.fromkeys(ids) if i in gold_ids]))
    qrels = {q: dict(benchmark.qrels[q]) for q in qids}
    return _Needles("livemcpbench", servers, {q: benchmark.queries[q] for q in qids},
                    {q: {"steps": steps[q]} for q in qids if q in steps}, qrels, {t: t for t in sorted(gold_ids)},
                    frozenset(in_catalog), gold)


# ---------------------------------------------------------------------------------------------
# Servers


def _plan_sizes(total: int, rng: random.Random) -> tuple[list[int], int]:
    """Server sizes in 5–50 summing to ``total``, and the tools (fewer than 5) no server could take."""
    sizes: list[int] = []
    drawn = 0
    while drawn < total:
        size = _draw_size(rng)
        sizes.append(size)
        drawn += size
    if sizes:
        sizes[-1] -= drawn - total
    spill = 0
    if sizes and sizes[-1] < MIN_SERVER_TOOLS:
        spill = sizes.pop()
        for i in range(len(sizes) - 1, -1, -1):
            take = min(spill, MAX_SERVER_TOOLS - sizes[i])
            sizes[i] += take
            spill -= take
            if not spill:
                break
    return sizes, spill


class _Generator:
    """Makes the tools of one catalog, in order, and counts what it made."""

    def __init__(self, pool: _Pool, needles: _Needles) -> None:
        self.pool = pool
        self.needles = needles
        self.used: set[int] = set(needles.in_catalog)
        self.seen: set[int] = set()
        self.names_on: dict[str, int] = {}  # tool name → servers holding it (1, or 2 meaning "several")
        self.languages: Counter[str] = Counter()
        self.sources: Counter[str] = Counter()
        self.kinds: Counter[str] = Counter()
        self.copies: dict[int, list[str]] = {}  # pool part → ids of the tools made from it (a gold tool's first)
        self.server_sizes: list[int] = []
        self.tools = 0
        self.empty_descriptions = 0
        self.duplicate_descriptions = 0

    @property
    def near_duplicates(self) -> dict[str, list[str]]:
        """Gold tool id → ids of its variants (a gold part is never used as it is: every copy differs)."""
        return {self.needles.gold[index]: ids[1:] for index, ids in self.copies.items()
                if index in self.needles.gold and len(ids) > 1}

    @staticmethod
    def digest(text: str) -> int:
        return int.from_bytes(hashlib.blake2b(text.encode("utf-8"), digest_size=8).digest(), "big")

    def count_server(self, tools: Sequence[Mapping[str, Any]]) -> None:
        self.server_sizes.append(len(tools))
        for name in {str(t.get("name")) for t in tools}:
            self.names_on[name] = min(2, self.names_on.get(name, 0) + 1)

    def count_tool(self, description: str, language: str, source: str, kind: str) -> None:
        self.tools += 1
        key = self.digest(description)
        if not description:
            self.empty_descriptions += 1
        elif key in self.seen:
            self.duplicate_descriptions += 1
        else:
            self.seen.add(key)
        self.languages[language] += 1
        self.sources[source] += 1
        self.kinds[kind] += 1

    def tool(self, index: int, ctx: _Context, taken: set[str], rng: random.Random) -> dict[str, Any]:
        """One tool of ``ctx``'s server from the part: as it is on its first use, else a variant."""
        part = self.pool.parts[index]
        if index not in self.used and part.name not in taken:
            self.used.add(index)
            self.count_tool(part.description, _language_of(part.description), part.source, "real")
            taken.add(part.name)
            return _as_is(part)
        must = index in self.needles.in_catalog  # a needle's variant always differs from it
        name, description, language = part.name, part.description, None
        for attempt in range(4):
            name = _vary_name(part.name, rng, must=part.name in taken or attempt >= 2)
            if name in taken:
                continue
            description, language = _vary_description(part, ctx, rng, force=must or attempt > 0)
            if must and name == part.name and description == part.description:
                continue
            if attempt < 3 and description and self.digest(description) in self.seen:
                continue
            break
        if name in taken:
            name = self._free_name(name, taken)
        if must and name == part.name and description == part.description:
            language = ctx.language
            description = f"{description} {rng.choice(BOILERPLATE[language]).format(topic=ctx.topic, server=ctx.name)}"
        schema = _vary_schema(part, ctx, self.pool, rng)
        taken.add(name)
        self.count_tool(description, language or _language_of(description), part.source, "variant")
        return _render(part, name, description, schema)

    @staticmethod
    def _free_name(name: str, taken: set[str]) -> str:
        for suffix in ("_v2", "_2", "_alt", "_ex", "_new"):
            if name + suffix not in taken:
                return name + suffix
        serial = 3
        while f"{name}_{serial}" in taken:
            serial += 1
        return f"{name}_{serial}"

    def fill(self, candidates: Sequence[int], size: int, ctx: _Context, taken: set[str], server_id: str,
             rng: random.Random) -> list[dict[str, Any]]:
        """``size`` tools from ``candidates`` in order (cycling through them again when they run out)."""
        tools: list[dict[str, Any]] = []
        position = 0
        while len(tools) < size and candidates:
            index = candidates[position % len(candidates)]
            position += 1
            tool = self.tool(index, ctx, taken, rng)
            tools.append(tool)
            gold = [self.needles.gold[index]] if index in self.needles.gold else []
            self.copies.setdefault(index, gold).append(tool_id_for(server_id, tool["name"]))
        return tools


def _family_candidates(pool: _Pool, family: _Family, group: Sequence[int], size: int, rng: random.Random) -> list[int]:
    """The group's parts (shuffled), then other parts of the family, then (a small family) of another one."""
    own = list(group)
    rng.shuffle(own)
    mine = set(group)
    others = [i for i in rng.sample(family.parts, min(len(family.parts), 3 * size + len(own))) if i not in mine]
    candidates = own + others[:max(0, 2 * size - len(own))]
    if len(candidates) < size:
        extra = pool.families[pool.family_names[bisect.bisect_right(pool.family_cum, rng.randrange(pool.family_cum[-1]))]]
        candidates += rng.sample(extra.parts, min(size, len(extra.parts)))
    return candidates




def _regular_server(gen: _Generator, names: _ServerNames, size: int, rng: random.Random) -> dict[str, Any]:
    pool = gen.pool
    family = pool.families[pool.family_names[bisect.bisect_right(pool.family_cum, rng.randrange(pool.family_cum[-1]))]]
    group_name = family.group_names[bisect.bisect_right(family.group_cum, rng.randrange(family.group_cum[-1]))]
    group = family.groups[group_name]
    language = _language(rng)
    name = names.new(group_name, rng)
    ctx = _Context(name, family.label, language, group, family, family.details.get(group_name, ()))
    tools = gen.fill(_family_candidates(pool, family, group, size, rng), size, ctx, set(), name, rng)
    lead = pool.parts[group[0]]
    if lead.server_description and rng.random() < 0.6:
        description = _swap_words(lead.server_description, rng, 0.5)
    else:
        description = _template(rng, language, _topic(group_name), [str(t["name"]) for t in tools])
    return {"name": name, "description": description, "category": family.label, "tools": tools}


def _fork_server(gen: _Generator, names: _ServerNames, size: int, target: _NeedleServer,
                 rng: random.Random) -> dict[str, Any]:
    """A copy of a needle server under another name: variants of its gold tools and most of its others."""
    pool = gen.pool
    gold = list(target.gold)
    rng.shuffle(gold)
    golden = set(gold)
    others = [i for i in target.parts if i not in golden and rng.random() < 0.75]
    rng.shuffle(others)
    lead = pool.parts[target.parts[0]]
    family = pool.families[lead.family]
    candidates = gold + others
    if len(candidates) < size:
        candidates += _family_candidates(pool, family, family.groups[lead.group], size, rng)
    language = _language(rng)
    name = names.new(str(target.entry["name"]), rng, qualified=True)
    ctx = _Context(name, family.label, language, target.parts, family, family.details.get(lead.group, ()))
    tools = gen.fill(candidates, size, ctx, set(), name, rng)
    description = _text(target.entry.get("description"))
    description = _swap_words(description, rng, 0.6) if description else _template(
        rng, language, family.label, [str(t["name"]) for t in tools])
    return {"name": name, "description": description, "category": _text(target.entry.get("category")) or family.label,
            "tools": tools}


def _pad_needle_server(gen: _Generator, server: _NeedleServer, rng: random.Random) -> None:
    """Add ``server.padding`` generated tools of its family to a needle server (in its first tool list)."""
    if server.padding <= 0:
        return
    pool = gen.pool
    family = pool.families[pool.parts[server.parts[0]].family]
    name = str(server.entry["name"])
    ctx = _Context(name, family.label, "en", server.parts, family)
    lists = _server_tool_lists(server.entry)
    taken = {str(t.get("name")) for tools in lists for t in tools if isinstance(t, dict)}
    candidates = [i for i in _family_candidates(pool, family, [], server.padding, rng) if i not in set(server.parts)]
    lists[0].extend(gen.fill(candidates or list(family.parts), server.padding, ctx, taken, name, rng))


# ---------------------------------------------------------------------------------------------
# Writing


def _atomic_text(path: Path) -> tuple[Path, TextIO]:
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f".{path.name}.partial")
    return partial, partial.open("w", encoding="utf-8")


def _write_queries(path: Path, needles: _Needles) -> Path:
    partial, handle = _atomic_text(path)
    with handle:
        for qid, text in needles.queries.items():
            handle.write(json.dumps({"_id": qid, "text": text, "metadata": needles.metadata.get(qid, {})},
                                    ensure_ascii=False) + "\n")
    return partial


def _write_qrels(path: Path, qrels: Mapping[str, Mapping[str, int]]) -> Path:
    partial, handle = _atomic_text(path)
    with handle:
        writer = csv.writer(handle, delimiter="\t", lineterminator="\n")
        writer.writerow(["query-id", "corpus-id", "score"])
        for qid, grades in qrels.items():
            for tool_id, grade in grades.items():
                writer.writerow([qid, tool_id, grade])
    return partial


def _read_queries(path: Path) -> Iterator[tuple[str, str, Mapping[str, Any]]]:
    try:
        handle = path.open(encoding="utf-8")
    except OSError as exc:
        raise CatalogError(f"{path}: cannot be read ({exc.strerror})") from exc
    with handle:
        for line_no, line in enumerate(handle, start=1):
            try:
                record = json.loads(line)
            except json.JSONDecodeError as exc:
                raise CatalogError(f"{path}: malformed JSON on line {line_no}: {exc.msg}") from exc
            if not isinstance(record, dict) or not isinstance(record.get("_id"), str) or not isinstance(
                    record.get("text"), str):
                raise CatalogError(f"{path}: line {line_no}: expected {{_id, text}} strings")
            meta = record.get("metadata")
            yield record["_id"], record["text"], meta if isinstance(meta, dict) else {}


def _read_qrels(path: Path) -> dict[str, dict[str, int]]:
    qrels: dict[str, dict[str, int]] = {}
    try:
        with path.open(encoding="utf-8", newline="") as handle:
            for line_no, row in enumerate(csv.reader(handle, delimiter="\t"), start=1):
                if line_no == 1 and row[:1] == ["query-id"]:
                    continue
                if len(row) != 3 or not row[2].lstrip("-").isdigit():
                    raise CatalogError(f"{path}: line {line_no}: expected query-id, corpus-id and an integer score")
                qrels.setdefault(row[0], {})[row[1]] = int(row[2])
    except OSError as exc:
        raise CatalogError(f"{path}: cannot be read ({exc.strerror})") from exc
    return qrels


# ---------------------------------------------------------------------------------------------
# Generating, step by step (generate_catalog's steps, in its order)


def _check_arguments(needles: str, fork_share: float, queries: int | None) -> None:
    """Raise CatalogError for an unknown needle set, a fork share outside 0-1 or fewer than one query."""
    if needles not in NEEDLE_SETS:
        raise CatalogError(f"unknown needle set {needles!r}; known: {', '.join(NEEDLE_SETS)}")
    if not 0.0 <= fork_share <= 1.0:
        raise CatalogError(f"fork_share must be between 0 and 1, got {fork_share}")
    if queries is not None and queries < 1:
        raise CatalogError(f"queries must be at least 1, got {queries}")


def _plan_servers(needle_set: _Needles, tools: int, needles: str, seed: int) -> tuple[int, list[int]]:
    """The needle servers' own tools and the distractor servers' sizes; sets each needle server's padding
    (to the minimum size, then the tools no distractor server could take).

    Raises:
        CatalogError: ``tools`` cannot hold the needle set, or the tools cannot be placed in servers.
    """
    own = sum(len(_server_tools(s.entry)) for s in needle_set.servers)
    for server in needle_set.servers:
        server.padding = max(0, MIN_SERVER_TOOLS - len(_server_tools(server.entry)))
    floor = own + sum(s.padding for s in needle_set.servers)
    if tools < floor:
        raise CatalogError(
            f"a catalog of {tools} tools cannot hold the {needles} needle set: its {len(needle_set.servers)} servers "
            f"need {floor} tools ({own} of the benchmark, {floor - own} padding to {MIN_SERVER_TOOLS} per server); "
            f"ask for more tools or fewer queries"
        )
    sizes, spill = _plan_sizes(tools - floor, random.Random(f"{seed}:sizes"))
    for server in needle_set.servers:  # tools no distractor server could take pad the needle servers
        take = min(spill, MAX_SERVER_TOOLS - len(_server_tools(server.entry)) - server.padding)
        server.padding += max(0, take)
        spill -= max(0, take)
    if spill:
        raise CatalogError(f"cannot place {spill} tools in servers of {MIN_SERVER_TOOLS}-{MAX_SERVER_TOOLS}")
    return own, sizes


def _start_generator(pool: _Pool, needle_set: _Needles, seed: int) -> _Generator:
    """The catalog's generator, the needle tools counted and the needle servers padded."""
    gen = _Generator(pool, needle_set)
    for server in needle_set.servers:
        for index in server.parts:
            part = pool.parts[index]
            gen.count_tool(part.description, _language_of(part.description), part.source, "needle")
    for server in needle_set.servers:  # before the distractors: a larger catalog extends a smaller one's
        _pad_needle_server(gen, server, random.Random(f"{seed}:padding:{server.entry['name']}"))
    return gen


@dataclass(frozen=True)
class _Placement:
    """Where the needle servers go among the distractors, and which of them distractors may fork."""

    slots: list[tuple[int, int]]  # (distractor position it precedes, needle server index), sorted
    forks: list[_NeedleServer]  # the needle servers with gold tools
    fork_cum: list[int]  # their gold tools, cumulated (a fork's target is drawn in proportion)


def _place_needles(needle_set: _Needles, sizes: Sequence[int], seed: int) -> _Placement:
    placement = random.Random(f"{seed}:placement")
    slots = sorted((placement.randint(0, len(sizes)), i) for i in range(len(needle_set.servers)))
    forks = [s for s in needle_set.servers if s.gold]
    fork_cum: list[int] = []
    for server in forks:
        fork_cum.append((fork_cum[-1] if fork_cum else 0) + len(server.gold))
    return _Placement(slots, forks, fork_cum)


def _write_servers(handle: TextIO, gen: _Generator, names: _ServerNames, needle_set: _Needles, sizes: Sequence[int],
                   placed: _Placement, seed: int, fork_share: float) -> tuple[int, int]:
    """Make and write every server, in catalog order, as one JSON list; returns (servers, forks) written."""
    written = 0
    fork_count = 0
    slots, forks, fork_cum = placed.slots, placed.forks, placed.fork_cum

    def emit(server: Mapping[str, Any]) -> None:
        nonlocal written
        handle.write(("[\n" if not written else ",\n") + json.dumps(server, ensure_ascii=False))
        written += 1

    def emit_needle(server: _NeedleServer) -> None:
        gen.count_server(_server_tools(server.entry))
        emit(server.entry)

    slot = 0
    for position, size in enumerate(sizes):
        while slot < len(slots) and slots[slot][0] == position:
            emit_needle(needle_set.servers[slots[slot][1]])
            slot += 1
        rng = random.Random(f"{seed}:server:{position}")
        if forks and rng.random() < fork_share:
            target = forks[bisect.bisect_right(fork_cum, rng.randrange(fork_cum[-1]))]
            made = _fork_server(gen, names, size, target, rng)
            fork_count += 1
        else:
            made = _regular_server(gen, names, size, rng)
        gen.count_server(made["tools"])
        emit(made)
    for _, index in slots[slot:]:
        emit_needle(needle_set.servers[index])
    handle.write("\n]\n")
    return written, fork_count


def _manifest(gen: _Generator, needle_set: _Needles, groups: Sequence[Sequence[str]], *, needles: str, seed: int,
              tools: int, queries: int | None, fork_share: float, written: int, own: int,
              fork_count: int) -> dict[str, Any]:
    """What ``manifest.json`` holds: the arguments, the counts, the needle ids and the near-duplicates."""
    near_duplicates = gen.near_duplicates
    return {
        "generator": GENERATOR,
        "needles": needles, "seed": seed, "tools": tools, "queries_asked": queries, "fork_share": fork_share,
        "format": CATALOG_FORMAT, "servers": written, "needle_servers": len(needle_set.servers),
        "needle_tools": own, "gold_tools": len(needle_set.gold), "queries": len(needle_set.queries),
        "fork_servers": fork_count,
        "server_sizes": {"min": min(gen.server_sizes), "max": max(gen.server_sizes),
                         "mean": round(sum(gen.server_sizes) / len(gen.server_sizes), 2)},
        "tool_kinds": dict(sorted(gen.kinds.items())),
        "distinct_descriptions": len(gen.seen), "duplicate_descriptions": gen.duplicate_descriptions,
        "empty_descriptions": gen.empty_descriptions,
        "names_on_several_servers": sum(1 for n in gen.names_on.values() if n > 1),
        "languages": dict(gen.languages.most_common()), "sources": dict(sorted(gen.sources.items())),
        "needle_ids": needle_set.needle_ids,
        "near_duplicate_count": sum(len(v) for v in near_duplicates.values()),
        "copy_groups": len(groups),
        "near_duplicates": dict(sorted(near_duplicates.items())),
    }


def _write_beside(folder: Path, groups: Sequence[Sequence[str]], needle_set: _Needles,
                  manifest: Mapping[str, Any]) -> list[Path]:
    """Write the copy groups, the queries, the qrels and the manifest (as partial files); returns those."""
    copies_partial, copies_handle = _atomic_text(folder / COPIES_FILE)
    with copies_handle:
        copies_handle.write(json.dumps(groups, ensure_ascii=False) + "\n")
    partials = [copies_partial, _write_queries(folder / QUERIES_FILE, needle_set),
                _write_qrels(folder / QRELS_FILE, needle_set.qrels)]
    manifest_partial, manifest_handle = _atomic_text(folder / MANIFEST_FILE)
    with manifest_handle:
        manifest_handle.write(json.dumps(manifest, indent=1, ensure_ascii=False) + "\n")
    partials.append(manifest_partial)
    return partials


def _remove_partials(folder: Path) -> None:
    for leftover in folder.glob(".*.partial"):
        leftover.unlink(missing_ok=True)
    for leftover in (folder / "qrels").glob(".*.partial"):
        leftover.unlink(missing_ok=True)


# ---------------------------------------------------------------------------------------------
# The entry points


def generate_catalog(
    out_dir: str | Path,
    *,
    tools: int,
    needles: str = "toolink",
    seed: int = 0,
    queries: int | None = None,
    datasets: str | Path | None = None,
    fork_share: float = DEFAULT_FORK_SHARE,
) -> ScaleCatalog:
    """Write a catalog of exactly ``tools`` tools with a benchmark's needle set inside it.

    The same arguments give the same files, byte for byte. What the generator does is the module's
    docstring; ``docs/evaluation.md`` (*Catalogs at scale*) says it for users.

    Args:
        out_dir: the folder to write (created; the four files in it are replaced, each only once it
            is complete).
        tools: tools in the catalog, needles and padding included.
        needles: ``"toolink"`` or ``"livemcpbench"`` (:data:`NEEDLE_SETS`).
        seed: the seed of every random choice.
        queries: only this many of the benchmark's judged queries (a seeded sample) and their tools as
            needles; all of them when None.
        datasets: the benchmark data folder (default: :func:`default_datasets_dir`).
        fork_share: the share of distractor servers that are forks of a needle server (0 to 1).

    Returns:
        Where the files are, with the counts.

    Raises:
        CatalogError: unknown needle set, ``tools`` smaller than the needle set, a bad
            ``fork_share``, or benchmark data missing or malformed (the message names the file).
    """
    started = time.perf_counter()
    _check_arguments(needles, fork_share, queries)
    root = Path(datasets).expanduser().resolve() if datasets is not None else default_datasets_dir()
    pool = _pool(str(root))
    names = _ServerNames()
    build = _toolink_needles if needles == "toolink" else _livemcpbench_needles
    needle_set = build(root, pool, queries, seed, names)
    own, sizes = _plan_servers(needle_set, tools, needles, seed)

    folder = Path(out_dir)
    folder.mkdir(parents=True, exist_ok=True)
    gen = _start_generator(pool, needle_set, seed)
    placed = _place_needles(needle_set, sizes, seed)

    partial, handle = _atomic_text(folder / CATALOG_FILE)
    try:
        with handle:
            written, fork_count = _write_servers(handle, gen, names, needle_set, sizes, placed, seed, fork_share)
        if gen.tools != tools:  # a broken invariant, not bad input
            raise AssertionError(f"generated {gen.tools} tools, not {tools}")
        groups = [ids for _, ids in sorted(gen.copies.items()) if len(ids) > 1]
        manifest = _manifest(gen, needle_set, groups, needles=needles, seed=seed, tools=tools, queries=queries,
                             fork_share=fork_share, written=written, own=own, fork_count=fork_count)
        partials = [partial, *_write_beside(folder, groups, needle_set, manifest)]
    except BaseException:
        _remove_partials(folder)
        raise
    for done in partials:
        os.replace(done, done.with_name(done.name[1:-len(".partial")]))
    return ScaleCatalog(folder, needles, seed, tools, written, own, len(needle_set.queries),
                        round(time.perf_counter() - started, 3))


def load_scale_catalog(folder: str | Path) -> ScaleCatalog:
    """A catalog :func:`generate_catalog` wrote earlier, read back from its ``manifest.json``.

    Raises:
        CatalogError: the folder lacks the files or its manifest is not one of this generator's.
    """
    root = Path(folder)
    manifest = _read_json_object(root / MANIFEST_FILE)
    for name in (CATALOG_FILE, QUERIES_FILE, QRELS_FILE):
        if not (root / name).is_file():
            raise CatalogError(f"{root / name}: file not found (not a generated catalog folder?)")
    try:
        return ScaleCatalog(root, str(manifest["needles"]), int(manifest["seed"]), int(manifest["tools"]),
                            int(manifest["servers"]), int(manifest["needle_tools"]), int(manifest["queries"]))
    except (KeyError, TypeError, ValueError) as exc:
        raise CatalogError(f"{root / MANIFEST_FILE}: not a scale catalog manifest (field {exc})") from None
