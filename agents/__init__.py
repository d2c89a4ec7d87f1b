"""Tool-to-Agent retrieval: tools and agents in one index, ranked at either level.

It owns owner aggregation, step merging and the level decision (``aggregation``, the ranker's layer),
the joint first stage over tool and agent documents per step (``agent_search``, the backend's layer)
and ``toolsift eval --level agent`` (``agent_eval``, evaluation's layer). The agent documents and
their join field are the document model's (:mod:`toolsift.mappings.model`).
"""

from __future__ import annotations

from toolsift.lazy import lazy_exports

#: Public name → the module that defines it, imported on first use (:mod:`toolsift.lazy`).
_EXPORTS: dict[str, str] = {
    "aggregate_to_agents": "toolsift.agents.aggregation",
    "merge_steps": "toolsift.agents.aggregation",
    "decide_level": "toolsift.agents.aggregation",
    "search_agents": "toolsift.agents.agent_search",
    "run_agent_eval": "toolsift.agents.agent_eval",
}

__all__ = list(_EXPORTS)
__getattr__ = lazy_exports(__name__, _EXPORTS)
