"""Owner aggregation: from ranked tools and agents to a ranked list of agents.

Three pure stages, each usable alone:

* :func:`aggregate_to_agents` — Algorithm 1 of Tool-to-Agent Retrieval: the top N entities of one
  query (tool *and* agent documents), each mapped to its owner (a tool to its agent, an agent to
  itself), the first K unique owners in rank order.
* :func:`merge_steps` — step-wise querying: every step (or tool need) of a request is its own
  query with its own Algorithm 1 ranking; the rankings are merged into one. The default rule is
  **CombMAX**: an agent scores its best score over the steps, ties broken by the sum of its step
  scores. A step is a need the answer must serve, so one step's clear winner must not be outvoted
  by agents that are mildly relevant to many steps (the failure of summing reciprocal ranks, which
  fills the top with generic document and memory servers); and an agent that several steps reach
  wins a tie. The step scores must share a scale: the search path min-max normalises every step's
  first stage to [0, 1] before aggregation.
* :func:`rank_tools_by_server` — a multi-need request at tool level: every tool scores its best
  score over the needs plus ``server_weight`` times its server's merged score, so the tools of the
  servers the request as a whole points at rise together (a request for a report in a PPT needs the
  presentation server's create, add and save tools, not three more chart tools).
* :func:`decide_level` — ``--level auto``: the agent when at least two of its tools make the tool
  answer, else the tools.

References:
    Tool-to-Agent Retrieval (2025), §2 (joint tool + agent index, Algorithm 1, direct and step-wise
    querying) and §3 (LiveMCPBench protocol).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Literal

from toolsift.records import RankedAgent, RankedTool
from toolsift.errors import BadQueryError

__all__ = [
    "MERGE_RULES",
    "MergeRule",
    "LevelDecision",
    "aggregate_to_agents",
    "merge_steps",
    "rank_tools_by_server",
    "place_prerequisites",
    "decide_level",
    "AUTO_MIN_TOOLS",
]

MergeRule = Literal["max", "rrf"]
#: ``max``: CombMAX of the step scores, ties by their sum (the default); ``rrf``: the sum of
#: reciprocal ranks over the steps (rank constant 0), the baseline it replaces.
MERGE_RULES: tuple[MergeRule, ...] = ("max", "rrf")
#: ``--level auto`` answers with an agent when this many of its tools are in the tool answer.
AUTO_MIN_TOOLS = 2


def aggregate_to_agents(
    entities: Sequence[RankedTool], *, top_n: int, top_k: int, names: Mapping[str, str] | None = None
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

    Example:
        >>> tools = [RankedTool("w/now", "now", "tool", "agent:w", 0.9), RankedTool("agent:m", "m", "agent", None, 0.5)]
        >>> [a.agent_id for a in aggregate_to_agents(tools, top_n=50, top_k=5)]
        ['agent:w', 'agent:m']
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


def merge_steps(
    per_step: Sequence[Sequence[RankedAgent]], *, top_k: int, rule: MergeRule = "max"
) -> list[RankedAgent]:
    """Merge the agent rankings of a request's steps into one ranking.

    Args:
        per_step: for each step, in step order, its Algorithm 1 ranking (best first) with scores on
            one scale across steps (each step's first stage min-max normalised to [0, 1]).
        top_k: how many agents to return.
        rule: ``max`` — an agent's score is its best step score; ties go to the larger sum of its
            step scores (agents reached by more steps, or more strongly), then to the agent id.
            ``rrf`` — Σ over the steps that reached it of 1 / its rank there; ties by best rank,
            then id.

    Returns:
        Up to ``top_k`` agents, ranked 1.. with the merged score; ``steps`` and ``step_scores``
        say which steps reached each agent and how strongly, ``via`` joins the steps' entities
        (step order, each once). One step returns its own ranking (re-scored under ``rrf``).

    Raises:
        BadQueryError: an unknown rule.

    Example:
        >>> write = [RankedAgent("agent:files", "Files", 1.0, 1), RankedAgent("agent:desk", "Desk", 0.97, 2)]
        >>> news = [RankedAgent("agent:news", "News", 1.0, 1), RankedAgent("agent:files", "Files", 0.2, 2)]
        >>> [a.agent_id for a in merge_steps([news, write], top_k=3)]
        ['agent:files', 'agent:news', 'agent:desk']
    """
    if rule not in MERGE_RULES:
        raise BadQueryError(f"unknown merge rule {rule!r}; use one of {', '.join(MERGE_RULES)}")
    names: dict[str, str] = {}
    steps: dict[str, list[int]] = {}
    scores: dict[str, list[float]] = {}
    ranks: dict[str, list[int]] = {}
    via: dict[str, dict[str, None]] = {}
    for step, ranking in enumerate(per_step, start=1):
        for position, agent in enumerate(ranking, start=1):
            if agent.agent_id in steps and steps[agent.agent_id][-1] == step:
                continue  # a ranking names an agent once; a repeat adds nothing
            names.setdefault(agent.agent_id, agent.name)
            steps.setdefault(agent.agent_id, []).append(step)
            scores.setdefault(agent.agent_id, []).append(agent.score)
            ranks.setdefault(agent.agent_id, []).append(position)
            via.setdefault(agent.agent_id, {}).update(dict.fromkeys(agent.via))
    if rule == "max":
        merged = {a: max(s) for a, s in scores.items()}
        order = sorted(merged, key=lambda a: (-merged[a], -sum(scores[a]), a))
    else:
        merged = {a: sum(1.0 / r for r in rs) for a, rs in ranks.items()}
        order = sorted(merged, key=lambda a: (-merged[a], min(ranks[a]), a))
    return [
        RankedAgent(
            agent_id=a,
            name=names[a],
            score=merged[a],
            rank=i + 1,
            via=tuple(via[a]),
            steps=tuple(steps[a]),
            step_scores=tuple(scores[a]),
        )
        for i, a in enumerate(order[:top_k])
    ]


def rank_tools_by_server(
    per_step: Sequence[Sequence[RankedTool]], agents: Sequence[RankedAgent], *, server_weight: float, top_k: int,
    texts: Sequence[str] = (),
) -> list[RankedTool]:
    """The tools of every step's ranking, each scored by its best step score plus ``server_weight``
    times its owner's score in ``agents`` (0 for an owner not there).

    Args:
        per_step: for each step (need), its ranked entities with scores on one scale ([0, 1]);
            agent documents are skipped.
        agents: the merged agent ranking of the same steps (:func:`merge_steps`).
        server_weight: β, the server's share (0: tools by their own score only).
        top_k: how many tools to return.
        texts: each step's text (the request or a need), named by the tool it gave its best score
            (``via_need``).

    Returns:
        Up to ``top_k`` tools, best first; ties go to the earlier step, then the better rank there,
        then the id. Each tool's ``contributions`` hold its ``need`` and ``server`` parts.

    Example:
        >>> steps = [[RankedTool("c/bar", "bar", "tool", "agent:c", 1.0, first_stage_rank=1),
        ...           RankedTool("p/save", "save", "tool", "agent:p", 0.9, first_stage_rank=2)]]
        >>> agents = [RankedAgent("agent:p", "p", 1.0, 1), RankedAgent("agent:c", "c", 0.5, 2)]
        >>> [t.doc_id for t in rank_tools_by_server(steps, agents, server_weight=0.4, top_k=2)]
        ['p/save', 'c/bar']
    """
    if server_weight < 0:
        raise BadQueryError(f"server_weight must not be negative, got {server_weight}")
    server = {a.agent_id: a.score for a in agents}
    best: dict[str, tuple[float, int, int, RankedTool]] = {}
    for step, ranking in enumerate(per_step):
        for position, entity in enumerate(ranking, start=1):
            if entity.entity != "tool":
                continue
            found = best.get(entity.doc_id)
            if found is None or entity.score > found[0]:
                best[entity.doc_id] = (entity.score, step, position, entity)
    scored = []
    for doc_id, (need, step, position, entity) in best.items():
        boost = server_weight * server.get(entity.agent_id or "", 0.0)
        scored.append((need + boost, step, position, doc_id, need, boost, entity))
    scored.sort(key=lambda k: (-k[0], k[1], k[2], k[3]))
    return [
        RankedTool(doc_id=entity.doc_id, name=entity.name, entity="tool", agent_id=entity.agent_id, score=total,
                   contributions={"need": need, "server": boost}, raw_scores=entity.raw_scores,
                   first_stage_rank=entity.first_stage_rank, prerequisites=entity.prerequisites,
                   risk=entity.risk, via_need=texts[step] if step < len(texts) else "")
        for total, step, _, _, need, boost, entity in scored[:top_k]
    ]


def place_prerequisites(
    tools: Sequence[RankedTool], known: Mapping[str, RankedTool], *, top: int, top_k: int
) -> list[RankedTool]:
    """``tools`` with the prerequisites of the first ``top`` placed right after each, cut to ``top_k``.

    A prerequisite (``RankedTool.prerequisites``: a sibling that produces an identifier the tool
    needs) is there because its tool is: it says whose it is (``prerequisite_of``) and never
    outranks or ties that tool. It comes right after its tool — after any tool the ranking scored
    the same, which keeps its place above it — and scores strictly between its tool and the next
    tool below (the k prerequisites of one score level evenly spaced in that gap; below the last
    tool, between it and 0), so the answer stays sorted by score. Its contributions: one
    ``prerequisite`` part, its score. One already ranked higher on its own stays there; one further
    down moves up.

    Args:
        tools: a ranked answer, best first.
        known: the prerequisites' identities by id (those not there are skipped).
        top: how many of the best tools bring their prerequisites (0: none).
        top_k: how many tools to return.

    Example:
        >>> near = RankedTool("m/near", "near", "tool", "agent:m", 0.9, prerequisites=("m/geo",))
        >>> other = RankedTool("x/other", "other", "tool", "agent:x", 0.5)
        >>> geo = RankedTool("m/geo", "geo", "tool", "agent:m", 0.0)
        >>> [(t.doc_id, round(t.score, 2)) for t in place_prerequisites([near, other], {"m/geo": geo}, top=1, top_k=3)]
        [('m/near', 0.9), ('m/geo', 0.7), ('x/other', 0.5)]
    """
    if top < 0:
        raise BadQueryError(f"top must not be negative, got {top}")
    moved = {p for t in tools[:top] for p in t.prerequisites if p in known}
    # Each tool that stays, with the prerequisites it brings (in its order, each once, none ranked above).
    heads: list[tuple[RankedTool, list[str]]] = []
    placed: set[str] = set()
    for position, tool in enumerate(tools):
        if tool.doc_id in placed or (tool.doc_id in moved and position >= top):
            continue  # a prerequisite further down is placed after the tool that needs it
        brought: list[str] = []
        placed.add(tool.doc_id)
        if position < top:
            for need in tool.prerequisites:
                if need not in placed and need in known:
                    brought.append(need)
                    placed.add(need)
        heads.append((tool, brought))
    out: list[RankedTool] = []
    start = 0
    while start < len(heads):  # one score level at a time: its tools, then their prerequisites
        level = heads[start][0].score
        end = start
        while end < len(heads) and heads[end][0].score >= level:
            end += 1
        group = heads[start:end]
        below = heads[end][0].score if end < len(heads) else min(0.0, level - 1.0)
        needed = [(tool, need) for tool, brought in group for need in brought]
        out.extend(tool for tool, _ in group)
        for i, (tool, need) in enumerate(needed, start=1):
            score = level - (level - below) * i / (len(needed) + 1)
            out.append(replace(known[need], score=score, contributions={"prerequisite": score}, field_scores={},
                               prerequisite_of=tool.doc_id))
        start = end
    return out[:top_k]


@dataclass(frozen=True)
class LevelDecision:
    """What ``--level auto`` answers with, and why.

    Args:
        level: ``agent`` when some agent owns at least ``min_tools`` of the tools, else ``tool``.
        agents: those agents, ordered by the rank of their best tool; ``via`` lists their tools in
            the answer, ``score`` is their best tool's score. Empty at tool level.
        reason: the decision in words, for the user.
    """

    level: Literal["tool", "agent"]
    agents: tuple[RankedAgent, ...]
    reason: str


def decide_level(
    tools: Sequence[RankedTool], *, min_tools: int = AUTO_MIN_TOOLS, names: Mapping[str, str] | None = None
) -> LevelDecision:
    """``--level auto``: answer with the agent when several of its tools make the tool answer.

    A request that several tools of one server serve is better answered by the server (its tools
    come with it); a request that one tool serves, or tools of different servers, by the tools.

    Args:
        tools: the tool answer, best first (agent documents and tools without an owner are ignored).
        min_tools: how many of an agent's tools must be in ``tools`` (default 2).
        names: agent id → display name.

    Raises:
        ValueError: ``min_tools`` < 1.

    Example:
        >>> answer = [RankedTool("word/convert", "convert", "tool", "agent:word", 0.9),
        ...           RankedTool("word/create", "create", "tool", "agent:word", 0.8)]
        >>> decide_level(answer).level
        'agent'
    """
    if min_tools < 1:
        raise BadQueryError(f"min_tools must be at least 1, got {min_tools}")
    owned: dict[str, list[RankedTool]] = {}
    for tool in tools:
        if tool.entity == "tool" and tool.agent_id:
            owned.setdefault(tool.agent_id, []).append(tool)
    names = names or {}
    chosen = [a for a, ts in owned.items() if len(ts) >= min_tools]  # dict order: best tool first
    n = len([t for t in tools if t.entity == "tool"])
    if not chosen:
        return LevelDecision("tool", (), f"no agent owns {min_tools} or more of the {n} tools")
    agents = tuple(
        RankedAgent(agent_id=a, name=names.get(a, a), score=owned[a][0].score, rank=i + 1,
                    via=tuple(t.doc_id for t in owned[a]))
        for i, a in enumerate(chosen)
    )
    said = ", ".join(f"{agent.name} ({len(agent.via)})" for agent in agents)
    return LevelDecision("agent", agents, f"{said} of the {n} tools; at least {min_tools} make an agent the answer")
