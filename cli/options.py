"""Options several commands share, defined once (as Pyserini's ``define_search_args``): the same
flag has the same name, type and parameter everywhere; only its help text says what it means for
the command at hand."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

__all__ = [
    "RETRIEVERS",
    "index_option",
    "retriever_option",
    "weights_option",
    "top_k_option",
    "queries_file_option",
    "json_flag",
    "json_file_option",
]

Decorator = Callable[[Callable[..., Any]], Callable[..., Any]]
#: The first-stage retrievers a command can choose.
RETRIEVERS = ["bm25", "minilm", "hybrid"]


def index_option(help: str = "Index alias (default: the configured one).") -> Decorator:  # noqa: A002
    """``--index`` → ``index_alias``."""
    return click.option("--index", "index_alias", help=help)


def retriever_option(default: str | None = None) -> Decorator:
    """``--retriever`` → ``retriever``: the configured one unless the command has its own default."""
    if default is None:
        return click.option("--retriever", type=click.Choice(RETRIEVERS), help="Default: the configured one.")
    return click.option("--retriever", type=click.Choice(RETRIEVERS), default=default, show_default=True)


def weights_option(help: str) -> Decorator:  # noqa: A002
    """``--weights`` → ``weights_path``: learned MFTR weights (an artifact folder or its weights.json)."""
    return click.option("--weights", "weights_path", type=click.Path(exists=True, path_type=Path), help=help)


def top_k_option() -> Decorator:
    """``--top-k`` / ``-k`` → ``top_k``."""
    return click.option("--top-k", "-k", type=click.IntRange(1, 1000), default=10, show_default=True)


def queries_file_option() -> Decorator:
    """``--queries`` → ``queries_file``: requests instead of a dataset's."""
    return click.option("--queries", "queries_file", type=click.Path(exists=True, dir_okay=False, path_type=Path),
                        help="Queries instead of DATASET_DIR's: JSON (strings, or objects with query/text) or one "
                        "per line.")


def json_flag(help: str | None = None) -> Decorator:  # noqa: A002
    """``--json`` → ``as_json``: print JSON instead of a table."""
    return click.option("--json", "as_json", is_flag=True, help=help)


def json_file_option(help: str) -> Decorator:  # noqa: A002
    """``--json FILE`` → ``json_out``: write the figures as JSON to a file."""
    return click.option("--json", "json_out", type=click.Path(dir_okay=False, path_type=Path), help=help)
