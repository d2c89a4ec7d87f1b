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
from toolsift.plugin_scripts.cluster import LocalCluster
from toolsift.plugin_scripts.node import OPENSEARCH_VERSION, LocalNode

__all__ = ["node"]


def _progress(message: str) -> None:
    click.echo(message, err=True)


def _local_node(app: AppContext, ml_commons: bool = False) -> LocalNode:
    settings = app.settings(node_ml_commons=True) if ml_commons else app.settings()
    return LocalNode(settings, progress=_progress)


def _local_cluster(app: AppContext, nodes: int | None, ml_commons: bool = False) -> LocalCluster | None:
    """The local cluster when ``--nodes`` (else the node_count setting) is 2 or more, else None."""
    overrides: dict[str, object] = {"node_count": nodes}
    if ml_commons:
        overrides["node_ml_commons"] = True
    settings = app.settings(**overrides)
    if settings.node_count < 2:
        return None
    return LocalCluster(settings, progress=_progress)


_nodes_option = click.option(
    "--nodes",
    type=click.IntRange(min=1, max=9),
    default=None,
    help="How many nodes: 1 is the single node; 2 or more a local cluster on loopback, one JVM each "
    "(default: the node_count setting, TOOLSIFT_NODE_COUNT, 1). Give the same number to status, stop and logs.",
)

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

    With --nodes N (or TOOLSIFT_NODE_COUNT) of 2 or more: a local cluster of N nodes on loopback, one
    JVM each, data under TOOLSIFT_DATA_DIR/cluster. Settings: TOOLSIFT_CLUSTER_HTTP_PORT (first member,
    default 9201; member i on 9200 + i), TOOLSIFT_CLUSTER_TRANSPORT_PORT (default 9351),
    TOOLSIFT_CLUSTER_HEAP (per member, default 512m), TOOLSIFT_CLUSTER_KNN_MEMORY_LIMIT (per member,
    default half the heap).
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
@_nodes_option
@_ml_commons_flag
@pass_app
def start(app: AppContext, no_wait: bool, nodes: int | None, ml_commons: bool) -> None:
    """Start the node in the background (installing it first if needed); print its URL.

    With --nodes N of 2 or more, start the N members of the local cluster, wait until all have joined
    and health is green, and print their URLs, comma-separated (a value for TOOLSIFT_OPENSEARCH_URL).
    """
    settings = app.settings()
    if not settings.uses_managed_node:
        click.echo(
            f"note: an OpenSearch URL is configured ({settings.opensearch_url}); toolsift commands use "
            "that cluster, not this node",
            err=True,
        )
    cluster = _local_cluster(app, nodes, ml_commons)
    if cluster is not None:
        cluster.install()
        cluster.start(wait=not no_wait)
        click.echo(",".join(cluster.urls))
        return
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
@_nodes_option
@pass_app
def stop(app: AppContext, timeout: float, nodes: int | None) -> None:
    """Stop the node (SIGTERM, then SIGKILL after --timeout); with --nodes N, every cluster member."""
    cluster = _local_cluster(app, nodes)
    if cluster is not None:
        cluster.stop(timeout=timeout)
        return
    _local_node(app).stop(timeout=timeout)


@node.command()
@json_flag("Print the status as one JSON object.")
@_nodes_option
@pass_app
def status(app: AppContext, as_json: bool, nodes: int | None) -> None:
    """Show whether the node is installed and running, its URL, health and version; with --nodes N,
    each cluster member (pid, port, up or down) and the cluster's health."""
    cluster = _local_cluster(app, nodes)
    if cluster is not None:
        _cluster_status(cluster, as_json)
        return
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


def _cluster_status(cluster: LocalCluster, as_json: bool) -> None:
    state = cluster.status()
    if as_json:
        click.echo(json.dumps(dataclasses.asdict(state), indent=2))
        return
    installed = f"yes ({cluster.install_dir})" if state.installed else "no (run `toolsift node install`)"
    joined = f"{state.nodes_joined} of {len(state.members)}" if state.nodes_joined is not None else "-"
    rows = [
        ("installed", installed),
        ("cluster", state.cluster_name),
        ("health", state.health or "-"),
        ("nodes", joined),
        ("data", str(cluster.cluster_dir)),
    ]
    for member in state.members:
        up = f"up (pid {member.pid})" if member.running else "down"
        rows.append((member.name, f"{up}  {member.url}  transport {member.transport_port}"))
    width = max(len(name) for name, _ in rows)
    for name, value in rows:
        click.echo(f"{name:<{width}}  {value}")


@node.command()
@click.option(
    "-n", "--lines", type=click.IntRange(min=1), default=50, show_default=True, help="How many lines to show."
)
@_nodes_option
@click.option(
    "--node", "member", type=click.IntRange(min=1), default=None,
    help="With --nodes N: only member N's log (default: each member's).",
)
@pass_app
def logs(app: AppContext, lines: int, nodes: int | None, member: int | None) -> None:
    """Print the end of the node's log (with --nodes N, of each cluster member's, or of --node I's)."""
    cluster = _local_cluster(app, nodes)
    if cluster is not None:
        text = cluster.logs(lines, member)
        if not text:
            click.echo(f"no log yet under {cluster.cluster_dir}", err=True)
            return
        click.echo(text)
        return
    if member is not None:
        raise click.UsageError("--node picks a member of a local cluster: give --nodes N (2 or more) too")
    local = _local_node(app)
    text = local.logs(lines)
    if not text:
        click.echo(f"no log yet at {local.log_file}", err=True)
        return
    click.echo(text)
