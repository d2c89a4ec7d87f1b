"""What ``toolsift bench scale`` makes of its measurements (pure: from a recorded result).

It owns the figures a size's record holds (:data:`FIGURES`), their growth over the sizes measured
(:func:`growth`: ratio to the smallest, the exponent of a fitted power law), their projections to sizes
not measured (:func:`projections`), the tables (:func:`summary_rows`, :func:`growth_rows`,
:func:`quality_rows`, :func:`markdown_tables`), the plot (:func:`write_plot`) and the files of a run
(:func:`write_outputs`: ``scale.json``, ``scale.md``, ``scale.png``). The measuring is
:mod:`~toolsift.bench.scale_bench`'s.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from toolsift.errors import ConfigError

__all__ = [
    "DEFAULT_PROJECTIONS",
    "RESULTS_FILE",
    "TABLE_FILE",
    "PLOT_FILE",
    "Figure",
    "FIGURES",
    "POWER_LAW",
    "LOG_LINE",
    "derive_embedding",
    "growth",
    "projections",
    "summary_rows",
    "growth_rows",
    "quality_rows",
    "markdown_tables",
    "write_plot",
    "write_outputs",
]

#: Sizes each figure is projected to by default (those not measured).
DEFAULT_PROJECTIONS: tuple[int, ...] = (10_000, 100_000, 1_000_000)
RESULTS_FILE = "scale.json"
TABLE_FILE = "scale.md"
PLOT_FILE = "scale.png"
#: How deep the quality requests rank: the top 10 once a query's gold tools' variants are left out.
_DEEP = 50


# ---------------------------------------------------------------------------------------------
# The figures, their growth and projections (pure: from a recorded result)


@dataclass(frozen=True)
class Figure:
    """One figure of a size's record: where it is, how it is shown, how it is projected.

    Args:
        key: its name in ``growth`` and ``projections``.
        path: the keys leading to it inside a size's record.
        label: the column or legend text.
        scale: shown divided by this (bytes → KB).
        digits: decimals shown.
        bounded: a share in [0, 1] (quality): projected by a line in log10(N), not a power law.
        projected: projected to sizes not measured (not the embedding of the texts new at a size, which
            depends on the size before it, nor the encoder's rate, nor a size's wall time, which holds that).
    """

    key: str
    path: tuple[str, ...]
    label: str
    scale: float = 1.0
    digits: int = 1
    bounded: bool = False
    projected: bool = True

    def value(self, record: Mapping[str, Any]) -> float | None:
        """The figure in ``record`` (None when absent)."""
        node: Any = record
        for part in self.path:
            if not isinstance(node, Mapping) or part not in node:
                return None
            node = node[part]
        return float(node) if isinstance(node, (int, float)) and not isinstance(node, bool) else None

    def shown(self, value: float | None) -> str:
        return "" if value is None else f"{value / self.scale:.{self.digits}f}"


#: Every figure the bench records per size, in table order.
FIGURES: tuple[Figure, ...] = (
    Figure("embedding_s", ("embedding", "seconds"), "embedding s (new texts)", projected=False),
    Figure("embedding_cumulative_s", ("embedding", "cumulative_seconds"), "embedding s (as it grew)", projected=False),
    Figure("catalog_texts", ("embedding", "catalog_texts"), "texts embedded (catalog)", 1.0, 0),
    Figure("embedding_catalog_s", ("embedding", "catalog_seconds_at_rate"), "embedding s (catalog)"),
    Figure("embedding_texts_per_s", ("embedding", "texts_per_s"), "embedding texts/s", projected=False),
    Figure("ingest_s", ("ingest", "seconds"), "ingest s"),
    Figure("ingest_tools_per_s", ("ingest", "tools_per_s"), "ingest tools/s"),
    Figure("disk_per_tool", ("disk", "primaries_bytes_per_tool"), "disk KB/tool (primaries)", 1000.0),
    Figure("disk_total_per_tool", ("disk", "total_bytes_per_tool"), "disk KB/tool (all copies)", 1000.0),
    Figure("vectors_per_tool", ("disk", "kinds_per_tool", "vectors"), "vector files KB/tool", 1000.0),
    Figure("stored_fields_per_tool", ("disk", "kinds_per_tool", "stored_fields"), "stored fields KB/tool", 1000.0),
    Figure("doc_values_per_tool", ("disk", "kinds_per_tool", "doc_values"), "doc values KB/tool", 1000.0),
    Figure("index_heap_per_tool", ("memory", "index_heap_bytes_per_tool"), "index heap B/tool", 1.0, 0),
    Figure("jvm_heap_mb", ("memory", "jvm_heap_after_search_bytes"), "JVM heap used MB (all nodes)", 1e6, 0),
    Figure("knn_native_mb", ("memory", "knn_native_bytes"), "k-NN native MB (all nodes)", 1e6, 0),
    Figure("api_p50_ms", ("latency", "api", "p50"), "API p50 ms", 1.0, 0),
    Figure("api_p95_ms", ("latency", "api", "p95"), "API p95 ms", 1.0, 0),
    Figure("api_p99_ms", ("latency", "api", "p99"), "API p99 ms", 1.0, 0),
    Figure("floor_p50_ms", ("latency", "floor", "p50"), "floor p50 ms", 1.0, 0),
    Figure("floor_p95_ms", ("latency", "floor", "p95"), "floor p95 ms", 1.0, 0),
    Figure("floor_p99_ms", ("latency", "floor", "p99"), "floor p99 ms", 1.0, 0),
    Figure("api_over_floor_p50", ("latency", "api_over_floor_p50"), "API/floor p50", 1.0, 2),
    Figure("ndcg@10", ("quality", "ndcg@10"), "NDCG@10", 1.0, 3, bounded=True),
    Figure("recall@5", ("quality", "recall@5"), "R@5", 1.0, 3, bounded=True),
    Figure("recall@50", ("quality", f"recall@{_DEEP}"), f"R@{_DEEP} (gold within reach of a reranker)", 1.0, 3,
           bounded=True),
    Figure("recall@5_one_capability_once", ("quality", "one_capability_once", "recall@5"),
           "R@5 with one tool per copy group (oracle)", 1.0, 3, bounded=True),
    Figure("capability_recall@5", ("quality", "capability_recall@5", "default"),
           "capability R@5 (the gold or a copy of it)", 1.0, 3, bounded=True),
    Figure("capability_recall@5_all", ("quality", "capability_recall@5", "every_copy"),
           "capability R@5, every copy ranked", 1.0, 3, bounded=True),
    Figure("capability_recall@5_detected", ("quality", "capability_recall@5", "detected_once"),
           "capability R@5, one capability once (detector)", 1.0, 3, bounded=True),
    Figure("ndcg@10_all", ("quality", "copies", "all", "ndcg@10"), "NDCG@10, every copy ranked", 1.0, 3, bounded=True),
    Figure("recall@5_all", ("quality", "copies", "all", "recall@5"), "R@5, every copy ranked", 1.0, 3, bounded=True),
    Figure("capability_recall@5_once", ("quality", "capability_recall@5", "one_capability_once"),
           "capability R@5 with one tool per copy group (oracle)", 1.0, 3, bounded=True),
    Figure("ndcg@10_without_copies", ("quality", "without_near_duplicates", "ndcg@10"),
           "NDCG@10 without the gold tools' variants", 1.0, 3, bounded=True),
    Figure("near_duplicate_share", ("quality", "near_duplicate_share@10"), "top-10 share repeating a capability",
           1.0, 3, bounded=True),
    Figure("bm25_ndcg@10", ("quality", "floors", "bm25", "ndcg@10"), "BM25 NDCG@10", 1.0, 3, bounded=True),
    Figure("bm25_recall@5", ("quality", "floors", "bm25", "recall@5"), "BM25 R@5", 1.0, 3, bounded=True),
    Figure("dense_ndcg@10", ("quality", "floors", "dense", "ndcg@10"), "dense floor NDCG@10", 1.0, 3, bounded=True),
    Figure("dense_recall@5", ("quality", "floors", "dense", "recall@5"), "dense floor R@5", 1.0, 3, bounded=True),
    Figure("wall_s", ("wall_seconds",), "wall s", 1.0, 0, projected=False),
)
_BY_KEY = {f.key: f for f in FIGURES}

POWER_LAW = "power law value = a * N^b, least squares on log(value) over log(N) at the sizes measured"
LOG_LINE = "line value = c + d * log10(N), least squares at the sizes measured, cut to [0, 1]"


def _sizes(results: Mapping[str, Any]) -> list[int]:
    return sorted(int(size) for size in results.get("sizes", {}))


def _points(results: Mapping[str, Any], figure: Figure) -> list[tuple[int, float]]:
    points = []
    for size in _sizes(results):
        value = figure.value(results["sizes"][str(size)])
        if value is not None:
            points.append((size, value))
    return points


def _fit(xs: Sequence[float], ys: Sequence[float]) -> tuple[float, float] | None:
    """Least-squares (intercept, slope) of ys over xs; None without two distinct xs."""
    if len(xs) < 2 or len(set(xs)) < 2:
        return None
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)
    return my - slope * mx, slope


def _power_law(points: Sequence[tuple[int, float]]) -> tuple[float, float] | None:
    """(log a, b) of value = a * N^b, or None (fewer than two sizes, or a value not above 0)."""
    if any(v <= 0 for _, v in points):
        return None
    return _fit([math.log(n) for n, _ in points], [math.log(v) for _, v in points])


#: Fewest texts a size must have encoded for its rate to price a whole catalog's embedding.
_RATE_TEXTS = 1000


def derive_embedding(results: Mapping[str, Any]) -> None:
    """Give every size's embedding record the catalog's texts and what embedding them all costs at the
    encoder's rate (in place): the texts the size encoded or found cached, over the texts/s of the
    largest size that encoded at least ``_RATE_TEXTS`` of them. A size's own seconds depend on what the
    vector cache held before it (an earlier run, a smaller size), so they do not price a catalog; the
    rate does, and the texts grow with N.
    """
    records = [results["sizes"][str(n)] for n in _sizes(results)]
    rates = [r["embedding"]["texts_per_s"] for r in records
             if (r["embedding"].get("texts_encoded") or 0) >= _RATE_TEXTS and r["embedding"].get("texts_per_s")]
    for record in records:
        embedding = record["embedding"]
        texts = (embedding.get("texts_encoded") or 0) + (embedding.get("texts_cached") or 0)
        embedding["catalog_texts"] = texts
        if rates and texts:
            embedding["catalog_seconds_at_rate"] = round(texts / rates[-1], 1)
            embedding["rate_used"] = rates[-1]


def growth(results: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """Each figure's growth over the sizes in ``results``.

    Returns:
        figure key → ``{"values": {size: value}, "ratio_to_smallest": {size: value / value at the smallest
        size}, "exponent": b of value ∝ N^b (None with fewer than two sizes or a value not above 0)}``;
        a figure no size recorded is left out.
    """
    out: dict[str, dict[str, Any]] = {}
    for figure in FIGURES:
        points = _points(results, figure)
        if not points:
            continue
        first = points[0][1]
        fit = _power_law(points)
        out[figure.key] = {
            "values": {str(n): v for n, v in points},
            "ratio_to_smallest": {str(n): (round(v / first, 3) if first else None) for n, v in points},
            "exponent": round(fit[1], 3) if fit else None,
        }
    return out


def projections(results: Mapping[str, Any], sizes: Sequence[int]) -> dict[str, Any]:
    """Each figure projected to ``sizes`` (those not measured) from the sizes in ``results``.

    Returns:
        ``{"sizes": [...], "methods": {"power_law": ..., "log_line": ...}, "figures": {key: {"method":
        "power_law" | "log_line", size: value}}}``; a figure with fewer than two sizes measured (or, for a
        power law, a value not above 0) is left out.
    """
    measured = set(_sizes(results))
    targets = sorted(n for n in set(sizes) if n not in measured)
    figures: dict[str, dict[str, Any]] = {}
    for figure in FIGURES:
        if not figure.projected:
            continue
        points = _points(results, figure)
        if figure.bounded:
            fit = _fit([math.log10(n) for n, _ in points], [v for _, v in points])
            if fit is None or not targets:
                continue
            figures[figure.key] = {"method": "log_line", **{
                str(n): round(min(1.0, max(0.0, fit[0] + fit[1] * math.log10(n))), 4) for n in targets}}
        else:
            law = _power_law(points)
            if law is None or not targets:
                continue
            figures[figure.key] = {"method": "power_law", **{
                str(n): round(math.exp(law[0] + law[1] * math.log(n)), 3) for n in targets}}
    return {"sizes": targets, "methods": {"power_law": POWER_LAW, "log_line": LOG_LINE}, "figures": figures}


#: The printed table's columns: (header, figure keys shown "a / b / c").
_COLUMNS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("embedding s new / catalog", ("embedding_s", "embedding_catalog_s")),
    ("ingest tools/s", ("ingest_tools_per_s",)),
    ("disk KB/tool pri / all", ("disk_per_tool", "disk_total_per_tool")),
    ("KB/tool stored / doc values / vectors", ("stored_fields_per_tool", "doc_values_per_tool", "vectors_per_tool")),
    ("index heap B/tool", ("index_heap_per_tool",)),
    ("JVM heap MB / k-NN native MB", ("jvm_heap_mb", "knn_native_mb")),
    ("API ms p50/p95/p99", ("api_p50_ms", "api_p95_ms", "api_p99_ms")),
    ("floor ms p50/p95/p99", ("floor_p50_ms", "floor_p95_ms", "floor_p99_ms")),
    ("API/floor p50", ("api_over_floor_p50",)),
    ("NDCG@10 toolsift / BM25 / dense", ("ndcg@10", "bm25_ndcg@10", "dense_ndcg@10")),
    ("R@5 toolsift / BM25 / dense", ("recall@5", "bm25_recall@5", "dense_recall@5")),
    ("R@50 toolsift", ("recall@50",)),
    ("NDCG@10 without gold variants", ("ndcg@10_without_copies",)),
    ("R@5 one capability once (oracle)", ("recall@5_one_capability_once",)),
    ("NDCG@10 / R@5 every copy ranked", ("ndcg@10_all", "recall@5_all")),
    ("capability R@5 every copy / once (detector) / once (oracle)",
     ("capability_recall@5_all", "capability_recall@5_detected", "capability_recall@5_once")),
    ("top-10 repeats", ("near_duplicate_share",)),
    ("wall s", ("wall_s",)),
)


def _cell(keys: Sequence[str], value: Callable[[Figure], float | None]) -> str:
    return " / ".join(_BY_KEY[key].shown(value(_BY_KEY[key])) or "-" for key in keys)


def summary_rows(results: Mapping[str, Any]) -> tuple[list[str], list[list[str]]]:
    """The table of figures: one row per size measured, then one per projected size (marked).

    Returns:
        (headers, rows) of strings.
    """
    headers = ["tools", "layout", *(header for header, _ in _COLUMNS)]
    rows: list[list[str]] = []
    for size in _sizes(results):
        record = results["sizes"][str(size)]
        layout = record.get("layout", {})
        rows.append([f"{size:,}", f"{layout.get('shards', '?')}p x {1 + int(layout.get('replicas', 0))}",
                     *(_cell(keys, lambda f: f.value(record)) for _, keys in _COLUMNS)])
    projected = results.get("projections", {})
    figures = projected.get("figures", {})
    for size in projected.get("sizes", []):
        if not any(str(size) in found for found in figures.values()):
            continue

        def value(figure: Figure, size: int = size) -> float | None:
            found = figures.get(figure.key, {}).get(str(size))
            return float(found) if isinstance(found, (int, float)) else None

        rows.append([f"{size:,} (projected)", "", *(_cell(keys, value) for _, keys in _COLUMNS)])
    return headers, rows


#: The quality table's columns across needle sets: these of the summary's columns, in this order.
_QUALITY_COLUMNS = tuple((header, dict(_COLUMNS)[header]) for header in (
    "NDCG@10 toolsift / BM25 / dense", "R@5 toolsift / BM25 / dense", "R@50 toolsift", "top-10 repeats",
    "API/floor p50"))


def quality_rows(by_needles: Mapping[str, Mapping[str, Any]]) -> tuple[list[str], list[list[str]]]:
    """The needle quality of several needle sets' runs side by side: one row per set and size measured.

    Returns:
        (headers, rows) of strings.
    """
    headers = ["needles", "tools", "queries", *(header for header, _ in _QUALITY_COLUMNS)]
    rows: list[list[str]] = []
    for needles, results in by_needles.items():
        for size in _sizes(results):
            record = results["sizes"][str(size)]
            queries = record.get("quality", {}).get("queries")
            rows.append([needles, f"{size:,}", "" if queries is None else str(queries),
                         *(_cell(keys, lambda f: f.value(record)) for _, keys in _QUALITY_COLUMNS)])
    return headers, rows


def growth_rows(results: Mapping[str, Any]) -> tuple[list[str], list[list[str]]]:
    """Each figure's growth from the smallest to the largest size measured: both values, their ratio and
    the power law's exponent b.

    Returns:
        (headers, rows) of strings.
    """
    sizes = _sizes(results)
    table = growth(results)
    headers = ["figure", f"at {sizes[0]:,}" if sizes else "smallest", f"at {sizes[-1]:,}" if sizes else "largest",
               "ratio", "exponent b"]
    rows = []
    for figure in FIGURES:
        found = table.get(figure.key)
        if not found:
            continue
        values = found["values"]
        first, last = values[min(values, key=int)], values[max(values, key=int)]
        ratio = found["ratio_to_smallest"][max(values, key=int)]
        rows.append([figure.label, figure.shown(first), figure.shown(last),
                     "" if ratio is None else f"x{ratio:.2f}",
                     "" if found["exponent"] is None else f"{found['exponent']:.2f}"])
    return headers, rows


def _markdown(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(c.replace("|", "\\|") for c in row) + " |" for row in rows]
    return "\n".join(lines)


def markdown_tables(results: Mapping[str, Any]) -> str:
    """The figures and the growth as markdown, with what produced them."""
    config = results.get("config", {})
    env = results.get("environment", {})
    head = (f"`toolsift bench scale`: {config.get('needles')} needles, seed {config.get('seed')}, "
            f"{env.get('cluster_nodes')} node(s) ({config.get('cluster')}), {config.get('clients')} client(s) x "
            f"{config.get('seconds')} s per service and size, {env.get('cpu_count')} CPU cores, embeddings "
            f"{config.get('embedding_backend')} on {env.get('device')}.")
    projected = results.get("projections", {})
    methods = projected.get("methods", {})
    tail = ("Projections: " + "; ".join(f"{k}: {v}" for k, v in methods.items()) + ".") if projected.get("sizes") else ""
    return "\n\n".join(part for part in (head, _markdown(*summary_rows(results)), _markdown(*growth_rows(results)),
                                         tail) if part) + "\n"


#: The plot's panels: (title, figure keys).
_PANELS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("rates (per second)", ("ingest_tools_per_s", "embedding_texts_per_s")),
    ("time (s)", ("embedding_catalog_s", "ingest_s", "wall_s")),
    ("index on disk per tool (KB)", ("disk_per_tool", "disk_total_per_tool", "stored_fields_per_tool",
                                     "doc_values_per_tool", "vectors_per_tool")),
    ("memory on all nodes (MB)", ("jvm_heap_mb", "knn_native_mb")),
    ("latency through the API (ms)", ("api_p50_ms", "api_p95_ms", "api_p99_ms", "floor_p50_ms", "floor_p95_ms",
                                      "floor_p99_ms")),
    ("needle quality", ("ndcg@10", "recall@5", "ndcg@10_without_copies", "bm25_ndcg@10", "bm25_recall@5",
                        "dense_ndcg@10", "dense_recall@5", "near_duplicate_share")),
)


def write_plot(results: Mapping[str, Any], path: Path) -> Path:
    """Each panel's figures over the catalog size (log scale), measured (solid, floors dashed) and projected
    (dotted, hollow markers); written as a PNG.

    Raises:
        ConfigError: matplotlib is not installed (``pip install 'toolsift[bench]'``).
    """
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure as PlotFigure
    except ImportError:
        raise ConfigError("the scale plot needs matplotlib: pip install 'toolsift[bench]' (or pip install "
                          "matplotlib)") from None
    projected = results.get("projections", {})
    plot = PlotFigure(figsize=(15, 8.5), layout="constrained")
    FigureCanvasAgg(plot)
    axes = plot.subplots(2, 3)
    for ax, (title, keys) in zip(axes.flat, _PANELS):
        for key in keys:
            figure = _BY_KEY[key]
            points = _points(results, figure)
            if not points:
                continue
            scale = figure.scale
            xs, ys = [n for n, _ in points], [v / scale for _, v in points]
            style = "--" if key.startswith(("floor", "bm25", "dense")) else "-"
            (line,) = ax.plot(xs, ys, style, marker="o", label=figure.label)
            future = projected.get("figures", {}).get(key, {})
            ahead = [(int(n), float(v)) for n, v in future.items() if n.isdigit()]
            if ahead:
                ahead.sort()
                ax.plot([xs[-1], *(n for n, _ in ahead)], [ys[-1], *(v / scale for _, v in ahead)], ":",
                        marker="o", markerfacecolor="none", color=line.get_color())
        ax.set_xscale("log")
        if title.startswith("time") and ax.lines:  # seconds span orders of magnitude
            ax.set_yscale("log")
        ax.set_xlabel("tools in the catalog")
        ax.set_title(title)
        ax.grid(True, which="both", alpha=0.3)
        if ax.lines:
            ax.legend(fontsize="small")
    config = results.get("config", {})
    nodes = results.get("environment", {}).get("cluster_nodes")
    plot.suptitle(f"toolsift bench scale: {config.get('needles')} needles, {nodes} node(s), "
                  f"{config.get('clients')} client(s); dotted: projected")
    path.parent.mkdir(parents=True, exist_ok=True)
    plot.savefig(path, dpi=100)
    return path


def _write_json(path: Path, data: Mapping[str, Any]) -> None:
    partial = path.with_name(f".{path.name}.partial")
    partial.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    os.replace(partial, path)


def write_outputs(results: dict[str, Any], out_dir: Path, project: Sequence[int] = DEFAULT_PROJECTIONS) -> dict[str, Path]:
    """Recompute ``results``' growth and projections, then write the JSON, the markdown tables and the plot.

    Returns:
        ``{"json": ..., "table": ..., "plot": ...}``.

    Raises:
        ConfigError: matplotlib is not installed (the JSON and the tables are written first).
    """
    derive_embedding(results)
    results["growth"] = growth(results)
    results["projections"] = projections(results, project)
    paths = {"json": out_dir / RESULTS_FILE, "table": out_dir / TABLE_FILE, "plot": out_dir / PLOT_FILE}
    out_dir.mkdir(parents=True, exist_ok=True)
    _write_json(paths["json"], results)
    paths["table"].write_text(markdown_tables(results), encoding="utf-8")
    write_plot(results, paths["plot"])
    return paths
