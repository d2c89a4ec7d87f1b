"""Issue 44, finding 7: an evaluation leaves nothing behind in the node's heap.

The MFTR evaluation asks, for every query, for the first stage's candidates and each candidate's exact
per-field scores, each parameter's score against each argument coming from nested ``inner_hits``. Asked
in one request, with those inner hits inside a ``post_filter``, OpenSearch 2.19's node query cache kept
the whole search context of every such request — every hit it had fetched, ~1.3 MB per search — once the
index had a segment of 10,000 documents or more: an evaluation over 15,545 documents left a 1 GB node at
90–94 % heap after a forced GC (~940,000 ``SearchHit`` objects), and the node answered 429 to every
later write. The retention is read where it lives: the node's JVM, with the JDK's ``jcmd`` (its class
histogram runs a full GC first, so only what is still referenced is counted).

The CI slice searches a generated catalog of 11,000+ documents in one segment as the evaluation does
(:func:`~toolsift.evaluation.mftr.signals.collect_signals`); the slow test runs ``toolsift eval mftr``
(MiniLM, fold-wise, the library call of the command) over a ToolRet set like the one of the report:
Toolink's tools and queries plus 2,300 tools of the training set, 16,000+ documents.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.catalogs import write_catalog
from tests.conftest import not_applicable
from toolsift.ingest.pipeline import ingest_catalog
from toolsift.query.structured import StructuredQuery

#: Tools of the slice's catalog, each with the same :data:`PARAMETERS` parameters: 210 × 51 documents and
#: the servers', one segment of more than 10,000 (the node's query cache caches nothing on a smaller one).
TOOLS = 210
PARAMETERS = 50
#: Searches of the slice: before the fix each one left its search context (and ~2,000 hits) behind.
SEARCHES = 24
_WORDS = ["invoice", "calendar", "weather", "shipment", "playlist", "ticket", "receipt", "forecast", "ledger",
          "route", "booking", "sensor"]
_VERBS = ["convert", "fetch", "list", "render", "schedule", "translate", "summarise", "validate", "archive",
          "export"]


def _catalog(folder: Path) -> Path:
    """An MCP catalog of :data:`TOOLS` tools on 10 servers sharing one list of parameters (few texts to embed)."""
    properties = {f"{_WORDS[p % len(_WORDS)]}_{p}": {"type": "string",
                                                     "description": f"The {_WORDS[p % len(_WORDS)]} field number {p}."}
                  for p in range(PARAMETERS)}
    servers = []
    for s in range(10):
        tools = [{"name": f"{_VERBS[(s + t) % len(_VERBS)]}_{_WORDS[(3 * s + t) % len(_WORDS)]}_{s}_{t}",
                  "description": f"{_VERBS[(s + t) % len(_VERBS)].capitalize()} the {_WORDS[(3 * s + t) % len(_WORDS)]}"
                                 f" records of team {s}, batch {t}.",
                  "inputSchema": {"type": "object", "properties": properties}}
                 for t in range(TOOLS // 10)]
        servers.append({"name": f"memory-probe-{s}", "description": f"Team {s}'s record tools.", "category": "probe",
                        "tools": {f"memory-probe-{s}": {"tools": tools}}})
    return write_catalog(folder, servers)


class NodeHeap:
    """The managed node's JVM, read with ``jcmd`` (a class histogram: a full GC, then the live objects)."""

    def __init__(self, settings: Any) -> None:
        from toolsift.config import Settings
        from toolsift.plugin_scripts import LocalNode

        managed = Settings()
        if settings.opensearch_url != managed.node_url:
            not_applicable(f"the heap is read in the managed local node's JVM; this session's node is "
                           f"{settings.opensearch_url}")
        node = LocalNode(managed)
        pid = node.status().pid
        if pid is None:
            not_applicable("the managed node's process is not this machine's")
        self.pid = pid
        self.jcmd = node.java_executable().resolve().with_name("jcmd")
        if not self.jcmd.exists():
            pytest.skip(f"no jcmd next to {node.java_executable().resolve()} (a JDK's, not a JRE's)")

    def live(self) -> dict[str, int]:
        """Live instances of the classes that hold a search's answer on the node."""
        histogram = subprocess.run([str(self.jcmd), str(self.pid), "GC.class_histogram"], capture_output=True,
                                   text=True, timeout=120, check=True).stdout
        wanted = {"org.opensearch.search.DefaultSearchContext": "search contexts",
                  "org.opensearch.search.SearchHit": "hits"}
        counts = {name: 0 for name in wanted.values()}
        for line in histogram.splitlines():
            parts = line.split()
            if len(parts) >= 4 and parts[3] in wanted:
                counts[wanted[parts[3]]] = int(parts[1])
        return counts


def _segments(client: Any, index: str) -> list[int]:
    return [int(s["docs.count"]) for s in client.cat.segments(index=index, format="json")]


def test_the_evaluations_searches_leave_no_search_context_or_hit_in_the_nodes_heap(
    client: Any, settings: Any, model: Any, tmp_path: Path
) -> None:
    from toolsift.evaluation.mftr.signals import collect_signals
    from toolsift.search import Searcher

    heap = NodeHeap(settings)
    report = ingest_catalog(client, settings, model, _catalog(tmp_path / "catalog"), approvals=False)
    assert report.ok and max(_segments(client, report.index)) >= 10_000  # where the query cache caches
    searcher = Searcher(client, settings, model, source="eval")
    queries = {f"q{i}": StructuredQuery.from_text(
        f"{_VERBS[i % len(_VERBS)]} the {_WORDS[(5 * i) % len(_WORDS)]} records of team {i % 10} with the "
        f"{_WORDS[(i + 2) % len(_WORDS)]} field", as_argument=True) for i in range(SEARCHES)}
    before = heap.live()

    signals = collect_signals(searcher, queries, "minilm", 100, {}, None, "slice", documents=False)

    after = heap.live()
    assert len(signals) == SEARCHES and all(len(s.first_stage) == 100 for s in signals.values())
    assert all(any(m.score != 0 for c in s.first_stage.values() for m in c.parameters["dense"])
               for s in signals.values())  # the parameters' scores came (nested inner hits)
    # Before the fix: 23-24 search contexts and ~45,000 hits were still referenced here.
    assert after["search contexts"] - before["search contexts"] <= 1, (before, after)
    assert after["hits"] - before["hits"] < 100, (before, after)


def _big_toolret(datasets: Path, folder: Path, extra: int = 2300) -> Path:
    """A ToolRet set like the report's: Toolink's tools and queries plus ``extra`` Seal-Tools tools of the
    training set (JSON-Schema parameters: one nested document each), 16,000+ documents in all."""
    tools = json.loads((datasets / "toolret" / "toolink" / "tools.json").read_text(encoding="utf-8"))
    added = []
    with (datasets / "train" / "tools.jsonl").open(encoding="utf-8") as lines:
        for line in lines:
            record = json.loads(line)
            if record["source"] != "seal-tools":
                continue
            added.append({"id": f"extra_tool_{len(added)}", "type": "web",
                          "documentation": {"name": record["name"], "description": record["description"],
                                            "parameters": record["parameters"], "responses": record.get("response")}})
            if len(added) == extra:
                break
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "tools.json").write_text(json.dumps(tools + added, ensure_ascii=False), encoding="utf-8")
    (folder / "queries.json").write_bytes((datasets / "toolret" / "toolink" / "queries.json").read_bytes())
    return folder


@pytest.mark.slow
def test_an_mftr_evaluation_over_16k_documents_leaves_the_nodes_heap_as_it_found_it(
    client: Any, base_settings: Any, embedder: Any, datasets: Path, tmp_path: Path
) -> None:
    from toolsift.evaluation.mftr.eval import run_mftr_eval
    from toolsift.evaluation.mftr.inputs import MFTRInputs

    heap = NodeHeap(base_settings)
    folder = _big_toolret(datasets, tmp_path / "toolink2k")
    mftr = datasets / "mftr" / "toolink"
    before = heap.live()

    result = run_mftr_eval(client, base_settings, [folder], retriever="minilm", embedder=embedder, ablations=False,
                           inputs=MFTRInputs(rewrites=(mftr / "rewritten_queries.gpt-4o-mini.json",),
                                             folds=mftr / "folds.json",
                                             hard_negatives=(mftr / "hard_negatives.bm25.json",)))

    after = heap.live()
    assert max(_segments(client, result.indices["raw"])) >= 15_000
    assert result.ablations and all(0 < row.metrics["ndcg@10"] <= 1 for row in result.ablations)
    # Before the fix: ~1.3 MB and ~1,500 hits per search stayed referenced, until the node answered 429.
    assert after["search contexts"] - before["search contexts"] <= 1, (before, after)
    assert after["hits"] - before["hits"] < 100, (before, after)
