"""Owner aggregation (Tool-to-Agent Retrieval, Algorithm 1): ranked entities → ranked agents."""

from __future__ import annotations

from toolsift.ranker.agents import aggregate_to_agents
from toolsift.ranker.types import RankedAgent, RankedTool


def _tool(doc_id: str, agent_id: str | None, score: float) -> RankedTool:
    return RankedTool(doc_id=doc_id, name=doc_id, entity="tool", agent_id=agent_id, score=score)


def _agent(doc_id: str, score: float) -> RankedTool:
    return RankedTool(doc_id=doc_id, name=doc_id, entity="agent", agent_id=None, score=score)


# best first, as the ranker returns them
ENTITIES = [
    _tool("t1", "weather", 0.9),
    _agent("calendar", 0.8),
    _tool("t2", None, 0.7),  # no owner
    _tool("t3", "calendar", 0.6),
    _tool("t4", "maps", 0.5),
    _tool("t5", "mail", 0.4),  # sixth entity: beyond N = 5
]


def test_owners_come_in_rank_order_of_the_entity_that_first_reached_them() -> None:
    agents = aggregate_to_agents(ENTITIES, top_n=5, top_k=10)

    assert agents == [
        RankedAgent(agent_id="weather", name="weather", score=0.9, rank=1, via=("t1",)),
        RankedAgent(agent_id="calendar", name="calendar", score=0.8, rank=2, via=("calendar", "t3")),
        RankedAgent(agent_id="maps", name="maps", score=0.5, rank=3, via=("t4",)),
    ]


def test_only_the_top_n_entities_are_considered() -> None:
    assert [a.agent_id for a in aggregate_to_agents(ENTITIES, top_n=6, top_k=10)] == [
        "weather", "calendar", "maps", "mail",
    ]
    assert [a.agent_id for a in aggregate_to_agents(ENTITIES, top_n=1, top_k=10)] == ["weather"]


def test_only_the_first_k_unique_owners_are_returned() -> None:
    agents = aggregate_to_agents(ENTITIES, top_n=5, top_k=2)

    assert [(a.agent_id, a.rank) for a in agents] == [("weather", 1), ("calendar", 2)]


def test_an_agent_document_maps_to_itself() -> None:
    # Even if an agent document carried an agent_id, the document itself is the owner.
    entity = RankedTool(doc_id="srv", name="srv", entity="agent", agent_id="other", score=1.0)

    (agent,) = aggregate_to_agents([entity], top_n=5, top_k=5)

    assert (agent.agent_id, agent.via) == ("srv", ("srv",))


def test_tools_without_an_owner_are_skipped_without_taking_a_rank() -> None:
    entities = [_tool("lonely", None, 0.9), _tool("owned", "a1", 0.5)]

    agents = aggregate_to_agents(entities, top_n=5, top_k=5)

    assert [(a.agent_id, a.rank, a.score) for a in agents] == [("a1", 1, 0.5)]


def test_a_later_entity_does_not_change_its_owners_score() -> None:
    entities = [_tool("t1", "a1", 0.3), _tool("t2", "a1", 0.9)]  # e.g. an unsorted input

    (agent,) = aggregate_to_agents(entities, top_n=5, top_k=5)

    assert agent.score == 0.3
    assert agent.via == ("t1", "t2")


def test_names_are_shown_when_known_and_ids_otherwise() -> None:
    agents = aggregate_to_agents(ENTITIES, top_n=5, top_k=10, names={"weather": "Weather Server"})

    assert [a.name for a in agents] == ["Weather Server", "calendar", "maps"]


def test_no_entities_give_no_agents() -> None:
    assert aggregate_to_agents([], top_n=5, top_k=5) == []
