"""The ``toolsift`` command: a lazy click group over thin per-area command modules.

Subcommand modules are imported only when they run, so ``toolsift --help`` loads neither torch nor
sentence-transformers (see ``tests/unit/cli/test_imports.py``).
"""

from __future__ import annotations

import importlib
from typing import Any

import click

from toolsift.cli._context import AppContext, translate_errors

__all__ = ["cli"]

# command name -> "module:attribute" under toolsift.cli
_COMMANDS: dict[str, str] = {
    "node": "toolsift.cli.node:node",
    "ingest": "toolsift.cli.ingest:ingest",
    "search": "toolsift.cli.search:search",
    "eval": "toolsift.cli.eval:eval_command",
    "bench": "toolsift.cli.bench:bench",
    "demo": "toolsift.cli.demo:demo",
    "index": "toolsift.cli.index:index",
    "cache": "toolsift.cli.cache:cache",
    "standardize": "toolsift.cli.standardize:standardize",
    "train": "toolsift.cli.train:train",
    "learn": "toolsift.cli.learn:learn",
    "llm": "toolsift.cli.llm:llm",
    "serve": "toolsift.cli.serve:serve",
    "history": "toolsift.cli.history:history",
    "dashboards": "toolsift.cli.dashboards:dashboards",
    "keys": "toolsift.cli.keys:keys",
    "approvals": "toolsift.cli.approvals:approvals",
    "sync": "toolsift.cli.sync:sync",
    "deploy": "toolsift.cli.deploy:deploy",
}

_SHORT_HELP: dict[str, str] = {
    "node": "Install, start, stop and inspect the managed local node.",
    "ingest": "Load a tool catalog, standardise, embed and index it.",
    "search": "Search the tool index for a request.",
    "eval": "Evaluate retrieval quality on a benchmark folder.",
    "bench": "Ingest, search and reranking benchmarks; failover drill.",
    "demo": "Start the node, ingest LiveMCPBench, run a few searches.",
    "index": "Inspect index versions and aliases.",
    "cache": "Import, inspect and clear the LLM output cache.",
    "standardize": "Standardise a catalog with the LLM into an MFTR file.",
    "train": "Learn MFTR field weights, a second-stage reranker or the encoder.",
    "learn": "Learn weights from agents' feedback; A/B per tenant.",
    "llm": "Fetch the opt-in local LLM (hash-pinned GGUF).",
    "serve": "Run the search API, the MCP server, the workbench or the ranker.",
    "history": "Load tool bundles + past queries for `search --set` (PTR).",
    "dashboards": "Import the OpenSearch Dashboards saved objects.",
    "keys": "Make API keys (tenant + role) for the services.",
    "approvals": "Review changed tool definitions before agents get them.",
    "sync": "Keep running MCP servers' tools in the index (live catalogs).",
    "deploy": "Rank inside OpenSearch's own search pipeline (ml-commons).",
}


class LazyGroup(click.Group):
    """A group whose subcommands are imported on first use (click docs, 'complex applications')."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(_COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        target = _COMMANDS.get(cmd_name)
        if target is None:
            return None
        module_name, attr = target.split(":")
        command: click.Command = getattr(importlib.import_module(module_name), attr)
        return command

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        # Listing help must not import the command modules (and through them torch).
        rows = [(name, _SHORT_HELP.get(name, "")) for name in self.list_commands(ctx)]
        with formatter.section("Commands"):
            formatter.write_dl(rows)

    def invoke(self, ctx: click.Context) -> Any:
        with translate_errors():
            return super().invoke(ctx)


@click.group(cls=LazyGroup)
@click.option(
    "--config",
    "config_path",
    type=click.Path(dir_okay=False),
    envvar="TOOLSIFT_CONFIG",
    help="TOML config file (default: ./toolsift.toml when present).",
)
@click.option(
    "--opensearch-url",
    envvar="TOOLSIFT_OPENSEARCH_URL",
    help="Use this cluster instead of the managed local node.",
)
@click.option("--index", "index_alias", envvar="TOOLSIFT_INDEX", help="Index alias to use.")
@click.version_option(package_name="toolsift")
@click.pass_context
def cli(
    ctx: click.Context,
    config_path: str | None,
    opensearch_url: str | None,
    index_alias: str | None,
) -> None:
    """toolsift: tool retrieval for LLM agents on OpenSearch.

    Settings come from CLI flags, then TOOLSIFT_* environment variables, then the TOML config
    file, then defaults.
    """
    ctx.obj = AppContext(
        config_path=config_path,
        overrides={"opensearch_url": opensearch_url, "index": index_alias},
    )


if __name__ == "__main__":  # `python -m toolsift.cli.main`, as `toolsift bench failover` starts the service
    cli()
