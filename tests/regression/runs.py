"""The runs behind docs/evaluation.md: each is one `toolsift eval` (or `train reranker`) command.

A run is executed once per test session through the same library call its CLI command makes and
gives its ``--json`` dict; :func:`rows_of` turns that dict into ``row label → metric → value``, the
shape ``published.json`` records. Slices (``…/slice``) are the CI stand-ins of runs too slow for every
CI run: the same code on fewer folds or queries, with values of their own.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

__all__ = ["Context", "KERNEL_NOISE", "Run", "RUNS", "rows_of"]


@dataclass(frozen=True)
class Context:
    """What a run needs: the node, settings, the model, the data, a scratch folder."""

    client: Any
    settings: Any
    embedder: Any
    datasets: Path
    scratch: Path


@dataclass(frozen=True)
class Run:
    """One command behind published rows.

    Args:
        command: the command as the docs print it (for failure messages and the note).
        execute: runs it in-process and returns its ``--json`` dict.
        slow: too slow for every CI run (``make test-slow`` runs it; its slice runs in CI).
        held: ``row → metrics`` that are recorded and compared, for a run some of whose metrics move
            with the CPU's floating-point kernels (see :data:`KERNEL_NOISE`); empty: every metric of
            every row it prints.
        measured_by: the run whose one execution prints this run's rows too (a slice whose rows are
            a part of another slice's): measured once, by that run.
    """

    command: str
    execute: Callable[[Context], dict[str, Any]]
    slow: bool = False
    held: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    measured_by: str | None = None

    def holds(self, row: str, metric: str) -> bool:
        """Whether ``metric`` of ``row`` is recorded and compared."""
        return not self.held or metric in self.held.get(row, ())


# --- the library calls ------------------------------------------------------------------------------


#: The Toolink slice (every CI run that reads Toolink): Toolink's whole catalog is 1,804 tools whose ingest
#: (7,000 texts embedded, 7,300 sentences through the meaning screen) takes ~4 minutes on two cores. The
#: slice keeps the queries the MFTR slices split (fold 0's first test and training queries, Toolink's own
#: and the mixed set's), the first :data:`TOOLINK_SLICE_FIRST` queries, the tools they are labelled with,
#: and every :data:`TOOLINK_SLICE_EVERY`-th other tool as distractors.
TOOLINK_SLICE_FIRST = 60
TOOLINK_SLICE_EVERY = 10
TOOLINK_SLICE_DOC = (f"Toolink's first {TOOLINK_SLICE_FIRST} queries and the MFTR slices' queries, their tools "
                     f"and every {TOOLINK_SLICE_EVERY}th other tool")


def _toolink_slice(ctx: Context) -> Path:
    """The Toolink slice's ToolRet folder (``toolink-slice``: an evaluation index of its own)."""
    source, folder = ctx.datasets / "toolret" / "toolink", ctx.scratch / "toolret-slice" / "toolink-slice"
    if folder.is_dir():
        return folder
    queries = json.loads((source / "queries.json").read_text(encoding="utf-8"))
    tools = json.loads((source / "tools.json").read_text(encoding="utf-8"))
    keep = {q["id"] for q in queries[:TOOLINK_SLICE_FIRST]}
    for names in (("toolink",), ("apibank", "toolink")):
        fold = _slice_split(ctx, names)["fold_0"]
        keep |= {*fold["test"], *fold["train"]}
    kept_queries = [q for q in queries if q["id"] in keep]
    labelled = {label["id"] for q in kept_queries for label in q.get("labels", ())}
    kept_tools = [t for i, t in enumerate(tools) if t["id"] in labelled or i % TOOLINK_SLICE_EVERY == 0]
    folder.mkdir(parents=True)
    (folder / "queries.json").write_text(json.dumps(kept_queries, ensure_ascii=False), encoding="utf-8")
    (folder / "tools.json").write_text(json.dumps(kept_tools, ensure_ascii=False), encoding="utf-8")
    return folder


def _toolret(ctx: Context, name: str, *, sliced: bool) -> Path:
    """A ToolRet folder: the shared one, or for ``toolink`` sliced, :func:`_toolink_slice`."""
    return _toolink_slice(ctx) if sliced and name == "toolink" else ctx.datasets / "toolret" / name


def _tool_level(name: str, method: str, retriever: str, *, slow: bool = False, sliced: bool = False) -> Run:
    def execute(ctx: Context) -> dict[str, Any]:
        from toolsift.evaluation.runner import run_eval

        return run_eval(ctx.client, ctx.settings, _toolret(ctx, name, sliced=sliced), method=method,  # type: ignore[arg-type]
                        retriever=retriever, embedder=ctx.embedder).to_dict()  # type: ignore[arg-type]

    where = f" (slice: {TOOLINK_SLICE_DOC})" if sliced else ""
    return Run(f"toolsift eval $D/toolret/{name} --method {method} --retriever {retriever}{where}", execute, slow=slow)


#: The whole-request and agent-level slices: the first requests (judged tasks) of LiveMCPBench.
REQUEST_SLICE = 30


def _agent_level(retriever: str, *, slow: bool = False, sliced: bool = False) -> Run:
    limit = REQUEST_SLICE if sliced else None

    def execute(ctx: Context) -> dict[str, Any]:
        from toolsift.agents.agent_eval import run_agent_eval

        return run_agent_eval(ctx.client, ctx.settings, ctx.datasets / "livemcpbench", retriever=retriever,  # type: ignore[arg-type]
                              embedder=ctx.embedder, limit=limit).to_dict()

    flag = f" --limit {limit}" if limit else ""
    return Run(f"toolsift eval $D/livemcpbench --level agent --retriever {retriever}{flag}", execute, slow=slow)


def _request_level(*, slow: bool = False, sliced: bool = False) -> Run:
    limit = REQUEST_SLICE if sliced else None

    def execute(ctx: Context) -> dict[str, Any]:
        from toolsift.evaluation.request_eval import run_request_eval

        return run_request_eval(ctx.client, ctx.settings, ctx.datasets / "livemcpbench", embedder=ctx.embedder,
                                limit=limit).to_dict()

    flag = f" --limit {limit}" if limit else ""
    return Run(f"toolsift eval $D/livemcpbench --level request{flag}", execute, slow=slow)


def _screen(name: str | None = None) -> Run:
    def execute(ctx: Context) -> dict[str, Any]:
        from toolsift.screen.screen_bench import default_injection_set, run_screen_bench

        path = default_injection_set().with_name(name) if name else None
        return run_screen_bench(path)  # the patterns and the meaning screen, as at ingest

    return Run(f"toolsift bench screen{f' screen/data/{name}' if name else ''}", execute)


def _catalog_screen(paths: tuple[str, ...], *, slow: bool = False) -> Run:
    """Real catalogs screened as at ingest: every flagged tool of a benign catalog is a false alarm."""

    def execute(ctx: Context) -> dict[str, Any]:
        from toolsift.screen.screen_bench import default_injection_set, run_catalog_screen

        data = default_injection_set().parent
        return run_catalog_screen([data / p[len("screen/data/"):] if p.startswith("screen/data/")
                                   else ctx.datasets / p for p in paths])

    catalogs = " ".join(f"--catalog {p if p.startswith('screen/') else '$D/' + p}" for p in paths)
    return Run(f"toolsift bench screen {catalogs}", execute, slow=slow)


#: Real catalogs of the shared datasets (the real-catalog false-alarm figure; Toolink's 1,804 tools and the
#: training tools are not in it yet: their meaning screen takes ~15 minutes on two cores).
_REAL_CATALOGS = ("toolret/apibank/tools.json", "toolret/toolink/tools.json", "livemcpbench/tools.json", "toollens/corpus.jsonl")


def _opensearch(*, sliced: bool = False, slow: bool = False) -> Run:
    """toolsift's ranking through OpenSearch's own search pipeline vs `toolsift search` (needs ml-commons)."""
    limit = 20 if sliced else None

    def execute(ctx: Context) -> dict[str, Any]:
        from toolsift.bench.native_bench import run_native_bench

        folders = [_toolret(ctx, name, sliced=sliced) for name in ("apibank", "toolink")]
        return run_native_bench(ctx.client, ctx.settings, ctx.embedder, folders, max_queries=limit)

    flag = f" --max-queries {limit} (slice: {TOOLINK_SLICE_DOC})" if limit else ""
    return Run(f"toolsift bench opensearch $D/toolret/apibank $D/toolret/toolink{flag}", execute, slow=slow)


def _prompts() -> Run:
    def execute(ctx: Context) -> dict[str, Any]:
        from toolsift.standardise.prompt_bench import run_prompt_bench

        return run_prompt_bench(ctx.client, ctx.settings, ctx.embedder)

    return Run("toolsift bench prompts", execute)


#: The history slice: the first test queries scored, the first past queries (scene lines) as history.
HISTORY_SLICE = (100, 1000)


def _sliced_toollens(ctx: Context) -> Path:
    """A ToolLens folder with fold-free slices of its splits (same catalog, so the same eval index)."""
    source, folder = ctx.datasets / "toollens", ctx.scratch / "toollens-slice" / "toollens"
    if folder.is_dir():
        return folder
    (folder / "qrels").mkdir(parents=True)
    for name in ("corpus.jsonl", "queries.jsonl", "scene_tool.txt"):
        (folder / name).symlink_to(source / name)
    tests, pasts = HISTORY_SLICE
    scenes = (source / "query_scene_train.txt").read_text(encoding="utf-8").splitlines()[:pasts]
    (folder / "query_scene_train.txt").write_text("\n".join(scenes) + "\n", encoding="utf-8")
    keep = {"train": {line.split("\t")[0] for line in scenes}, "test": set()}
    for split in ("test", "train"):
        header, *lines = (source / "qrels" / f"{split}.tsv").read_text(encoding="utf-8").splitlines()
        kept = []
        for line in lines:
            qid = line.split("\t")[0]
            if split == "test" and qid not in keep["test"] and len(keep["test"]) < tests:
                keep["test"].add(qid)
            if qid in keep[split]:
                kept.append(line)
        (folder / "qrels" / f"{split}.tsv").write_text("\n".join([header, *kept]) + "\n", encoding="utf-8")
    return folder


def _sets(*, history: bool, slow: bool = False, sliced: bool = False) -> Run:
    def execute(ctx: Context) -> dict[str, Any]:
        from toolsift.sets.set_eval import run_set_eval

        folder = _sliced_toollens(ctx) if sliced else ctx.datasets / "toollens"
        return run_set_eval(ctx.client, ctx.settings, folder, embedder=ctx.embedder, no_history=not history).to_dict()

    flag = "" if history else " --no-history"
    where = (f" (slice: the first {HISTORY_SLICE[0]} test queries, the first {HISTORY_SLICE[1]} past queries "
             "of query_scene_train.txt as history)") if sliced else ""
    return Run(f"toolsift eval $D/toollens --set{flag} --retriever minilm{where}", execute, slow=slow)


#: A slice's split: the first queries of fold 0's test and train parts (test, train).
SLICE_QUERIES = (20, 60)


def _mftr_inputs(ctx: Context, names: tuple[str, ...], *, standardized: bool, sliced: bool,
                 queries: tuple[int, int] = SLICE_QUERIES) -> Any:
    from toolsift.evaluation.mftr.inputs import MFTRInputs

    mftr = ctx.datasets / "mftr"
    shared = len(names) == 1  # one set: the paper's folds and mined hard negatives; mixed: seeded, mined
    folds_path: Path | None = mftr / names[0] / "folds.json" if shared else None
    if sliced:  # fold 0 over part of the queries of the split the full run uses
        test, train = queries
        folds_path = ctx.scratch / f"slice-{'-'.join(names)}-{test}-{train}.json"
        folds_path.write_text(json.dumps(_slice_split(ctx, names, queries)), encoding="utf-8")
    return MFTRInputs(
        rewrites=tuple(mftr / n / "rewritten_queries.gpt-4o-mini.json" for n in names),
        standardized=(mftr / "apibank" / "standardized_tools.gpt-4o-mini.json",) if standardized else (),
        folds=folds_path,
        hard_negatives=(mftr / names[0] / "hard_negatives.bm25.json",) if shared else (),
    )


def _slice_split(ctx: Context, names: tuple[str, ...], queries: tuple[int, int] = SLICE_QUERIES) -> dict[str, Any]:
    """A slice's split: fold 0's first ``queries`` (test, train) of the split the full run uses."""
    from toolsift.evaluation.mftr.inputs import make_folds

    if len(names) == 1:  # one set: the paper's folds
        split = json.loads((ctx.datasets / "mftr" / names[0] / "folds.json").read_text(encoding="utf-8"))
    else:  # the mixed run's seeded split of the merged queries, as run_mftr_eval makes it
        split = make_folds(_merged_query_ids(ctx, names))
    test, train = queries
    return {"fold_0": {"test": split["fold_0"]["test"][:test], "train": split["fold_0"]["train"][:train]}}


def _merged_query_ids(ctx: Context, names: tuple[str, ...]) -> list[str]:
    from toolsift.ingest.benchmarks import load_benchmark

    qids: list[str] = []
    for name in names:
        benchmark = load_benchmark(ctx.datasets / "toolret" / name)
        qids += [q for q in benchmark.qrels if q in benchmark.queries]
    return qids


def _mftr(names: tuple[str, ...], retriever: str, *, slow: bool = False, sliced: bool = False,
          reranker: Mapping[str, Any] | None = None) -> Run:
    """MFTR's protocol; a slice runs fold 0 over part of the queries, with the core rows only."""
    standardized = "apibank" in names
    every_row = reranker is None and not sliced

    def execute(ctx: Context) -> dict[str, Any]:
        from toolsift.evaluation.mftr.eval import run_mftr_eval
        from toolsift.ranker.reranker_training import RerankerTrainingConfig

        inputs = _mftr_inputs(ctx, names, standardized=standardized, sliced=sliced)
        from toolsift.ranker.rerankers import bundled_minilm_path

        config = RerankerTrainingConfig(kind="cross-encoder", device="cpu", **reranker) if reranker else None
        return run_mftr_eval(ctx.client, ctx.settings, [_toolret(ctx, n, sliced=sliced) for n in names],
                             retriever=retriever, embedder=ctx.embedder, inputs=inputs,  # type: ignore[arg-type]
                             ablations=every_row, extensions=every_row, reranker=config,
                             reranker_base=bundled_minilm_path() if reranker else None).to_dict()

    sets = " ".join(f"$D/toolret/{n}" for n in names)
    inputs = " ".join(f"--rewrites $D/mftr/{n}/rewritten_queries.gpt-4o-mini.json" for n in names)
    if len(names) == 1:
        inputs += f" --folds $D/mftr/{names[0]}/folds.json --hard-negatives $D/mftr/{names[0]}/hard_negatives.bm25.json"
    if standardized:
        inputs += " --standardized $D/mftr/apibank/standardized_tools.gpt-4o-mini.json"
    options = " --extensions" if every_row else " --no-ablations"
    if reranker:
        options = (f" --no-ablations --reranker cross-encoder --reranker-epochs {reranker['epochs']} "
                   f"--reranker-max-length {reranker['max_length']} --reranker-negatives {reranker['negatives']} "
                   f"--rerank-top {reranker['rerank_top']}")
    if sliced:
        test, train = SLICE_QUERIES
        options += (f" (slice: fold_0's first {test} test and {train} training queries"
                    + (f"; Toolink: {TOOLINK_SLICE_DOC})" if "toolink" in names else ")"))
    return Run(f"toolsift eval {sets} --method mftr --retriever {retriever} {inputs}{options}", execute, slow=slow)


#: Why the Tool-Rank slice holds its training and MFTR's dev NDCG@10 but not the reranked rows. Its
#: LoRA, trained on 49 pairs of 96 tokens, ends its epoch at a loss above chance (1.084 > ln 2), so
#: its scores for the top 10 of a query differ by float noise; min-max-normalised and fused, that noise
#: orders the list. The slice before it (232 pairs, all 101 queries) gave dev NDCG@10 at λ = 1 of 0.7041
#: (the machine that recorded it, 2026-11-24), 0.5844 (an Emerald Rapids CPU, 2026-11-26) and 0.5480
#: (that CPU with ATen and MKL held to AVX2 kernels); the last two had the same loss to five decimals,
#: and the same λ = 0 row.
KERNEL_NOISE = {"training": ("epoch 1 loss", "pairs", "positives"), "dev NDCG@10 by λ": ("λ=0.0",)}


#: The Tool-Rank slice's training queries: fold_0's first 20 training queries of APIBank.
TOOL_RANK_SLICE = (10, 20)


def _tool_rank(*, slow: bool, limit: Mapping[str, Any] | None = None) -> Run:
    """`toolsift train reranker … --reranker tool-rank`: one split, λ chosen on 15% held-out queries.

    A slice (``limit``) trains on part of the queries (:data:`TOOL_RANK_SLICE`) and holds only what
    does not move with the CPU's kernels (:data:`KERNEL_NOISE`).
    """
    recipe: dict[str, Any] = {"negatives": 3, "rerank_top": 10, "max_length": 256, "batch_size": 8,
                              "learning_rate": 5e-4, **(limit or {})}

    def execute(ctx: Context) -> dict[str, Any]:
        from toolsift.evaluation.mftr.train import train_reranker
        from toolsift.llm.server import bundled_smollm2_path
        from toolsift.ranker.reranker_training import RerankerTrainingConfig

        gguf = bundled_smollm2_path()
        config = RerankerTrainingConfig(kind="tool-rank", device="cpu", **recipe)
        inputs = _mftr_inputs(ctx, ("apibank",), standardized=True, sliced=limit is not None, queries=TOOL_RANK_SLICE)
        _, record = train_reranker(ctx.client, ctx.settings, [ctx.datasets / "toolret" / "apibank"],
                                   retriever="minilm", embedder=ctx.embedder, config=config,
                                   base_model=gguf.parent, gguf_file=gguf.name, inputs=inputs,
                                   fold="fold_0" if limit is not None else None)
        return record

    where = (f" (slice: --fold fold_0 over its first {TOOL_RANK_SLICE[1]} training queries)"
             if limit is not None else "")
    return Run("toolsift train reranker $D/toolret/apibank --retriever minilm --rewrites … --standardized … "
               "--hard-negatives … --reranker tool-rank " + " ".join(f"--{k.replace('_', '-')} {v}" for k, v in
                                                                     recipe.items()) + where, execute, slow=slow,
               held={} if slow else KERNEL_NOISE)


_CE_APIBANK = {"epochs": 2, "max_length": 160, "negatives": 5, "rerank_top": 15}
_CE_TOOLINK = {"epochs": 1, "max_length": 128, "negatives": 3, "rerank_top": 15}
#: The cross-encoder slices' recipe: one epoch, one negative per positive (the full runs' code path, a
#: fraction of their training pairs).
_CE_SLICE = {"epochs": 1, "max_length": 128, "negatives": 1, "rerank_top": 15}

_TOOL_VARIANTS = (("full-doc", "bm25"), ("full-doc", "minilm"), ("multi-field", "bm25"), ("multi-field", "minilm"),
                  ("multi-field", "hybrid"))

#: run id → run. Ids read ``<kind>/<benchmark>/<variant>``; a ``/slice`` id is the CI slice of a slow run.
RUNS: dict[str, Run] = {
    **{f"tool/apibank/{method}/{retriever}": _tool_level("apibank", method, retriever)
       for method, retriever in _TOOL_VARIANTS},
    **{f"tool/toolink/{method}/{retriever}": _tool_level("toolink", method, retriever, slow=True)
       for method, retriever in _TOOL_VARIANTS},
    **{f"tool/toolink/{method}/{retriever}/slice": _tool_level("toolink", method, retriever, sliced=True)
       for method, retriever in _TOOL_VARIANTS},
    "agent/livemcpbench/minilm": _agent_level("minilm", slow=True),
    "agent/livemcpbench/minilm/slice": _agent_level("minilm", sliced=True),
    "request/livemcpbench": _request_level(slow=True),
    "request/livemcpbench/slice": _request_level(sliced=True),
    "screen/injection-set": _screen(),
    "screen/blind-4": _screen("injection_blind_set_4.json"),
    "screen/blind-5": _screen("injection_blind_set_5.json"),
    "screen/blind-6": _screen("injection_blind_set_6.json"),
    "screen/benign-registry": _catalog_screen(("screen/data/benign_registry.json",)),
    "screen/real-catalogs": _catalog_screen(_REAL_CATALOGS, slow=True),
    # the slice: the catalog whose false alarms move (MCP usage hints addressed to the model)
    "screen/real-catalogs/slice": _catalog_screen(("livemcpbench/tools.json",)),
    "prompts/injection-set": _prompts(),
    "opensearch/toolret": _opensearch(slow=True),
    "opensearch/toolret/slice": _opensearch(sliced=True),
    "set/toollens/cold": _sets(history=False, slow=True),
    "set/toollens/cold/slice": _sets(history=False, sliced=True),
    "set/toollens/history": _sets(history=True, slow=True),
    "set/toollens/history/slice": _sets(history=True, sliced=True),
    "mftr/apibank/bm25": _mftr(("apibank",), "bm25", slow=True),
    "mftr/apibank/bm25/slice": _mftr(("apibank",), "bm25", sliced=True),
    "mftr/apibank/minilm": _mftr(("apibank",), "minilm", slow=True),
    "mftr/apibank/minilm/slice": _mftr(("apibank",), "minilm", sliced=True),
    "mftr/apibank/hybrid": _mftr(("apibank",), "hybrid", slow=True),
    "mftr/apibank/hybrid/slice": _mftr(("apibank",), "hybrid", sliced=True),
    "mftr/toolink/bm25": _mftr(("toolink",), "bm25", slow=True),
    "mftr/toolink/bm25/slice": _mftr(("toolink",), "bm25", sliced=True),
    "mftr/toolink/minilm": _mftr(("toolink",), "minilm", slow=True),
    "mftr/toolink/minilm/slice": _mftr(("toolink",), "minilm", sliced=True),
    "mftr/mixed/bm25": _mftr(("apibank", "toolink"), "bm25", slow=True),
    "mftr/mixed/bm25/slice": _mftr(("apibank", "toolink"), "bm25", sliced=True),
    "mftr/mixed/minilm": _mftr(("apibank", "toolink"), "minilm", slow=True),
    "mftr/mixed/minilm/slice": _mftr(("apibank", "toolink"), "minilm", sliced=True),
    "rerank/apibank/cross-encoder": _mftr(("apibank",), "minilm", slow=True, reranker=_CE_APIBANK),
    "rerank/apibank/cross-encoder/slice": _mftr(("apibank",), "minilm", sliced=True, reranker=_CE_SLICE),
    "rerank/toolink/cross-encoder": _mftr(("toolink",), "minilm", slow=True, reranker=_CE_TOOLINK),
    "rerank/toolink/cross-encoder/slice": _mftr(("toolink",), "minilm", sliced=True, reranker=_CE_SLICE),
    "train/apibank/tool-rank": _tool_rank(slow=True),
    "train/apibank/tool-rank/slice": _tool_rank(slow=False, limit={"max_length": 96, "negatives": 1}),
}
# MFTR's MiniLM slices print the rows their cross-encoder slices print first (same folds, same first
# stage; the reranker only adds its row): one execution each.
for _name in ("apibank", "toolink"):
    _by = f"rerank/{_name}/cross-encoder/slice"
    RUNS[f"mftr/{_name}/minilm/slice"] = replace(RUNS[_by], measured_by=_by)


# --- from a run's JSON to published rows -------------------------------------------------------------


def _flat(prefix: str, values: Mapping[str, Any]) -> dict[str, float]:
    return {f"{prefix}{k}": float(v) for k, v in values.items() if isinstance(v, (int, float))}


def rows_of(result: Mapping[str, Any]) -> dict[str, dict[str, float]]:
    """``row label → metric → value`` of one run's ``--json`` dict (the rows its table prints)."""
    rows: dict[str, dict[str, float]] = {}
    if "dev_ndcg@10" in result:  # train reranker: dev NDCG@10 by fusion weight λ, and the training itself
        rows["dev NDCG@10 by λ"] = {f"λ={k}": float(v) for k, v in result["dev_ndcg@10"].items()}
        rows["chosen λ"] = {"fusion_weight": float(result["fusion_weight"])}
        rows["training"] = {**{f"epoch {i} loss": float(v) for i, v in enumerate(result["epoch_losses"], 1)},
                            "pairs": float(result["pairs"]), "positives": float(result["positives"])}
        return rows
    if "ablations" in result:  # MFTR: Table 3's rows (+ extensions, + reranker), Table 5, pushed-down recall
        for row in result["ablations"]:
            rows[row["row"]] = _flat("", row["metrics"])
        first = result.get("first_stage") or {}
        if "default_weights" in first:
            rows["first-stage recall@100"] = {"default weights": float(first["default_weights"]),
                                              "learned weights pushed down": float(first["learned_weights"])}
        mftr = (result.get("weights") or {}).get("MFTR") or {}
        for kind, vector in (mftr.get("paper_vector_mean") or {}).items():
            rows[f"learned weights ({kind}, mean over folds)"] = dict(
                zip(("description", "parameters", "response", "examples"), map(float, vector), strict=False))
        return rows
    if "risk_kinds" in result:  # the ingest screen: case- and tool-level precision and recall
        return {name: _flat("", result[key]) for name, key in (("all", "all"), ("half A", "half_a"), ("half B", "half_b"),
                                                              ("English", "english"), ("other languages", "other_languages"))
                if result[key]["cases"]}
    if "ms_per_tool" in result and "catalogs" in result:  # real catalogs screened: tools flagged (false alarms)
        return {"all catalogs": {"tools": float(result["tools"]), "flagged": float(result["flagged"])},
                **{Path(row["catalog"]).parent.name + "/" + Path(row["catalog"]).name:
                   {"tools": float(row["tools"]), "flagged": float(row["flagged"])} for row in result["catalogs"]},
                # a catalog the screen learnt from in part: its servers the screen never read
                **{Path(row["catalog"]).parent.name + "/" + Path(row["catalog"]).name + " · servers not trained on":
                   {"tools": float(row["unseen"]["tools"]), "flagged": float(row["unseen"]["flagged"])}
                   for row in result["catalogs"] if "unseen" in row}}
    if "standardise" in result and "rewrite" in result:  # hostile tool text against the LLM prompts
        return {"standardise": _flat("", result["standardise"]), "rewrite": _flat("", result["rewrite"])}
    if "equivalent" in result:  # OpenSearch-native ranking: equivalence per dataset (latency is a bench print)
        keys = ("ndcg@10_toolsift", "ndcg@10_opensearch", "ndcg@10_difference", "identical_top10", "n_queries")
        return {row["dataset"]: {k: float(row[k]) for k in keys} for row in result["datasets"]}
    if result.get("level") == "request":  # whole requests: every row on all tasks and on each half
        return {f"{row['name']}{part}": _flat("", row[key]) for row in result["rows"]
                for key, part in (("metrics", ""), ("half_a", " · half A"), ("half_b", " · half B"))}
    if "rows" in result:  # agent level, sets
        return {row["row"]: _flat("", row["metrics"]) for row in result["rows"]}
    return {f"{result['method']} · {result['retriever']}": _flat("", result["metrics"])}
