"""OpenSearch-side assets and scripts: search pipelines and the managed local node (``node``)."""

from __future__ import annotations

from toolsift.plugin_scripts.node import LocalNode, NodeStatus, ensure_running

__all__ = ["LocalNode", "NodeStatus", "ensure_running"]
