"""``toolsift search``."""

from __future__ import annotations

import json
from pathlib import Path

import click

from toolsift.cli._context import AppContext, pass_app
from toolsift.cli._output import emit_json, table


@click.command()
@click.argument("query", required=False)
@click.option("--structured", "structured_path", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="A structured query JSON file ({tool_needs, extracted_arguments}) instead of QUERY.")
@click.option("--level", type=click.Choice(["tool", "agent"]), default="tool", show_default=True,
              help="Return tools, or agents by owner aggregation (Algorithm 1).")
@click.option("--top-k", "-k", type=click.IntRange(1, 1000), default=10, show_default=True)
@click.option("--method", type=click.Choice(["multi-field", "full-doc"]), default="multi-field", show_default=True)
@click.option("--retriever", type=click.Choice(["bm25", "minilm", "hybrid"]), help="Default: the configured one.")
@click.option("--index", "index_alias", help="Index alias (default: the configured one).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON with per-field scores and timings.")
@pass_app
def search(
    app: AppContext,
    query: str | None,
    structured_path: Path | None,
    level: str,
    top_k: int,
    method: str,
    retriever: str | None,
    index_alias: str | None,
    as_json: bool,
) -> None:
    """Search the tool index for QUERY and show why each tool ranked where it did."""
    from toolsift.embedding import load_embedder
    from toolsift.errors import BadQueryError
    from toolsift.query.structured import StructuredQuery
    from toolsift.search import Searcher

    if structured_path is not None:
        try:
            data = json.loads(structured_path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise BadQueryError(f"{structured_path}: not JSON ({exc})") from exc
        request: str | StructuredQuery = StructuredQuery.from_dict(data, text=query or "")
    elif query:
        request = query
    else:
        raise click.UsageError("give a QUERY or --structured FILE")
    settings = app.settings(index=index_alias, retriever=retriever)
    client = app.client()  # an unreachable node is reported before the model loads
    embedder = None if settings.retriever == "bm25" and method == "full-doc" else load_embedder(settings)
    searcher = Searcher(client, settings, embedder)
    result = searcher.search(request, top_k=top_k, method=method, retriever=settings.retriever, level=level)  # type: ignore[arg-type]
    if as_json:
        emit_json(result.to_dict())
        return
    click.echo(render_result(result))


def render_result(result: object) -> str:
    """A readable explanation of a search result: the ranking and each field's contribution."""
    from toolsift.search import SearchResult

    assert isinstance(result, SearchResult)
    sq = result.query
    shown = sq.text or (
        f"(structured: {len(sq.tool_needs)} tool need(s), {len(sq.extracted_arguments)} argument(s)) "
        f"{sq.tool_needs[0].user_intent}"
    )
    lines = [f"query: {shown}  [{result.method}, {result.retriever}, {result.timings.get('total', 0):.0f} ms]"]
    if result.level == "agent":
        lines.append(table(["#", "agent", "score", "via"], [
            [a.rank, a.name, round(a.score, 4), ", ".join(a.via[:3])] for a in result.agents
        ]))
        return "\n".join(lines)
    fields = ["description", "parameters", "response", "examples"]
    rows = []
    for i, t in enumerate(result.tools, start=1):
        contrib = " ".join(f"{f[:4]}={t.contributions.get(f, 0):.2f}" for f in fields) if t.contributions else ""
        rows.append([i, t.name, (t.agent_id or "").removeprefix("agent:"), round(t.score, 4), contrib,
                     ",".join(t.missing_required)])
    lines.append(table(["#", "tool", "agent", "score", "weighted field contributions", "missing required"], rows))
    return "\n".join(lines)
