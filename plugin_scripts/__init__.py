"""OpenSearch-side assets and scripts: search pipelines and the managed local node or cluster (``node``)."""

from __future__ import annotations

from toolsift.plugin_scripts.node import LocalCluster, LocalNode, NodeStatus, ensure_running

__all__ = ["LocalCluster", "LocalNode", "NodeStatus", "ensure_running"]
