"""Readers for tool-retrieval benchmark folders: queries and qrels in the BEIR / ir_measures shapes.

Three folder layouts are recognised by :func:`detect_benchmark_format`:

* ``"toolret"``: ``tools.json`` + ``queries.json`` (ToolRet, e.g. APIBank and Toolink);
* ``"beir"``: ``corpus.jsonl`` + ``queries.jsonl`` + ``qrels/<split>.tsv`` (e.g. ToolLens);
* ``"livemcpbench"``: ``tools.json`` (MCP servers) + ``all_annotations.json`` (LiveMCPBench).

Only queries and relevance judgements are read here; the tool catalog itself is the ingest loaders'
business, so a :class:`Benchmark` names its catalog file and that file's loader format
(``catalog_path``, ``catalog_format``) instead of holding tools.
"""

from __future__ import annotations

import csv
import json
import re
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toolsift.errors import CatalogError

__all__ = [
    "read_json",
    "read_jsonl",
    "Benchmark",
    "ToolIdFor",
    "BENCHMARK_FORMATS",
    "detect_benchmark_format",
    "load_benchmark",
    "load_toolret_benchmark",
    "load_beir_benchmark",
    "load_livemcpbench_benchmark",
    "load_folds",
    "benchmark_slug",
]

#: Maps an MCP server's name and one of its tool names to the tool id used in the index.
ToolIdFor = Callable[[str, str], str]

#: The benchmark folder formats :func:`load_benchmark` reads.
BENCHMARK_FORMATS: tuple[str, ...] = ("toolret", "beir", "livemcpbench")

# The one split of a benchmark that ships no split files: the whole set, as the papers evaluate it.
_WHOLE_SET_SPLIT = "test"


@dataclass(frozen=True)
class Benchmark:
    """A benchmark's queries and relevance judgements, plus where its tool catalog lives.

    Args:
        name: the folder's name (``"apibank"``, ``"toollens"``, ...).
        path: the benchmark folder, resolved.
        format: the folder format, one of :data:`BENCHMARK_FORMATS`.
        queries: query id → query text, for the queries of the loaded split.
        qrels: query id → tool id → relevance grade (ir_measures / BEIR shape). Queries without any
            judged tool have no entry.
        catalog_path: the file holding the tools (``tools.json`` or ``corpus.jsonl``).
        catalog_format: the ingest loader format for ``catalog_path``: ``"toolret"``, ``"beir"`` or
            ``"mcp"``.
        splits: split name → query ids. BEIR folders list every ``qrels/*.tsv`` file; formats
            without split files have one split, ``"test"``, holding every query.
        extra: format-specific details, documented by each loader (e.g. LiveMCPBench's steps and
            the annotated tool names that the catalog lacks).
    """

    name: str
    path: Path
    format: str
    queries: dict[str, str]
    qrels: dict[str, dict[str, int]]
    catalog_path: Path
    catalog_format: str
    splits: dict[str, list[str]]
    extra: Mapping[str, Any] = field(default_factory=dict)


# ---------------------------------------------------------------------------------------------
# File reading and validation


@contextmanager
def _reading(path: Path) -> Iterator[None]:
    """Turn a missing, undecodable or unreadable ``path`` met in the block into a :class:`CatalogError`
    naming it."""
    try:
        yield
    except FileNotFoundError:
        raise CatalogError(f"{path}: file not found") from None
    except UnicodeDecodeError as exc:
        raise CatalogError(f"{path}: not UTF-8 text ({exc.reason})") from exc
    except OSError as exc:
        raise CatalogError(f"{path}: cannot be read ({exc.strerror})") from exc


def read_json(path: Path) -> Any:
    """A JSON file's value; a missing, malformed or unreadable file is a :class:`CatalogError` naming it."""
    with _reading(path):
        try:
            with path.open(encoding="utf-8") as handle:
                return json.load(handle)
        except json.JSONDecodeError as exc:
            raise CatalogError(
                f"{path}: malformed JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}"
            ) from exc


def read_jsonl(path: Path) -> Iterator[tuple[int, dict[str, object]]]:
    """(line number, object) for every non-blank line; a bad file or line is a :class:`CatalogError` naming it."""
    with _reading(path), path.open(encoding="utf-8") as handle:
        for line_no, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as exc:
                raise CatalogError(
                    f"{path}: malformed JSON on line {line_no}, column {exc.colno}: {exc.msg}"
                ) from exc
            if not isinstance(record, dict):
                raise CatalogError(f"{path}: line {line_no} is not a JSON object")
            yield line_no, record


def _expect_list(value: object, path: Path, where: str) -> list[object]:
    if not isinstance(value, list):
        raise CatalogError(f"{path}: {where} must be a JSON list, got {type(value).__name__}")
    return value


def _expect_object(value: object, path: Path, where: str) -> dict[str, object]:
    if not isinstance(value, dict):
        raise CatalogError(f"{path}: {where} must be a JSON object, got {type(value).__name__}")
    return value


def _expect_str(record: Mapping[str, object], key: str, path: Path, where: str) -> str:
    value = record.get(key)
    if not isinstance(value, str):
        found = "missing" if value is None else f"a {type(value).__name__}"
        raise CatalogError(f"{path}: {where}: field {key!r} must be a string, is {found}")
    return value


def _expect_grade(value: object, path: Path, where: str) -> int:
    # bool is an int subclass; a "relevance": true would otherwise pass as grade 1 unnoticed.
    if isinstance(value, bool) or not isinstance(value, int):
        raise CatalogError(f"{path}: {where}: relevance must be an integer, got {value!r}")
    return value


def _queries(
    path: Path, items: list[object], noun: str, id_key: str, text_key: str
) -> Iterator[tuple[str, str, dict[str, object], str]]:
    """``(id, text, record, where)`` for each of a benchmark file's query records, in order: an object
    with a unique id under ``id_key`` and its text under ``text_key``; ``where`` names it in errors
    (``"<noun> [<i>] (<id_key> '<id>')"``).

    Raises:
        CatalogError: an item is not such an object, or its id repeats.
    """
    seen: set[str] = set()
    for index, item in enumerate(items):
        where = f"{noun} [{index}]"
        record = _expect_object(item, path, where)
        qid = _expect_str(record, id_key, path, where)
        where = f"{noun} [{index}] ({id_key} {qid!r})"
        if qid in seen:
            raise CatalogError(f"{path}: {where}: duplicate {noun} id")
        seen.add(qid)
        yield qid, _expect_str(record, text_key, path, where), record, where


def _resolve_folder(path: str | Path) -> Path:
    root = Path(path).expanduser().resolve()
    if not root.exists():
        raise CatalogError(f"{root}: benchmark folder not found")
    if not root.is_dir():
        raise CatalogError(f"{root}: not a folder (a benchmark is a folder of files)")
    return root


# ---------------------------------------------------------------------------------------------
# Format detection and dispatch


def benchmark_slug(name: str) -> str:
    """A benchmark's name as its eval index (``toolsift-eval-<slug>``) and its eval runs' query set spell it."""
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")


def detect_benchmark_format(path: str | Path) -> str:
    """Tell which benchmark format a folder holds, from the files present.

    Args:
        path: the benchmark folder.

    Returns:
        ``"livemcpbench"`` when it has ``all_annotations.json``, ``"toolret"`` when it has
        ``queries.json``, ``"beir"`` when it has ``corpus.jsonl``, ``queries.jsonl`` or ``qrels/``.
        The loader then checks that the format's other files are there.

    Raises:
        CatalogError: the folder does not exist or matches no format (the message says which files
            each format needs).
    """
    root = _resolve_folder(path)
    if (root / "all_annotations.json").is_file():
        return "livemcpbench"
    if (root / "queries.json").is_file():
        return "toolret"
    if any((root / name).exists() for name in ("corpus.jsonl", "queries.jsonl", "qrels")):
        return "beir"
    raise CatalogError(
        f"{root}: not a benchmark folder; expected tools.json + queries.json (ToolRet), "
        "corpus.jsonl + queries.jsonl + qrels/<split>.tsv (BEIR) or tools.json + "
        "all_annotations.json (LiveMCPBench)"
    )


def load_benchmark(
    path: str | Path,
    split: str = "test",
    *,
    tool_id_for: ToolIdFor | None = None,
) -> Benchmark:
    """Read a benchmark folder of any format :func:`detect_benchmark_format` recognises.

    Args:
        path: the benchmark folder.
        split: the split to load. BEIR folders have one per ``qrels/<split>.tsv``; ToolRet and
            LiveMCPBench folders have only ``"test"``, the whole set (for MFTR's cross-validation
            folds see :func:`load_folds`).
        tool_id_for: LiveMCPBench only: maps (server name, tool name) to the catalog's tool id; see
            :func:`load_livemcpbench_benchmark`.

    Returns:
        The benchmark's queries and qrels for ``split``.

    Raises:
        CatalogError: the folder, a file it needs, or the split is missing, or a file is malformed;
            the message names the file.
    """
    benchmark_format = detect_benchmark_format(path)
    if benchmark_format == "beir":
        return load_beir_benchmark(path, split)
    if split != _WHOLE_SET_SPLIT:
        raise CatalogError(
            f"{Path(path)}: a {benchmark_format} benchmark has no {split!r} split, only "
            f"{_WHOLE_SET_SPLIT!r} (the whole set); cross-validation folds come from load_folds()"
        )
    if benchmark_format == "toolret":
        return load_toolret_benchmark(path)
    return load_livemcpbench_benchmark(path, tool_id_for=tool_id_for)


# ---------------------------------------------------------------------------------------------
# ToolRet


def _benchmark(
    root: Path,
    fmt: str,
    queries: dict[str, str],
    qrels: dict[str, dict[str, int]],
    catalog_path: Path,
    catalog_format: str,
    extra: Mapping[str, Any],
    *,
    splits: dict[str, list[str]] | None = None,
) -> Benchmark:
    """The :class:`Benchmark` a loader read from the folder ``root``; without ``splits``, the folder
    has one split, the whole set."""
    return Benchmark(name=root.name, path=root, format=fmt, queries=queries, qrels=qrels, catalog_path=catalog_path,
                     catalog_format=catalog_format,
                     splits=splits if splits is not None else {_WHOLE_SET_SPLIT: list(queries)}, extra=extra)


def _coverage(qrels: dict[str, dict[str, int]], catalog_ids: set[str], duplicates: int) -> dict[str, Any]:
    """The ``extra`` entries on how the judgements meet the catalog: its size, the judged tools it lacks
    (sorted), and how many judgements repeated a (query, tool) pair."""
    missing = sorted({tool_id for grades in qrels.values() for tool_id in grades} - catalog_ids)
    return {"catalog_size": len(catalog_ids), "tools_missing_from_catalog": missing,
            "duplicate_judgements": duplicates}


def _tool_ids(tools_path: Path) -> set[str]:
    ids: set[str] = set()
    for index, item in enumerate(_expect_list(read_json(tools_path), tools_path, "the file")):
        record = _expect_object(item, tools_path, f"tool [{index}]")
        ids.add(_expect_str(record, "id", tools_path, f"tool [{index}]"))
    return ids


def load_toolret_benchmark(path: str | Path) -> Benchmark:
    """Read a ToolRet folder: ``queries.json`` for queries and qrels, ``tools.json`` the catalog.

    ``queries.json`` is a list of ``{id, query, instruction, labels: [{id, doc, relevance}],
    category}``; the query text is ``query``, and each label gives one qrels entry with its
    ``relevance`` grade.

    ``extra`` holds ``instructions`` (query id → ToolRet's task instruction), ``categories`` (query
    id → category), ``catalog_size`` (tools in ``tools.json``), ``tools_missing_from_catalog``
    (labelled tool ids that ``tools.json`` lacks, sorted; they stay in the qrels) and
    ``duplicate_judgements`` (labels repeating a tool already labelled for the same query; the
    higher grade is kept).

    Args:
        path: the folder.

    Returns:
        The benchmark, with one split, ``"test"``, holding every query.

    Raises:
        CatalogError: a file is missing or malformed, or a query id repeats; the message names the
            file and the record.
    """
    root = _resolve_folder(path)
    queries_path, tools_path = root / "queries.json", root / "tools.json"
    if not tools_path.is_file():
        raise CatalogError(f"{tools_path}: file not found (a ToolRet folder needs it)")
    catalog_ids = _tool_ids(tools_path)

    queries: dict[str, str] = {}
    qrels: dict[str, dict[str, int]] = {}
    instructions: dict[str, str] = {}
    categories: dict[str, str] = {}
    duplicates = 0
    items = _expect_list(read_json(queries_path), queries_path, "the file")
    for qid, text, record, where in _queries(queries_path, items, "query", "id", "query"):
        queries[qid] = text
        if isinstance(record.get("instruction"), str):
            instructions[qid] = str(record["instruction"])
        if isinstance(record.get("category"), str):
            categories[qid] = str(record["category"])
        grades: dict[str, int] = {}
        for label_index, label in enumerate(
            _expect_list(record.get("labels"), queries_path, f"{where} labels")
        ):
            label_where = f"{where} label [{label_index}]"
            label_record = _expect_object(label, queries_path, label_where)
            tool_id = _expect_str(label_record, "id", queries_path, label_where)
            grade = _expect_grade(label_record.get("relevance"), queries_path, label_where)
            if tool_id in grades:
                duplicates += 1
                grade = max(grade, grades[tool_id])
            grades[tool_id] = grade
        if grades:
            qrels[qid] = grades

    extra = {"instructions": instructions, "categories": categories, **_coverage(qrels, catalog_ids, duplicates)}
    return _benchmark(root, "toolret", queries, qrels, tools_path, "toolret", extra)


# ---------------------------------------------------------------------------------------------
# BEIR


def _read_qrels_tsv(path: Path) -> tuple[dict[str, dict[str, int]], int]:
    # Returns the qrels and how many lines repeated an earlier (query, tool) pair.
    qrels: dict[str, dict[str, int]] = {}
    duplicates = 0
    with _reading(path), path.open(encoding="utf-8", newline="") as handle:
        for line_no, row in enumerate(csv.reader(handle, delimiter="\t"), start=1):
            if not row or not "".join(row).strip():
                continue
            if line_no == 1 and row[0].strip() == "query-id":
                continue
            if len(row) != 3:
                raise CatalogError(
                    f"{path}: line {line_no}: expected 3 tab-separated columns "
                    f"(query-id, corpus-id, score), got {len(row)}"
                )
            qid, tool_id, score = (cell.strip() for cell in row)
            try:
                grade = int(score)
            except ValueError:
                raise CatalogError(
                    f"{path}: line {line_no}: score {score!r} is not an integer"
                ) from None
            grades = qrels.setdefault(qid, {})
            if tool_id in grades:
                duplicates += 1
                grade = max(grade, grades[tool_id])
            grades[tool_id] = grade
    return qrels, duplicates


def load_beir_benchmark(path: str | Path, split: str = "test") -> Benchmark:
    """Read a BEIR folder: ``queries.jsonl``, ``qrels/<split>.tsv``, ``corpus.jsonl`` the catalog.

    Every ``qrels/*.tsv`` (header ``query-id corpus-id score``) becomes a split; the benchmark holds
    the qrels of ``split`` and only the queries that split judges. A (query, tool) pair listed
    twice is judged once, with the higher grade.

    ``extra`` holds ``split`` (the loaded split), ``catalog_size`` (records in ``corpus.jsonl``),
    ``tools_missing_from_catalog`` (judged tool ids that ``corpus.jsonl`` lacks, sorted; they
    stay in the qrels) and ``duplicate_judgements`` (lines of the split's qrels file that repeat
    an earlier pair).

    Args:
        path: the folder.
        split: the qrels file to use, without ``.tsv``.

    Returns:
        The benchmark restricted to ``split``.

    Raises:
        CatalogError: a file is missing or malformed, the split does not exist (the message lists
            those that do), or a judged query has no text in ``queries.jsonl``.
    """
    root = _resolve_folder(path)
    queries_path, corpus_path, qrels_dir = (
        root / "queries.jsonl",
        root / "corpus.jsonl",
        root / "qrels",
    )
    for required in (queries_path, corpus_path):
        if not required.is_file():
            raise CatalogError(f"{required}: file not found (a BEIR folder needs it)")
    if not qrels_dir.is_dir():
        raise CatalogError(f"{qrels_dir}: folder not found (a BEIR folder needs qrels/<split>.tsv)")
    split_files = {tsv.stem: tsv for tsv in sorted(qrels_dir.glob("*.tsv"))}
    if split not in split_files:
        available = ", ".join(split_files) or "none"
        raise CatalogError(
            f"{qrels_dir / (split + '.tsv')}: file not found; available splits: {available}"
        )
    read = {name: _read_qrels_tsv(tsv) for name, tsv in split_files.items()}
    split_qrels = {name: qrels for name, (qrels, _) in read.items()}
    qrels, duplicates = read[split]

    texts: dict[str, str] = {}
    for line_no, record in read_jsonl(queries_path):
        where = f"line {line_no}"
        qid = _expect_str(record, "_id", queries_path, where)
        if qid in qrels:
            texts[qid] = _expect_str(record, "text", queries_path, f"{where} (id {qid!r})")
    unknown = [qid for qid in qrels if qid not in texts]
    if unknown:
        raise CatalogError(
            f"{queries_path}: {len(unknown)} query ids of {split_files[split].name} have no text "
            f"here, e.g. {unknown[:5]}"
        )

    catalog_ids = {
        _expect_str(record, "_id", corpus_path, f"line {line_no}")
        for line_no, record in read_jsonl(corpus_path)
    }
    return _benchmark(
        root, "beir", {qid: texts[qid] for qid in qrels}, qrels, corpus_path, "beir",
        {"split": split, **_coverage(qrels, catalog_ids, duplicates)},
        splits={name: list(judged) for name, judged in split_qrels.items()},
    )


# ---------------------------------------------------------------------------------------------
# LiveMCPBench

# "1. step", "2) step": the numbering LiveMCPBench annotators use for Steps and Tools.
_NUMBERED_ITEM = re.compile(r"^\s*\d+\s*[.)](?:\s+|$)")


def _numbered_items(text: str) -> list[str]:
    items: list[str] = []
    for line in text.splitlines():
        if not line.strip():
            continue
        marker = _NUMBERED_ITEM.match(line)
        if marker is not None:
            items.append(line[marker.end() :].strip())
        elif items:
            # An unnumbered line continues the item above it.
            items[-1] = f"{items[-1]} {line.strip()}"
        else:
            items.append(line.strip())
    return [item for item in items if item]


def _tool_owners(tools_path: Path) -> dict[str, list[str]]:
    owners: dict[str, list[str]] = {}
    for index, item in enumerate(_expect_list(read_json(tools_path), tools_path, "the file")):
        where = f"server [{index}]"
        server = _expect_object(item, tools_path, where)
        server_name = _expect_str(server, "name", tools_path, where)
        where = f"server [{index}] ({server_name!r})"
        listings = _expect_object(server.get("tools"), tools_path, f"{where} tools")
        for key, listing in listings.items():
            listing_where = f"{where} tools.{key}"
            tool_list = _expect_object(listing, tools_path, listing_where).get("tools")
            for tool_index, tool in enumerate(
                _expect_list(tool_list, tools_path, f"{listing_where}.tools")
            ):
                tool_where = f"{listing_where}.tools[{tool_index}]"
                tool_name = _expect_str(
                    _expect_object(tool, tools_path, tool_where), "name", tools_path, tool_where
                )
                servers = owners.setdefault(tool_name, [])
                if server_name not in servers:
                    servers.append(server_name)
    return owners


def load_livemcpbench_benchmark(
    path: str | Path,
    *,
    tool_id_for: ToolIdFor | None = None,
) -> Benchmark:
    """Read a LiveMCPBench folder: ``all_annotations.json`` tasks, ``tools.json`` MCP servers.

    Queries are each task's ``Question``, keyed by ``task_id``. Qrels are at tool level, grade 1
    for each tool named in the task's ``Annotator Metadata`` → ``Tools`` list. An annotation names
    a tool only, so its server is looked up in ``tools.json``:

    * a name owned by one server resolves to it;
    * a name several servers share (``write_file``, ``fetch``, ``add_table``, ...) resolves to the
      candidates that also own another, unambiguous tool of the same task; if that leaves none, all
      candidates are relevant. Each such case is listed in ``extra["ambiguous_tools"]``;
    * a name no server owns cannot be judged and is listed in ``extra["unresolved_tools"]``. A task
      whose every tool is unresolved keeps its query but has no qrels entry.

    ``extra`` holds, per task id: ``steps`` (the ``Steps`` text split into one string per numbered
    step, for step-wise querying), ``annotated_tools`` (the tool names as annotated, in order),
    ``servers`` (the ground-truth servers: owners of the resolved tools, for agent-level
    evaluation), ``categories``, ``ambiguous_tools`` (task → tool name → servers chosen) and
    ``unresolved_tools`` (task → names absent from ``tools.json``; only tasks that have some).

    Args:
        path: the folder.
        tool_id_for: maps (server name, tool name) to the tool id the catalog is indexed under; the
            server name is the ``name`` field of the server's entry in ``tools.json`` (e.g.
            ``"Office-Word-MCP-Server"``). The MCP ingest loader owns that id scheme, so pass its
            function here. Default: the raw ``"<server name>/<tool name>"``.

    Returns:
        The benchmark, with one split, ``"test"``, holding every task.

    Raises:
        CatalogError: a file is missing or malformed, or a task id repeats; the message names the
            file and the record.

    References:
        LiveMCPBench (Mo et al., 2025), ``annotated_data/all_annotations.json``; Tool-to-Agent
        Retrieval §2 (step-wise querying) and §3 (LiveMCPBench evaluation protocol).
    """
    root = _resolve_folder(path)
    annotations_path, tools_path = root / "all_annotations.json", root / "tools.json"
    if not tools_path.is_file():
        raise CatalogError(f"{tools_path}: file not found (a LiveMCPBench folder needs it)")
    owners = _tool_owners(tools_path)

    def make_id(server_name: str, tool_name: str) -> str:
        if tool_id_for is None:
            return f"{server_name}/{tool_name}"
        return tool_id_for(server_name, tool_name)

    queries: dict[str, str] = {}
    qrels: dict[str, dict[str, int]] = {}
    steps: dict[str, list[str]] = {}
    annotated: dict[str, list[str]] = {}
    servers_of: dict[str, list[str]] = {}
    categories: dict[str, str] = {}
    ambiguous: dict[str, dict[str, list[str]]] = {}
    unresolved: dict[str, list[str]] = {}
    tasks = _expect_list(read_json(annotations_path), annotations_path, "the file")
    for task_id, text, task, where in _queries(annotations_path, tasks, "task", "task_id", "Question"):
        queries[task_id] = text
        if isinstance(task.get("category"), str):
            categories[task_id] = str(task["category"])
        metadata = _expect_object(
            task.get("Annotator Metadata"), annotations_path, f"{where} 'Annotator Metadata'"
        )
        meta_where = f"{where} 'Annotator Metadata'"
        steps_text = _expect_str(metadata, "Steps", annotations_path, meta_where)
        steps[task_id] = _numbered_items(steps_text)
        names = list(
            dict.fromkeys(
                _numbered_items(_expect_str(metadata, "Tools", annotations_path, meta_where))
            )
        )
        annotated[task_id] = names

        # Servers that own an unambiguous tool of this task settle which owner a shared name means.
        anchors = {owners[name][0] for name in names if len(owners.get(name, ())) == 1}
        chosen: list[tuple[str, str]] = []
        for name in names:
            candidates = owners.get(name, [])
            if not candidates:
                unresolved.setdefault(task_id, []).append(name)
                continue
            if len(candidates) > 1:
                candidates = [s for s in candidates if s in anchors] or candidates
                ambiguous.setdefault(task_id, {})[name] = candidates
            chosen.extend((server, name) for server in candidates)
        servers_of[task_id] = list(dict.fromkeys(server for server, _ in chosen))
        if chosen:
            qrels[task_id] = {make_id(server, name): 1 for server, name in chosen}

    return _benchmark(
        root, "livemcpbench", queries, qrels, tools_path, "mcp",
        {
            "steps": steps,
            "annotated_tools": annotated,
            "servers": servers_of,
            "categories": categories,
            "ambiguous_tools": ambiguous,
            "unresolved_tools": unresolved,
        },
    )


# ---------------------------------------------------------------------------------------------
# Cross-validation folds


def load_folds(path: str | Path) -> dict[str, dict[str, list[str]]]:
    """Read MFTR's cross-validation folds (``mftr/<set>/folds.json``).

    The file maps each fold name to its ``train`` and ``test`` query ids:
    ``{"fold_0": {"train": [...], "test": [...]}, ...}``.

    Args:
        path: the ``folds.json`` file, or the folder holding it.

    Returns:
        Fold name → ``{"train": [query ids], "test": [query ids]}``, in file order.

    Raises:
        CatalogError: the file is missing or malformed, a fold lacks ``train`` or ``test``, an id
            is not a string, or a fold's train and test sets overlap (that would leak test queries
            into training).
    """
    file = Path(path).expanduser().resolve()
    if file.is_dir():
        file = file / "folds.json"
    data = _expect_object(read_json(file), file, "the file")
    folds: dict[str, dict[str, list[str]]] = {}
    for fold_name, fold in data.items():
        fold_record = _expect_object(fold, file, f"fold {fold_name!r}")
        parts: dict[str, list[str]] = {}
        for part in ("train", "test"):
            ids = _expect_list(fold_record.get(part), file, f"fold {fold_name!r} {part!r}")
            if not all(isinstance(qid, str) for qid in ids):
                raise CatalogError(f"{file}: fold {fold_name!r} {part!r}: ids must be strings")
            parts[part] = [str(qid) for qid in ids]
        overlap = set(parts["train"]) & set(parts["test"])
        if overlap:
            raise CatalogError(
                f"{file}: fold {fold_name!r}: {len(overlap)} query ids are in both train and "
                f"test, e.g. {sorted(overlap)[:5]}"
            )
        folds[fold_name] = parts
    return folds
