"""``toolsift demo``: the README's main job on the embedded default."""

from __future__ import annotations

from pathlib import Path

import click

from toolsift.cli._context import AppContext, pass_app

DEMO_QUERIES: tuple[str, ...] = (
    "convert a word document to pdf",
    "search the web for recent news about electric cars",
    "what is the weather forecast in Paris tomorrow",
    "generate a word cloud chart from text",
)
DEMO_AGENT_QUERY = "read and write files on my computer"
DEMO_SET_QUERY = "Find today's top news headlines, then write them into a Word document and convert it to PDF"


def _default_catalog() -> Path:
    candidates = [
        Path.cwd() / ".." / "shared" / "datasets" / "livemcpbench" / "tools.json",
        Path(__file__).resolve().parents[2] / "shared" / "datasets" / "livemcpbench" / "tools.json",
    ]
    for candidate in candidates:
        if candidate.exists():
            return candidate.resolve()
    return candidates[0]


@click.command()
@click.option("--catalog", type=click.Path(dir_okay=False, path_type=Path),
              help="MCP catalog to ingest (default: ../shared/datasets/livemcpbench/tools.json).")
@click.option("--index", "index_alias", default="toolsift-demo", show_default=True, help="Index alias for the demo.")
@pass_app
def demo(app: AppContext, catalog: Path | None, index_alias: str) -> None:
    """Start the local node, ingest LiveMCPBench (70 servers, 527 tools) and run a few searches: tools, an
    agent, and a precise tool set (cold start: the demo catalog has no history)."""
    from toolsift.cli.search import render_result, render_set
    from toolsift.encoders.embedding import load_embedder
    from toolsift.errors import CatalogError
    from toolsift.ingest.pipeline import ingest_catalog
    from toolsift.search import Searcher
    from toolsift.sets.recommender import SetRecommender

    settings = app.settings(index=index_alias)
    catalog = catalog or _default_catalog()
    if not catalog.exists():
        raise CatalogError(f"demo catalog not found at {catalog}; pass --catalog PATH")
    if settings.uses_managed_node:
        from toolsift.plugin_scripts import ensure_running

        click.echo(f"node: making sure the local OpenSearch node is up on {settings.node_url} ...", err=True)
        ensure_running(settings)
    client = app.client()
    click.echo("embeddings: loading all-MiniLM-L6-v2 (bundled, offline) ...", err=True)
    embedder = load_embedder(settings)
    from toolsift.mappings.index import IndexManager

    # A demo index from an older toolsift (schema or model) is rebuilt beside, then swapped in.
    stale = IndexManager(client, settings.index).is_stale(embedder.name, embedder.dimension)
    report = ingest_catalog(client, settings, embedder, catalog, rebuild=stale)
    joined = client.count(
        index=settings.index,
        body={"query": {"has_parent": {"parent_type": "agent", "query": {"match_all": {}}}}},
    )["count"]
    click.echo(
        f"ingested {catalog.name} into {report.index}: {report.agents} agents, {report.tools} tools "
        f"({joined} joined to their agent); created {report.created}, unchanged {report.unchanged}, "
        f"rejected {len(report.rejected)} in {report.seconds:.1f}s"
        + (f" (compacted after {report.compaction.waited_s:.0f} s: OpenSearch keeps no second copy of each tool)"
           if report.compaction and report.compaction.compacted else "")
    )
    searcher = Searcher(client, settings, embedder)
    for query in DEMO_QUERIES:
        click.echo("")
        click.echo(render_result(searcher.search(query, top_k=5)))
    click.echo("")
    click.echo(render_result(searcher.search(DEMO_AGENT_QUERY, top_k=3, level="agent")))
    click.echo("")
    click.echo(render_set(SetRecommender(searcher).recommend(DEMO_SET_QUERY), DEMO_SET_QUERY))
    if not report.ok:
        raise SystemExit(1)
