"""``toolsift node``: install, start, stop and inspect the managed local OpenSearch node.

Results go to stdout, progress lines to stderr; failures surface as :class:`~toolsift.errors.NodeError`,
which the root group turns into a message and exit code.
"""

from __future__ import annotations

import dataclasses
import json

import click

from toolsift.cli._context import AppContext, pass_app
from toolsift.cli.options import json_flag
from toolsift.plugin_scripts.node import OPENSEARCH_VERSION, LocalNode

__all__ = ["node"]


def _progress(message: str) -> None:
    click.echo(message, err=True)


def _local_node(app: AppContext, ml_commons: bool = False) -> LocalNode:
    settings = app.settings(node_ml_commons=True) if ml_commons else app.settings()
    return LocalNode(settings, progress=_progress)


_ml_commons_flag = click.option(
    "--ml-commons",
    is_flag=True,
    help="With the ml-commons and job-scheduler plugins (363 MB, once), which `toolsift deploy opensearch` "
    "needs; the same as TOOLSIFT_NODE_ML_COMMONS=true.",
)


@click.group()
def node() -> None:
    """Install, start, stop and inspect the managed local OpenSearch node.

    OpenSearch 2.19.1 with the k-NN and neural-search plugins, fetched from Maven Central with your
    `mvn` (so your Maven mirrors apply) and run with Java 17 or newer. Settings: TOOLSIFT_NODE_PORT
    (default 9200), TOOLSIFT_NODE_HEAP, TOOLSIFT_NODE_CLUSTER_NAME, TOOLSIFT_NODE_START_TIMEOUT,
    TOOLSIFT_CACHE_DIR (artifacts), TOOLSIFT_DATA_DIR (data, pid file, log), TOOLSIFT_JAVA_HOME,
    TOOLSIFT_NODE_ML_COMMONS (also load ml-commons, for ranking inside OpenSearch's search pipeline).
    """


@node.command()
@click.option("--force", is_flag=True, help="Download and unpack again even when the install is complete.")
@_ml_commons_flag
@pass_app
def install(app: AppContext, force: bool, ml_commons: bool) -> None:
    """Fetch OpenSearch and the k-NN and neural-search plugins (and ml-commons, when asked) with Maven."""
    local = _local_node(app, ml_commons)
    if local.install(force=force):
        click.echo(f"installed OpenSearch {OPENSEARCH_VERSION} in {local.install_dir}")
    else:
        click.echo(f"OpenSearch {OPENSEARCH_VERSION} is already installed in {local.install_dir} (--force reinstalls)")


@node.command()
@click.option("--no-wait", is_flag=True, help="Return once launched instead of waiting for health yellow.")
@_ml_commons_flag
@pass_app
def start(app: AppContext, no_wait: bool, ml_commons: bool) -> None:
    """Start the node in the background (installing it first if needed); print its URL."""
    settings = app.settings()
    if not settings.uses_managed_node:
        click.echo(
            f"note: an OpenSearch URL is configured ({settings.opensearch_url}); toolsift commands use "
            "that cluster, not this node",
            err=True,
        )
    local = _local_node(app, ml_commons)
    local.install()
    local.start(wait=not no_wait)
    click.echo(local.url)


@node.command()
@click.option(
    "--timeout",
    type=click.FloatRange(min=0),
    default=30.0,
    show_default=True,
    help="Seconds to wait for a clean shutdown before killing the node.",
)
@pass_app
def stop(app: AppContext, timeout: float) -> None:
    """Stop the node (SIGTERM, then SIGKILL after --timeout)."""
    _local_node(app).stop(timeout=timeout)


@node.command()
@json_flag("Print the status as one JSON object.")
@pass_app
def status(app: AppContext, as_json: bool) -> None:
    """Show whether the node is installed and running, its URL, health and version."""
    local = _local_node(app)
    state = local.status()
    if as_json:
        click.echo(json.dumps(dataclasses.asdict(state), indent=2))
        return
    installed = f"yes ({local.install_dir})" if state.installed else "no (run `toolsift node install`)"
    running = f"yes (pid {state.pid})" if state.running else "no (run `toolsift node start`)"
    rows = [
        ("installed", installed),
        ("running", running),
        ("url", state.url),
        ("health", state.health or "-"),
        ("version", state.version or "-"),
        ("data", str(local.base_path)),
        ("log", str(local.log_file)),
    ]
    width = max(len(name) for name, _ in rows)
    for name, value in rows:
        click.echo(f"{name:<{width}}  {value}")


@node.command()
@click.option(
    "-n", "--lines", type=click.IntRange(min=1), default=50, show_default=True, help="How many lines to show."
)
@pass_app
def logs(app: AppContext, lines: int) -> None:
    """Print the end of the node's log."""
    local = _local_node(app)
    text = local.logs(lines)
    if not text:
        click.echo(f"no log yet at {local.log_file}", err=True)
        return
    click.echo(text)
