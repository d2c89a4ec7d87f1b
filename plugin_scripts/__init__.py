"""OpenSearch-side assets and scripts: search pipelines and the managed local node or cluster (``node``/``cluster``)."""

from __future__ import annotations

from toolsift.plugin_scripts.cluster import LocalCluster, ensure_running
from toolsift.plugin_scripts.node import LocalNode, NodeStatus

__all__ = ["LocalCluster", "LocalNode", "NodeStatus", "ensure_running"]
