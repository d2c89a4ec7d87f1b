"""`toolsift bench scale`'s pure parts: the layout rule, growth and projections, the tables and the plot from a
recorded result, resuming, and the compound-file reader behind the bytes by kind."""

from __future__ import annotations

import json
import math
import struct
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from toolsift.errors import ConfigError, ToolsiftError
from toolsift.bench.scale_bench import (
    capability_recall,
    compound_entries,
    files_by_kind,
    first_copies,
    floor_bodies,
    near_duplicate_share,
    run_scale_bench,
    scale_layout,
)
from toolsift.bench.scale_report import (
    FIGURES,
    RESULTS_FILE,
    derive_embedding,
    growth,
    growth_rows,
    markdown_tables,
    projections,
    summary_rows,
    write_outputs,
)


pytestmark = pytest.mark.usefixtures("clean_env")


def _record(tools: int, *, p50: float, ndcg: float, disk_per_tool: float) -> dict[str, Any]:
    """A size's record as the bench writes it (only the figures the pure parts read)."""
    return {
        "tools": tools,
        "layout": {"shards": 1 if tools < 25_000 else 3, "replicas": 1, "rule": "the rule", "index": f"x-scale-{tools}"},
        "embedding": {"seconds": tools / 100, "cumulative_seconds": tools / 100, "texts_per_s": 100.0,
                      "texts_encoded": 5 * tools, "texts_cached": 0},
        "ingest": {"seconds": tools / 50, "tools_per_s": 50.0},
        "disk": {"primaries_bytes_per_tool": disk_per_tool, "total_bytes_per_tool": 2 * disk_per_tool,
                 "kinds_per_tool": {"stored_fields": 20_000.0, "doc_values": 9_000.0, "vectors": 9_500.0}},
        "memory": {"index_heap_bytes_per_tool": 1.5, "jvm_heap_after_search_bytes": 900e6, "knn_native_bytes": 0},
        "latency": {"api": {"p50": p50, "p95": 2 * p50, "p99": 3 * p50},
                    "floor": {"p50": 20.0, "p95": 40.0, "p99": 60.0}, "api_over_floor_p50": p50 / 20},
        "quality": {"ndcg@10": ndcg, "recall@5": ndcg + 0.1, "recall@50": ndcg + 0.2,
                    "one_capability_once": {"recall@5": ndcg + 0.12},
                    "capability_recall@5": {"default": ndcg + 0.13, "one_capability_once": ndcg + 0.14,
                                            "every_copy": ndcg + 0.11, "detected_once": ndcg + 0.13},
                    "copies": {"all": {"ndcg@10": ndcg + 0.01, "recall@5": ndcg + 0.11}},
                    "without_near_duplicates": {"ndcg@10": ndcg + 0.05},
                    "near_duplicate_share@10": 0.1,
                    "floors": {"bm25": {"ndcg@10": ndcg / 2, "recall@5": ndcg / 2},
                               "dense": {"ndcg@10": ndcg / 3, "recall@5": ndcg / 3}}},
        "wall_seconds": tools / 10,
    }


@pytest.fixture()
def recorded() -> dict[str, Any]:
    """Three sizes: API p50 doubling per tenfold (exponent log10 2), NDCG@10 falling 0.02 per tenfold."""
    return {
        "config": {"needles": "toolink", "seed": 0, "clients": 2, "seconds": 30.0, "cluster": "local", "nodes": 3,
                   "embedding_backend": "onnx"},
        "environment": {"cpu_count": 2, "cluster_nodes": 3, "device": "cpu"},
        "sizes": {
            "1000": _record(1_000, p50=40.0, ndcg=0.60, disk_per_tool=40_000.0),
            "10000": _record(10_000, p50=80.0, ndcg=0.58, disk_per_tool=40_000.0),
            "100000": _record(100_000, p50=160.0, ndcg=0.56, disk_per_tool=40_000.0),
        },
    }


def test_a_top_10_repeating_a_capability_counts_every_copy_after_the_first() -> None:
    groups = {"a/x": 1, "b/x": 1, "c/x": 1, "a/y": 2}
    assert near_duplicate_share(["a/x", "b/x", "a/y", "c/x", "z/q"], groups) == pytest.approx(2 / 5)
    assert near_duplicate_share(["a/x", "a/y", "z/q"], groups) == 0.0
    assert near_duplicate_share([], groups) == 0.0
    assert near_duplicate_share([f"t{i}" for i in range(12)] + ["a/x", "b/x"], groups) == 0.0  # beyond the top 10


def test_one_capability_once_keeps_the_best_ranked_tool_of_each_copy_group() -> None:
    groups = {"a/x": 1, "b/x": 1, "c/x": 1, "a/y": 2, "b/y": 2}
    assert first_copies(["b/x", "z/q", "a/x", "a/y", "c/x", "b/y", "z/r"], groups) == ["b/x", "z/q", "a/y", "z/r"]
    assert first_copies([], groups) == []


def test_capability_recall_counts_a_gold_tool_found_through_any_copy_of_it() -> None:
    groups = {"a/x": 1, "b/x": 1, "a/y": 2, "b/y": 2}
    gold = {"a/x": 1, "a/y": 1, "c/z": 1}  # c/z has no copies
    assert capability_recall(["b/x", "q/1", "q/2", "q/3", "q/4", "a/y"], gold, groups) == pytest.approx(1 / 3)
    assert capability_recall(["b/x", "b/y", "c/z"], gold, groups) == 1.0
    assert capability_recall(["q/1"], {}, groups) == 0.0


def test_the_bm25_floor_caps_a_whole_request_pasted_as_a_query_under_the_clause_limit() -> None:
    # LiveMCPBench's whole questions include pasted base64 images: thousands of words, over
    # OpenSearch's 1,024 clauses once spread over two fields.
    long_request = "What does this image mean? " + " ".join(f"w{i}" for i in range(3000))
    bodies = floor_bodies({"q1": long_request, "q2": "get the weather"}, {"q1": np.array([0.1, 0.2]), "q2": np.array([0.3, 0.4])})
    bm25 = [b["query"]["bool"]["must"]["multi_match"]["query"] for b in bodies["bm25"]]
    assert len(bm25[0].split()) * 2 < 1024 and bm25[0].startswith("What does this image mean?")
    assert bm25[1] == "get the weather"
    dense = [next(iter(b["query"]["knn"].values())) for b in bodies["dense"]]
    assert [d["k"] for d in dense] == [10, 10] and all(d["filter"] == {"term": {"entity": "tool"}} for d in dense)


def test_a_service_that_answers_nothing_in_its_load_step_costs_only_its_own_latency_figures(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A 10k size spends most of its hour on embedding, ingest and quality: an overloaded load step must
    # not throw those away.
    from contextlib import nullcontext

    import toolsift.bench.scale_bench as bench
    from toolsift.config import Settings
    from toolsift.bench.load import LoadStep, NoRequestCompletedError

    def step(name: str, url: str, path: str, clients: int, seconds: float, env: Any, folder: Any) -> LoadStep:
        if name == "api":
            raise NoRequestCompletedError("api: no request completed in 10 s with 2 client(s)")
        return LoadStep(service=name, clients=clients, seconds=seconds, requests=20, errors=0, requests_per_s=2.0,
                        p50=60.0, p95=90.0, p99=120.0, mean=70.0)

    monkeypatch.setattr(bench, "load_environment", lambda settings, queries, folder: ({}, "key"))
    monkeypatch.setattr(bench, "serving", lambda command, env, url: nullcontext())
    monkeypatch.setattr(bench, "locust_step", step)

    figures = bench._latency(Settings(), ["q"], clients=2, seconds=10)

    assert figures["api"] == {"error": "api: no request completed in 10 s with 2 client(s)"}
    assert figures["floor"]["p50"] == 60.0 and figures["api_over_floor_p50"] is None
    record = {"latency": figures}
    values = {f.key: f.value(record) for f in FIGURES}
    assert values["api_p50_ms"] is None and values["floor_p50_ms"] == 60.0


# --- the layout rule ----------------------------------------------------------------------------------


def test_the_layout_rule_gives_one_primary_per_25k_tools_at_most_one_per_node_and_a_replica_where_a_node_can_hold_it() -> None:
    assert (scale_layout(1_000, 3).shards, scale_layout(1_000, 3).replicas) == (1, 1)
    assert scale_layout(25_000, 3).shards == 1
    assert scale_layout(25_001, 3).shards == 2
    assert scale_layout(1_000_000, 3).shards == 3
    assert (scale_layout(100_000, 1).shards, scale_layout(100_000, 1).replicas) == (1, 0)


def test_shards_and_replicas_given_override_the_rule_and_say_so() -> None:
    layout = scale_layout(1_000, 3, shards=6, replicas=0)

    assert (layout.shards, layout.replicas) == (6, 0)
    assert layout.rule.startswith("given: --shards 6, --replicas 0")


def test_a_layout_for_no_tools_or_no_nodes_is_refused() -> None:
    with pytest.raises(ConfigError):
        scale_layout(0, 3)
    with pytest.raises(ConfigError):
        scale_layout(1_000, 3, shards=0)


# --- growth and projections ---------------------------------------------------------------------------


def test_growth_gives_each_figure_its_ratio_to_the_smallest_size_and_the_power_law_exponent(
        recorded: dict[str, Any]) -> None:
    table = growth(recorded)

    p50 = table["api_p50_ms"]
    assert p50["ratio_to_smallest"] == {"1000": 1.0, "10000": 2.0, "100000": 4.0}
    assert p50["exponent"] == pytest.approx(math.log10(2), abs=1e-3)
    assert table["disk_per_tool"]["exponent"] == 0.0  # flat per tool
    assert table["embedding_s"]["exponent"] == pytest.approx(1.0)  # linear in N
    assert table["knn_native_mb"]["exponent"] is None  # 0 has no power law


def test_projections_follow_the_power_law_and_quality_a_line_in_log_size_cut_to_0_1(recorded: dict[str, Any]) -> None:
    projected = projections(recorded, [100_000, 1_000_000, 10**12])

    assert projected["sizes"] == [1_000_000, 10**12]  # 100k was measured
    assert projected["figures"]["api_p50_ms"]["1000000"] == pytest.approx(320.0)
    assert projected["figures"]["api_p50_ms"]["method"] == "power_law"
    assert projected["figures"]["ndcg@10"]["1000000"] == pytest.approx(0.54)
    assert projected["figures"]["ndcg@10"]["method"] == "log_line"
    assert projected["figures"]["ndcg@10"][str(10**12)] == pytest.approx(0.42)
    assert "knn_native_mb" not in projected["figures"]
    assert "embedding_s" not in projected["figures"]  # the texts new at a size depend on the size before
    assert set(projected["methods"]) == {"power_law", "log_line"}


def test_a_catalogs_embedding_is_priced_at_the_rate_of_the_largest_size_that_encoded_and_projected_with_its_texts(
        recorded: dict[str, Any]) -> None:
    sizes = recorded["sizes"]
    sizes["1000"]["embedding"] = {"seconds": 0.2, "texts_encoded": 0, "texts_cached": 5_000, "texts_per_s": None}
    sizes["10000"]["embedding"] = {"seconds": 200.0, "texts_encoded": 45_000, "texts_cached": 5_000,
                                   "texts_per_s": 225.0}
    sizes["100000"]["embedding"] = {"seconds": 1.5, "texts_encoded": 500, "texts_cached": 499_500,
                                    "texts_per_s": 333.3}  # too few texts encoded to price a catalog

    derive_embedding(recorded)

    assert [sizes[n]["embedding"]["catalog_seconds_at_rate"] for n in ("1000", "10000", "100000")] == [
        pytest.approx(5_000 / 225, abs=0.1), pytest.approx(50_000 / 225, abs=0.1), pytest.approx(500_000 / 225, abs=0.1)]
    projected = projections(recorded, [1_000_000])["figures"]
    assert projected["embedding_catalog_s"]["1000000"] == pytest.approx(5_000_000 / 225, rel=1e-3)
    assert "embedding_cumulative_s" not in projected  # what the cache held before decides it


def test_one_size_has_a_ratio_but_no_exponent_and_no_projection(recorded: dict[str, Any]) -> None:
    one = {**recorded, "sizes": {"1000": recorded["sizes"]["1000"]}}

    assert growth(one)["api_p50_ms"]["exponent"] is None
    assert projections(one, [10_000])["figures"] == {}


# --- tables and plot ------------------------------------------------------------------------------------


def test_the_summary_has_a_row_per_size_measured_then_per_size_projected(recorded: dict[str, Any]) -> None:
    recorded["projections"] = projections(recorded, [1_000_000])

    headers, rows = summary_rows(recorded)

    assert [r[0] for r in rows] == ["1,000", "10,000", "100,000", "1,000,000 (projected)"]
    assert rows[0][1] == "1p x 2" and rows[2][1] == "3p x 2"
    api = headers.index("API ms p50/p95/p99")
    assert rows[1][api] == "80 / 160 / 240" and rows[3][api] == "320 / 640 / 960"
    assert rows[0][headers.index("disk KB/tool pri / all")] == "40.0 / 80.0"
    assert rows[3][headers.index("NDCG@10 toolsift / BM25 / dense")] == "0.540 / 0.270 / 0.180"
    assert rows[0][headers.index("R@5 toolsift / BM25 / dense")] == "0.700 / 0.300 / 0.200"


def test_the_growth_table_shows_each_figure_from_the_smallest_to_the_largest_size(recorded: dict[str, Any]) -> None:
    derive_embedding(recorded)  # as writing the outputs does
    headers, rows = growth_rows(recorded)

    assert headers[1:3] == ["at 1,000", "at 100,000"]
    by_label = {r[0]: r for r in rows}
    assert by_label["API p50 ms"][1:] == ["40", "160", "x4.00", "0.30"]
    assert by_label["NDCG@10"][1:3] == ["0.600", "0.560"]
    assert len(rows) == len(FIGURES)


def test_the_markdown_holds_both_tables_and_the_projection_methods(recorded: dict[str, Any]) -> None:
    recorded["projections"] = projections(recorded, [1_000_000])

    text = markdown_tables(recorded)

    assert "| tools | layout |" in text and "| figure | at 1,000 |" in text
    assert "1,000,000 (projected)" in text and "power law" in text
    assert "3 node(s) (local)" in text


def test_writing_the_outputs_recomputes_growth_and_projections_and_writes_json_tables_and_plot(
        recorded: dict[str, Any], tmp_path: Path) -> None:
    paths = write_outputs(recorded, tmp_path, [1_000_000])

    written = json.loads(paths["json"].read_text(encoding="utf-8"))
    assert written["growth"]["api_p50_ms"]["ratio_to_smallest"]["100000"] == 4.0
    assert written["projections"]["sizes"] == [1_000_000]
    assert paths["table"].read_text(encoding="utf-8").startswith("`toolsift bench scale`")
    assert paths["plot"].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and not list(tmp_path.glob(".*.partial"))


# --- resuming -------------------------------------------------------------------------------------------


def _write_recorded(folder: Path, recorded: dict[str, Any], **config: Any) -> None:
    full = {"needles": "toolink", "seed": 0, "queries": None, "cluster": "local", "nodes": 3, "heap": "512m",
            "shards": None, "replicas": None, "clients": 2, "seconds": 30.0, "retriever": "hybrid",
            "embedding_model": "all-MiniLM-L6-v2", "embedding_backend": "onnx", "copies": "once", **config}
    folder.mkdir(parents=True, exist_ok=True)
    (folder / RESULTS_FILE).write_text(json.dumps({**recorded, "config": full}), encoding="utf-8")


class _Model:
    """What the bench reads of an embedder before it measures (nothing is encoded in these tests)."""

    name = "all-MiniLM-L6-v2"
    backend = "onnx"
    device = "cpu"
    dimension = 384


def test_results_measured_with_other_settings_are_not_resumed_and_the_message_says_which(
        recorded: dict[str, Any], tmp_path: Path) -> None:
    from toolsift.config import Settings

    _write_recorded(tmp_path, recorded, clients=8)

    with pytest.raises(ConfigError, match=r"clients: 8 there, 2 now.*--redo"):
        run_scale_bench(Settings(), _Model(), tmp_path, [100_000], clients=2)  # type: ignore[arg-type]


def test_sizes_already_measured_are_skipped_without_touching_a_cluster(recorded: dict[str, Any], tmp_path: Path) -> None:
    from toolsift.config import Settings

    _write_recorded(tmp_path, recorded)

    results = run_scale_bench(Settings(opensearch_url="http://127.0.0.1:9"), _Model(), tmp_path,  # type: ignore[arg-type]
                              [1_000, 100_000], project=[1_000_000])

    assert results["skipped"] == [1_000, 100_000]
    kept = results["sizes"]["10000"]
    assert {k: v for k, v in kept.items() if k != "embedding"} == {
        k: v for k, v in recorded["sizes"]["10000"].items() if k != "embedding"}
    assert recorded["sizes"]["10000"]["embedding"].items() <= kept["embedding"].items()  # only derived keys added
    assert results["runs"][-1]["measured"] == []
    assert (tmp_path / "scale.png").is_file()


def test_a_size_below_the_largest_measured_is_refused(recorded: dict[str, Any], tmp_path: Path) -> None:
    from toolsift.config import Settings

    _write_recorded(tmp_path, recorded)

    with pytest.raises(ConfigError, match="below the largest size measured"):
        run_scale_bench(Settings(), _Model(), tmp_path, [5_000])  # type: ignore[arg-type]


def test_no_sizes_or_no_load_is_refused(tmp_path: Path) -> None:
    from toolsift.config import Settings

    with pytest.raises(ConfigError):
        run_scale_bench(Settings(), _Model(), tmp_path, [])  # type: ignore[arg-type]
    with pytest.raises(ConfigError):
        run_scale_bench(Settings(), _Model(), tmp_path, [1_000], seconds=0.5)  # type: ignore[arg-type]


# --- bytes by kind from the index files --------------------------------------------------------------------


def _string(text: str) -> bytes:
    raw = text.encode()
    return bytes([len(raw)]) + raw


def _entries_file(entries: list[tuple[str, int]]) -> bytes:
    """A Lucene 9 compound entries file (``.cfe``) as Lucene90CompoundFormat writes it."""
    body = struct.pack(">I", 0x3FD76C17) + _string("Lucene90CompoundEntries") + struct.pack(">I", 0)
    body += bytes(16) + b"\x00" + bytes([len(entries)])
    offset = 48
    for name, size in entries:
        body += _string(name) + struct.pack("<qq", offset, size)
        offset += size
    return body + bytes(16)  # the footer


def test_a_compound_entries_file_lists_its_files_with_their_sizes(tmp_path: Path) -> None:
    path = tmp_path / "_0.cfe"
    path.write_bytes(_entries_file([(".fdt", 2900), ("_Lucene99HnswVectorsFormat_0.vec", 1536)]))

    assert compound_entries(path) == [(".fdt", 2900), ("_Lucene99HnswVectorsFormat_0.vec", 1536)]


def test_a_file_that_is_not_a_compound_entries_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "_0.cfe"
    path.write_bytes(b"not lucene")

    with pytest.raises(ToolsiftError, match="not a Lucene file"):
        compound_entries(path)


def test_bytes_by_kind_add_every_copy_and_every_file_of_an_extension_compound_or_not(tmp_path: Path) -> None:
    uuid = "AbC123"
    primary = tmp_path / "node-1" / "nodes" / "0" / "indices" / uuid / "0" / "index"
    replica = tmp_path / "node-2" / "nodes" / "0" / "indices" / uuid / "0" / "index"
    other_index = tmp_path / "node-1" / "nodes" / "0" / "indices" / "Other" / "0" / "index"
    for folder in (primary, replica, other_index):
        folder.mkdir(parents=True)
    # the primary: one compound segment holding two vector fields' files (one extension, two files)
    (primary / "_0.cfe").write_bytes(_entries_file([
        (".fdt", 1000), ("_Lucene99HnswVectorsFormat_0.vec", 300), ("_Lucene99HnswVectorsFormat_1.vec", 200),
        ("_Lucene90_0.dvd", 500)]))
    (primary / "_0.cfs").write_bytes(bytes(2000))
    (primary / "_0.si").write_bytes(bytes(10))
    # the replica: a segment of plain files
    (replica / "_1.fdt").write_bytes(bytes(1000))
    (replica / "_1_Lucene99HnswVectorsFormat_0.vex").write_bytes(bytes(50))
    (other_index / "_0.fdt").write_bytes(bytes(99999))

    kinds = files_by_kind([tmp_path], uuid)

    assert kinds is not None
    assert (kinds["stored_fields"], kinds["vectors"], kinds["doc_values"], kinds["other"]) == (2000, 550, 500, 10)
    assert files_by_kind([tmp_path], "Missing") is None


# --- the command's sizes --------------------------------------------------------------------------------


@pytest.mark.parametrize("sizes", ["abc", "1000,-5", "", "10x"])
def test_sizes_that_are_not_numbers_of_tools_are_a_usage_error_naming_the_option(sizes: str, tmp_path: Path) -> None:
    from click.testing import CliRunner

    from toolsift.cli.main import cli

    result = CliRunner().invoke(cli, ["bench", "scale", "--sizes", sizes, "--out", str(tmp_path)])

    assert result.exit_code == 2
    assert "--sizes" in result.output


def test_sizes_take_k_and_m_suffixes_and_resume_from_the_recorded_results(recorded: dict[str, Any], tmp_path: Path) -> None:
    from click.testing import CliRunner

    from toolsift.cli.main import cli

    from toolsift.config import Settings
    from toolsift.encoders.embedding import resolve_backend, resolve_device

    settings = Settings()  # the backend the CLI will load: recorded results resume only under the same one
    backend = resolve_backend(settings.embedding_backend, resolve_device(settings.embedding_device))
    _write_recorded(tmp_path, recorded, embedding_backend=backend)

    result = CliRunner().invoke(cli, ["bench", "scale", "--sizes", "1k,10k,100K", "--project", "1m", "--out",
                                      str(tmp_path)])

    assert result.exit_code == 0, result.output
    assert "already measured" in result.output and "1,000,000 (projected)" in result.output


def test_both_needle_sets_run_into_a_folder_each_and_end_with_one_table_of_their_quality(
    recorded: dict[str, Any], tmp_path: Path
) -> None:
    from click.testing import CliRunner

    from toolsift.cli.main import cli
    from toolsift.config import Settings
    from toolsift.encoders.embedding import resolve_backend, resolve_device

    settings = Settings()
    backend = resolve_backend(settings.embedding_backend, resolve_device(settings.embedding_device))
    for needles in ("toolink", "livemcpbench"):  # measured before: the command resumes them, no cluster
        _write_recorded(tmp_path / needles, recorded, needles=needles, embedding_backend=backend)

    result = CliRunner().invoke(cli, ["bench", "scale", "--sizes", "1k,10k,100k", "--needles", "all", "--project", "",
                                      "--out", str(tmp_path)])

    assert result.exit_code == 0, result.output
    quality = result.output[result.output.index("needle quality, every set and size"):]
    assert [line.split()[0] for line in quality.splitlines()[3:] if line.strip()] == \
        ["toolink"] * 3 + ["livemcpbench"] * 3
    assert "0.600 / 0.300 / 0.200" in quality  # the 1k row's NDCG@10 of toolsift, BM25 and the dense floor


@pytest.mark.parametrize("needles", ["toolbench", "toolink,nope", ","])
def test_an_unknown_needle_set_is_a_usage_error_naming_the_sets(needles: str, tmp_path: Path) -> None:
    from click.testing import CliRunner

    from toolsift.cli.main import cli

    result = CliRunner().invoke(cli, ["bench", "scale", "--needles", needles, "--out", str(tmp_path)])

    assert result.exit_code == 2
    assert "--needles" in result.output and "toolink, livemcpbench" in result.output
