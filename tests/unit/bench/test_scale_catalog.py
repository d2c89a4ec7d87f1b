"""The scale catalog generator: N tools in servers of 5-50 that look like a real catalog, with a
benchmark's needles (its real tools, queries and qrels) inside and near-duplicates of them as distractors."""

from __future__ import annotations

import copy
import hashlib
import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from toolsift.config import Settings
from toolsift.errors import CatalogError
from toolsift.bench.scale_catalog import (
    MAX_SERVER_TOOLS,
    MIN_SERVER_TOOLS,
    ScaleCatalog,
    generate_catalog,
    load_scale_catalog,
)
from toolsift.bench.scale_text import BOILERPLATE
from toolsift.ingest.benchmarks import load_livemcpbench_benchmark, load_toolret_benchmark
from toolsift.ingest.loaders.mcp import tool_id_for
from toolsift.ingest.pipeline import validate_catalog

FILES = ("catalog.json", "queries.jsonl", "qrels/test.tsv", "manifest.json")


def servers_of(scale: ScaleCatalog) -> list[dict[str, Any]]:
    data = json.loads(scale.catalog_path.read_text(encoding="utf-8"))
    assert isinstance(data, list)
    return data


def tools_of(server: dict[str, Any]) -> list[dict[str, Any]]:
    tools = server["tools"]
    if isinstance(tools, list):
        return tools
    return [t for listing in tools.values() for t in listing["tools"]]


def catalog_tools(scale: ScaleCatalog) -> dict[str, dict[str, Any]]:
    """Catalog tool id → tool, as the MCP loader names them."""
    return {tool_id_for(s["name"], t["name"]): t for s in servers_of(scale) for t in tools_of(s)}


def words(text: str) -> set[str]:
    return set(re.findall(r"\w+", text.lower()))


@pytest.fixture(scope="module")
def toolink_3k(datasets: Path, tmp_path_factory: pytest.TempPathFactory) -> ScaleCatalog:
    return generate_catalog(tmp_path_factory.mktemp("toolink"), tools=3000, needles="toolink", seed=0, datasets=datasets)


@pytest.fixture(scope="module")
def livemcpbench_1k(datasets: Path, tmp_path_factory: pytest.TempPathFactory) -> ScaleCatalog:
    return generate_catalog(tmp_path_factory.mktemp("livemcpbench"), tools=1000, needles="livemcpbench", seed=0,
                            datasets=datasets)


# --- sizes and shape ----------------------------------------------------------------------------------


@pytest.mark.parametrize("tools", [30, 31, 57, 333])
def test_the_catalog_holds_exactly_the_tools_asked_for(datasets: Path, tmp_path: Path, tools: int) -> None:
    scale = generate_catalog(tmp_path, tools=tools, needles="toolink", queries=5, seed=1, datasets=datasets)

    servers = servers_of(scale)
    assert sum(len(tools_of(s)) for s in servers) == tools == scale.tools
    assert len(servers) == scale.servers


def test_every_server_holds_5_to_50_tools(toolink_3k: ScaleCatalog, livemcpbench_1k: ScaleCatalog) -> None:
    for scale in (toolink_3k, livemcpbench_1k):
        sizes = [len(tools_of(s)) for s in servers_of(scale)]

        assert min(sizes) >= MIN_SERVER_TOOLS and max(sizes) <= MAX_SERVER_TOOLS
        assert len(set(sizes)) > 10  # drawn, not one size for all


def test_tool_ids_and_server_slugs_are_unique(toolink_3k: ScaleCatalog) -> None:
    servers = servers_of(toolink_3k)

    assert len(catalog_tools(toolink_3k)) == toolink_3k.tools
    assert len({tool_id_for(s["name"], "x") for s in servers}) == len(servers)


def test_the_same_tool_name_is_on_several_servers(toolink_3k: ScaleCatalog) -> None:
    holders = Counter(name for s in servers_of(toolink_3k) for name in {t["name"] for t in tools_of(s)})

    several = [name for name, count in holders.items() if count > 1]
    assert len(several) >= 50
    assert toolink_3k.manifest()["names_on_several_servers"] == len(several)


def test_parameters_keep_their_nesting(toolink_3k: ScaleCatalog) -> None:
    nested = [
        t["name"] for t in catalog_tools(toolink_3k).values()
        for spec in (t.get("inputSchema") or {}).get("properties", {}).values()
        if isinstance(spec, dict) and spec.get("type") == "object" and spec.get("properties")
    ]

    assert len(nested) >= 10


def test_descriptions_are_distinct_almost_everywhere(toolink_3k: ScaleCatalog) -> None:
    descriptions = [t.get("description") or "" for t in catalog_tools(toolink_3k).values()]
    written = [d for d in descriptions if d]  # a tool documented without one keeps none
    manifest = toolink_3k.manifest()

    assert len(set(written)) == manifest["distinct_descriptions"]
    assert len(descriptions) - len(written) == manifest["empty_descriptions"]
    assert len(set(written)) >= 0.95 * len(written)


def test_several_languages_are_present(toolink_3k: ScaleCatalog) -> None:
    languages = toolink_3k.manifest()["languages"]
    text = "\n".join(t.get("description") or "" for t in catalog_tools(toolink_3k).values())

    assert isinstance(languages, dict) and len([lang for lang, n in languages.items() if n > 0]) >= 5
    assert re.search(r"[\u4e00-\u9fff]", text)  # Chinese, from the real tools and the translated boilerplate
    fixed = {lang: [p for p in phrases if "{" not in p] for lang, phrases in BOILERPLATE.items() if lang != "en"}
    assert sum(any(p in text for p in phrases) for phrases in fixed.values()) >= 4


def test_the_same_seed_writes_the_same_files_and_another_seed_other_ones(datasets: Path, tmp_path: Path) -> None:
    def digests(seed: int, folder: str) -> list[str]:
        scale = generate_catalog(tmp_path / folder, tools=400, needles="toolink", queries=30, seed=seed,
                                 datasets=datasets)
        return [hashlib.sha256((scale.folder / name).read_bytes()).hexdigest() for name in FILES]

    first, again, other = digests(7, "a"), digests(7, "b"), digests(8, "c")

    assert first == again
    assert first[0] != other[0]


def test_a_larger_catalog_extends_a_smaller_one_of_the_same_seed(datasets: Path, tmp_path: Path) -> None:
    small = generate_catalog(tmp_path / "s", tools=800, needles="livemcpbench", seed=3, datasets=datasets)
    large = generate_catalog(tmp_path / "l", tools=2000, needles="livemcpbench", seed=3, datasets=datasets)

    in_large = {json.dumps(s, sort_keys=True) for s in servers_of(large)}
    missing = [s["name"] for s in servers_of(small) if json.dumps(s, sort_keys=True) not in in_large]
    assert len(missing) <= 2  # the last server(s), cut to make the total exact


# --- the needles ---------------------------------------------------------------------------------------


def test_livemcpbench_needles_keep_their_ids_documentation_and_qrels(datasets: Path,
                                                                      livemcpbench_1k: ScaleCatalog) -> None:
    original = load_livemcpbench_benchmark(datasets / "livemcpbench", tool_id_for=tool_id_for)
    given = {s["name"]: s for s in json.loads((datasets / "livemcpbench" / "tools.json").read_text(encoding="utf-8"))}
    tools = catalog_tools(livemcpbench_1k)

    assert livemcpbench_1k.qrels() == original.qrels
    assert livemcpbench_1k.queries() == {q: original.queries[q] for q in original.qrels}
    relevant = {t for grades in original.qrels.values() for t in grades}
    assert relevant <= set(tools)
    needle_servers = [s for s in servers_of(livemcpbench_1k) if s["name"] in given]
    assert len(needle_servers) == livemcpbench_1k.manifest()["needle_servers"]
    for server in needle_servers:  # as tools.json gives it; a server of fewer than 5 tools is padded
        source = given[server["name"]]
        assert {k: v for k, v in server.items() if k != "tools"} == {k: v for k, v in source.items() if k != "tools"}
        assert tools_of(server)[:len(tools_of(source))] == tools_of(source)


def test_toolink_needles_keep_their_documentation_and_their_qrels_follow_them(datasets: Path,
                                                                            toolink_3k: ScaleCatalog) -> None:
    original = load_toolret_benchmark(datasets / "toolret" / "toolink")
    documentation = {r["id"]: r["documentation"] for r in json.loads(
        (datasets / "toolret" / "toolink" / "tools.json").read_text(encoding="utf-8"))}
    needle_ids = toolink_3k.manifest()["needle_ids"]
    tools = catalog_tools(toolink_3k)

    assert isinstance(needle_ids, dict)
    assert toolink_3k.qrels() == {q: {needle_ids[t]: g for t, g in grades.items()} for q, grades in original.qrels.items()}
    assert len(set(needle_ids.values())) == len(needle_ids) == toolink_3k.manifest()["gold_tools"]
    for toolink_id, catalog_id in needle_ids.items():
        assert tools[catalog_id] == documentation[toolink_id]


def test_near_duplicates_of_gold_tools_are_distractors_with_other_ids(toolink_3k: ScaleCatalog,
                                                                      livemcpbench_1k: ScaleCatalog) -> None:
    for scale in (toolink_3k, livemcpbench_1k):
        near = scale.manifest()["near_duplicates"]
        tools = catalog_tools(scale)
        relevant = {t for grades in scale.qrels().values() for t in grades}

        assert isinstance(near, dict) and sum(len(v) for v in near.values()) >= 10
        for gold_id, copies in near.items():
            gold = tools[gold_id]
            for copy_id in copies:
                twin = tools[copy_id]
                assert copy_id != gold_id and copy_id not in relevant
                assert (twin["name"], twin["description"]) != (gold["name"], gold["description"])
                # near: most of the gold tool's words are still there
                kept = words(gold["description"]) & words(twin["description"])
                assert len(kept) >= 0.5 * len(words(gold["description"])), (gold_id, copy_id)


def test_copies_of_one_source_tool_form_a_group_that_holds_each_gold_tool_with_its_variants(
        toolink_3k: ScaleCatalog) -> None:
    groups = toolink_3k.copy_groups()
    tools = catalog_tools(toolink_3k)
    members: dict[int, list[str]] = {}
    for tool_id, group in groups.items():
        members.setdefault(group, []).append(tool_id)

    assert set(groups) <= set(tools) and all(len(ids) >= 2 for ids in members.values())
    assert toolink_3k.manifest()["copy_groups"] == len(members)
    for gold_id, copies in toolink_3k.manifest()["near_duplicates"].items():
        assert {groups[gold_id]} == {groups[c] for c in copies}  # the gold tool and its variants: one group
    # a group is one source tool: its members share most of their description's words (synonyms swapped
    # for its verbs and nouns aside)
    pairs = [(words(tools[ids[0]]["description"]), words(tools[other]["description"]))
             for ids in members.values() for other in ids[1:]]
    alike = sum(len(first & other) >= 0.5 * len(first) for first, other in pairs)
    assert alike >= 0.9 * len(pairs)


def test_fewer_queries_take_only_their_tools_as_needles(datasets: Path, tmp_path: Path) -> None:
    scale = generate_catalog(tmp_path, tools=200, needles="toolink", queries=12, seed=4, datasets=datasets)

    qrels = scale.qrels()
    assert len(qrels) == len(scale.queries()) == scale.query_count == 12
    assert scale.manifest()["gold_tools"] == len({t for grades in qrels.values() for t in grades})


# --- toolsift reads it ---------------------------------------------------------------------------------


def test_toolsift_ingest_reads_every_record_of_the_catalog(datasets: Path, tmp_path: Path) -> None:
    scale = generate_catalog(tmp_path, tools=300, needles="livemcpbench", queries=6, seed=2, datasets=datasets)

    report = validate_catalog(scale.catalog_path, Settings(), fmt="mcp")

    assert not report.rejected
    assert (report.tools, report.agents) == (300, scale.servers)


def test_the_folder_reads_back_as_the_needle_benchmark(toolink_3k: ScaleCatalog) -> None:
    again = load_scale_catalog(toolink_3k.folder)
    benchmark = again.benchmark()

    assert again == ScaleCatalog(**{**toolink_3k.__dict__, "seconds": 0.0})
    assert benchmark.catalog_path == toolink_3k.catalog_path and benchmark.catalog_format == "mcp"
    assert benchmark.qrels == toolink_3k.qrels() and list(benchmark.queries) == list(benchmark.qrels)


# --- clear errors --------------------------------------------------------------------------------------


def test_too_few_tools_for_the_needle_set_is_an_error_naming_the_floor(datasets: Path, tmp_path: Path) -> None:
    with pytest.raises(CatalogError, match="cannot hold the toolink needle set.* need 214 tools"):
        generate_catalog(tmp_path, tools=100, needles="toolink", datasets=datasets)

    assert not any(tmp_path.iterdir())  # nothing half-written


def test_an_unknown_needle_set_is_an_error(datasets: Path, tmp_path: Path) -> None:
    with pytest.raises(CatalogError, match="unknown needle set 'apibank'"):
        generate_catalog(tmp_path, tools=1000, needles="apibank", datasets=datasets)


def test_missing_benchmark_data_is_an_error_naming_the_file(tmp_path: Path) -> None:
    with pytest.raises(CatalogError, match="train/tools.jsonl"):
        generate_catalog(tmp_path / "out", tools=1000, datasets=tmp_path)


def test_a_folder_without_a_manifest_is_not_a_scale_catalog(tmp_path: Path) -> None:
    with pytest.raises(CatalogError, match="manifest.json"):
        load_scale_catalog(tmp_path)


def test_the_generator_never_changes_the_data_it_reads(datasets: Path, tmp_path: Path) -> None:
    path = datasets / "livemcpbench" / "tools.json"
    before = copy.deepcopy(json.loads(path.read_text(encoding="utf-8")))

    scale = generate_catalog(tmp_path, tools=600, needles="livemcpbench", queries=10, seed=5, datasets=datasets)

    assert json.loads(path.read_text(encoding="utf-8")) == before
    assert scale.tools == 600
