"""Owner aggregation: from ranked tools and agents to a ranked list of agents.

References:
    Tool-to-Agent Retrieval, §2, Algorithm 1: retrieve the top N entities over tool *and* agent
    documents, map each to its owner (a tool to its agent, an agent to itself), and keep the first
    K unique owners in rank order.
"""

from __future__ import annotations

from collections.abc import Sequence

from toolsift.ranker.types import RankedAgent, RankedTool

__all__ = ["aggregate_to_agents"]


def aggregate_to_agents(
    entities: Sequence[RankedTool], *, top_n: int, top_k: int, names: dict[str, str] | None = None
) -> list[RankedAgent]:
    """Algorithm 1 over ``entities`` (already sorted best first).

    Args:
        entities: ranked tool and agent documents.
        top_n: N, how many entities to consider.
        top_k: K, how many unique agents to return.
        names: agent id → display name (ids are shown when absent).

    Returns:
        Up to ``top_k`` agents; each agent's score is that of the entity that first reached it,
        ``via`` lists every considered entity that mapped to it. Tools without an owner are skipped.
    """
    order: list[str] = []
    best: dict[str, float] = {}
    via: dict[str, list[str]] = {}
    for entity in entities[:top_n]:
        owner = entity.doc_id if entity.entity == "agent" else entity.agent_id
        if not owner:
            continue
        if owner not in best:
            order.append(owner)
            best[owner] = entity.score
            via[owner] = []
        via[owner].append(entity.doc_id)
    names = names or {}
    return [
        RankedAgent(agent_id=a, name=names.get(a, a), score=best[a], rank=i + 1, via=tuple(via[a]))
        for i, a in enumerate(order[:top_k])
    ]
