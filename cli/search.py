"""``toolsift search``."""

from __future__ import annotations

import json
from pathlib import Path

import click

from toolsift.cli._context import AppContext, pass_app
from toolsift.cli._output import emit_json, safe_lines, table
from toolsift.cli.options import index_option, json_flag, retriever_option, top_k_option, weights_option


@click.command()
@click.argument("query", required=False)
@click.option("--structured", "structured_path", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="A structured query JSON file ({tool_needs, extracted_arguments}) instead of QUERY.")
@click.option("--level", type=click.Choice(["tool", "agent", "auto"]), default="tool", show_default=True,
              help="tool: ranked tools. agent: Tool-to-Agent retrieval, tools and agents ranked together per step "
              "(each tool need or --step), owners by Algorithm 1, the steps merged. auto: the tools, or the agents "
              "owning at least two of them.")
@click.option("--step", "steps", multiple=True, metavar="TEXT",
              help="Step-wise querying: one step (tool need) of the request; repeat it for each step. At agent level "
              "every step is its own query and the output says which steps reached each agent.")
@click.option("--decompose", is_flag=True,
              help="Split QUERY into steps with toolsift's rule-based decomposition (sentences, 'then' and "
              "'and <verb>' clauses; no LLM).")
@click.option("--merge", type=click.Choice(["max", "rrf"]), default="max", show_default=True,
              help="Agent level: how the steps' rankings are merged: max (an agent's best step score, ties by "
              "the sum) or rrf (sum of reciprocal ranks).")
@top_k_option()
@click.option("--method", type=click.Choice(["multi-field", "full-doc"]), default="multi-field", show_default=True)
@retriever_option()
@index_option("Index alias (default: the configured one).")
@click.option("--rewrite/--no-rewrite", default=True, show_default=True,
              help="Rewrite QUERY into tool needs and arguments (MFTR): a cached rewrite, else the LLM "
              "(llm_base_url) with BM25 context from the index, else the request as one tool need.")
@weights_option("Learned MFTR weights (a `toolsift train` output or its weights.json); overrides the setting.")
@click.option("--instruction", help="The agent's task instruction (e.g. ToolRet's per-query instruction): matched "
              "against descriptions and examples as one more tool need (multi-field only).")
@click.option("--ranker-url", help="Rank with the `toolsift serve ranker` service at this URL (e.g. "
              "http://127.0.0.1:8300) instead of in-process; when it cannot answer, the first-stage order "
              "is shown, marked degraded. Default: the `ranker_url` setting.")
@click.option("--reranker", help="Second-stage reranker in-process: a `toolsift train reranker` artifact, "
              "tool-rank:smollm2, tool-rank:PATH or cross-encoder:PATH. Default: the `reranker` setting.")
@click.option("--set", "set_mode", is_flag=True,
              help="Recommend a precise tool *set* (PTR) instead of a top-k list: from the index's history "
              "(`toolsift history load`) when it has one, else cold start (retrieval + a score-gap size). "
              "Retrieval is Full-Doc hybrid; each tool shows the need it covers and why it is in the set.")
@click.option("--agent", "agents", multiple=True, metavar="AGENT_ID",
              help="Only tools of this agent (its id, e.g. agent:pdf-reader-mcp-server); repeat it for several. "
              "Tool and auto level.")
@click.option("--copies", type=click.Choice(["once", "all"]), default=None,
              help="A tool found on several servers (forks, copies): answered once, naming the servers of the "
              "others (once), or every copy ranked (all). Default: the `copies` setting (once).")
@json_flag("Print JSON with per-field scores and timings.")
@pass_app
def search(
    app: AppContext,
    query: str | None,
    structured_path: Path | None,
    level: str,
    steps: tuple[str, ...],
    decompose: bool,
    merge: str,
    top_k: int,
    method: str,
    retriever: str | None,
    index_alias: str | None,
    rewrite: bool,
    weights_path: Path | None,
    instruction: str | None,
    ranker_url: str | None,
    reranker: str | None,
    set_mode: bool,
    agents: tuple[str, ...],
    copies: str | None,
    as_json: bool,
) -> None:
    """Search the tool index for QUERY and show why each tool ranked where it did."""
    from toolsift.errors import BadQueryError
    from toolsift.query.structured import StructuredQuery
    from toolsift.search import SearchBackend, SearchRequest

    if steps and (structured_path is not None or decompose):
        raise click.UsageError("--step gives the steps itself: use it without --structured and --decompose")
    if decompose and (structured_path is not None or not query):
        raise click.UsageError("--decompose splits QUERY: give a QUERY and no --structured")
    if not (query or structured_path is not None or steps):
        raise click.UsageError("give a QUERY, --structured FILE or --step TEXT")
    structured = None
    if structured_path is not None:
        try:
            data = json.loads(structured_path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise BadQueryError(f"{structured_path}: not JSON ({exc})") from exc
        structured = StructuredQuery.from_dict(data, text=query or "")
    request = SearchRequest(
        query=query or "", structured=structured, steps=steps, decompose=decompose, instruction=instruction,
        rewrite=rewrite, level="set" if set_mode else level, top_k=top_k, method=method,  # type: ignore[arg-type]
        retriever=retriever, merge=merge, index=index_alias, weights=weights_path,  # type: ignore[arg-type]
        reranker=reranker, ranker_url=ranker_url, agents=agents, copies=copies,  # type: ignore[arg-type]
    )
    client = app.client()  # an unreachable node is reported before the model loads
    response = SearchBackend(client, app.settings(), source="cli").search(request)
    if as_json:
        emit_json(response.to_dict())
    elif response.tool_set is not None:
        click.echo(safe_lines(render_set(response.tool_set, query or "")))
    else:
        click.echo(safe_lines(render_result(response.result, rewrite_source=response.rewrite_source)))


def render_set(result: object, query: str) -> str:
    """A recommended tool set: each tool with the need it covers and why it is in the set."""
    from toolsift.search import SetResult

    assert isinstance(result, SetResult)
    chosen = result.tool_set
    origin = f"history bundle {chosen.bundle_id}" if chosen.bundle_id is not None else "cold start (no history)"
    lines = [f"query: {query}  [set, {origin}, {len(chosen.members)} tool(s), {result.timings.get('total', 0):.0f} ms]",
             f"needs ({len(chosen.needs)}): " + " | ".join(chosen.needs)]
    lines.append(table(["#", "tool", "id", "need covered", "cos", "why"], [
        [i, m.name, m.tool_id, m.need, round(m.coverage, 3), f"{m.reason}: {m.why}"]
        for i, m in enumerate(chosen.members, start=1)
    ]))
    for tool, why in chosen.dropped:
        lines.append(f"dropped {tool}: {why}")
    if chosen.unsolved:
        lines.append("unsolved needs: " + " | ".join(chosen.unsolved))
    lines.append(f"size: {chosen.size_rule}")
    return "\n".join(lines)


#: What ``rewrite_source`` says, for people.
_REWRITE_SOURCES = {
    "llm": "rewritten by the LLM",
    "cache": "cached rewrite",
    "fallback": "not rewritten (no LLM configured, nothing cached)",
    "file": "from --structured",
    "off": "not rewritten",
    "steps": "steps from --step",
    "decompose": "rule-based decomposition (--decompose)",
}


def render_result(result: object, *, rewrite_source: str | None = None) -> str:
    """A readable explanation of a search result: the ranking and each field's contribution.

    Args:
        result: a :class:`~toolsift.search.SearchResult`.
        rewrite_source: where the structured query came from (``llm``, ``cache``, ``fallback``,
            ``file``, ``off``); shown with the query's tool needs and arguments when given.
    """
    from toolsift.records import RankedAgent
    from toolsift.search import SearchResult, why

    assert isinstance(result, SearchResult)
    sq = result.query
    shown = sq.text or (
        f"(structured: {len(sq.tool_needs)} tool need(s), {len(sq.extracted_arguments)} argument(s)) "
        f"{sq.tool_needs[0].user_intent}"
    )
    method = ("tool-to-agent" if result.level == "agent" else "multi-need") if result.steps else result.method
    lines = [f"query: {shown}  [{method}, {result.retriever}, {result.timings.get('total', 0):.0f} ms]"]
    if result.degraded:
        lines.append(f"degraded: {result.degraded_reason or 'the ranker did not answer'} (first-stage order)")
    if rewrite_source is not None:
        lines.append(
            f"structured query: {_REWRITE_SOURCES.get(rewrite_source, rewrite_source)} "
            f"[{rewrite_source}]: {len(sq.tool_needs)} tool need(s), {len(sq.extracted_arguments)} argument(s)"
        )
        if rewrite_source in ("llm", "cache", "file", "steps", "decompose") and result.level == "tool":
            for i, need in enumerate(sq.tool_needs, start=1):
                lines.append(f"  need {i}: {need.tool_description}")
            if sq.extracted_arguments:
                lines.append(f"  arguments: {', '.join(sq.extracted_arguments)}")
    if result.requested_level == "auto":
        lines.append(f"level auto → {result.level}: {result.level_reason}")
    if result.steps and result.level == "tool":
        lines.append(f"{len(result.steps)} text(s), the request and its needs, each its own joint tool + server "
                     f"ranking; {result.ranker}")
        for i, step in enumerate(result.steps, start=1):
            tops = ", ".join(a.name for a in step.agents[:3]) or "–"
            lines.append(f"  text {i}: {step.text}  →  {tops}")
    elif result.steps:
        lines.append(f"{len(result.steps)} step(s), each its own joint tool + agent query; {result.ranker}")
        for i, step in enumerate(result.steps, start=1):
            tops = ", ".join(a.name for a in step.agents[:3]) or "–"
            lines.append(f"  step {i}: {step.text}  →  {tops}")
    if result.level == "agent":
        def via(agent: RankedAgent) -> str:
            first = ["(its own document)" if v == agent.agent_id else v.split("/", 1)[-1] for v in agent.via[:4]]
            return ", ".join(first) + (f" (+{len(agent.via) - 4})" if len(agent.via) > 4 else "")

        lines.append(table(["#", "agent", "score", "steps", "reached via"], [
            [a.rank, a.name, round(a.score, 4), ",".join(map(str, a.steps)) or "–", via(a)] for a in result.agents
        ]))
        if result.requested_level == "auto":
            chosen = {a.agent_id for a in result.agents}
            others = [t for t in result.tools if t.agent_id not in chosen]
            if others:
                lines.append("other tools in the answer: " + ", ".join(
                    f"{t.name} ({(t.agent_id or 'no agent').removeprefix('agent:')})" for t in others))
        return "\n".join(lines)
    if result.reranker:
        lines.append(f"reranked by {result.reranker} (reranker score: its own; score: fused with the base ranker's)")
    if result.degraded or result.method == "full-doc":
        lines.append("score: OpenSearch's first-stage score")
    names = {t.doc_id: t.name for t in result.tools}
    rows = []
    for i, t in enumerate(result.tools, start=1):
        row = [i, t.name, (t.agent_id or "").removeprefix("agent:"), round(t.score, 4),
               why(t, request=sq.text, names=names), ",".join(t.missing_required)]
        if result.reranker:
            row.insert(4, "–" if t.reranker_score is None else round(t.reranker_score, 4))
        rows.append(row)
    headers = ["#", "tool", "agent", "score", "why it ranked (the terms of its score)", "missing required"]
    if result.reranker:
        headers.insert(4, "reranker")
    lines.append(table(headers, rows))
    for i, t in enumerate(result.tools, start=1):
        if t.also_on:
            servers = ", ".join((c.agent_id or c.doc_id).removeprefix("agent:") for c in t.also_on)
            lines.append(f"#{i} {t.name} is also on: {servers}")
    return "\n".join(lines)
