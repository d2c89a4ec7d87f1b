"""Owner aggregation (Tool-to-Agent Retrieval): Algorithm 1 per query, the merge of step-wise rankings,
and the ``--level auto`` decision."""

from __future__ import annotations

import pytest

from toolsift.agents.aggregation import aggregate_to_agents, decide_level, merge_steps
from toolsift.records import RankedAgent, RankedTool
from toolsift.errors import BadQueryError


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


def test_an_agent_reached_by_its_document_and_its_tools_keeps_one_rank_and_lists_them_in_order() -> None:
    entities = [_tool("t1", "a1", 0.9), _agent("a1", 0.8), _tool("t2", "a2", 0.7), _tool("t3", "a1", 0.6)]

    agents = aggregate_to_agents(entities, top_n=10, top_k=10)

    assert [(a.agent_id, a.rank, a.via) for a in agents] == [("a1", 1, ("t1", "a1", "t3")), ("a2", 2, ("t2",))]


def test_k_larger_than_the_owners_found_returns_every_owner() -> None:
    assert len(aggregate_to_agents(ENTITIES, top_n=6, top_k=50)) == 4


# --- step-wise querying: merge_steps ------------------------------------------------------------------


def _ranked(*agents: tuple[str, float]) -> list[RankedAgent]:
    return [RankedAgent(agent_id=a, name=a.upper(), score=s, rank=i + 1, via=(f"{a}/tool",))
            for i, (a, s) in enumerate(agents)]


def test_each_steps_clear_winner_comes_before_agents_that_are_mildly_relevant_to_every_step() -> None:
    # A generic server in second place for three steps must not outrank a step's clear winner.
    steps = [
        _ranked(("news", 1.0), ("generic", 0.6)),
        _ranked(("chart", 1.0), ("generic", 0.6)),
        _ranked(("word", 1.0), ("generic", 0.6)),
    ]

    merged = merge_steps(steps, top_k=4)

    assert [a.agent_id for a in merged][:3] == ["chart", "news", "word"]  # tied at 1.0: by sum, then id
    assert merged[3].agent_id == "generic"


def test_with_reciprocal_ranks_the_agent_of_many_steps_wins_instead() -> None:
    steps = [_ranked(("news", 1.0), ("generic", 0.6)), _ranked(("chart", 1.0), ("generic", 0.6)),
             _ranked(("word", 1.0), ("generic", 0.6))]

    merged = merge_steps(steps, top_k=4, rule="rrf")

    assert merged[0].agent_id == "generic"  # 3 × 1/2 = 1.5 > 1
    assert merged[0].score == 1.5


def test_a_confident_steps_runner_up_outranks_a_weak_steps_winner_only_by_score() -> None:
    # Two servers own the same write tool: the step scores them 1.0 and 0.97; a vague step's best is 0.9.
    steps = [_ranked(("files", 1.0), ("desktop", 0.97)), _ranked(("vague", 0.9))]

    assert [a.agent_id for a in merge_steps(steps, top_k=3)] == ["files", "desktop", "vague"]


def test_ties_on_the_best_score_go_to_the_agent_reached_by_more_steps() -> None:
    steps = [_ranked(("a", 1.0)), _ranked(("b", 1.0), ("a", 0.5))]

    merged = merge_steps(steps, top_k=2)

    assert [(m.agent_id, m.steps, m.step_scores) for m in merged] == [("a", (1, 2), (1.0, 0.5)), ("b", (2,), (1.0,))]


def test_merged_agents_say_which_steps_reached_them_and_join_their_entities() -> None:
    first = [RankedAgent("a", "A", 1.0, 1, via=("a/x", "a/y"))]
    second = [RankedAgent("a", "A", 0.4, 1, via=("a/y", "a"))]

    (merged,) = merge_steps([first, second], top_k=5)

    assert merged == RankedAgent("a", "A", 1.0, 1, via=("a/x", "a/y", "a"), steps=(1, 2), step_scores=(1.0, 0.4))


def test_one_step_keeps_its_own_order_and_top_k_cuts_the_merged_ranking() -> None:
    step = _ranked(("a", 0.9), ("b", 0.5), ("c", 0.1))

    assert [a.agent_id for a in merge_steps([step], top_k=2)] == ["a", "b"]
    assert [a.rank for a in merge_steps([step], top_k=3)] == [1, 2, 3]


def test_no_steps_or_empty_steps_give_no_agents() -> None:
    assert merge_steps([], top_k=5) == []
    assert merge_steps([[], []], top_k=5) == []


def test_an_unknown_rule_is_refused() -> None:
    with pytest.raises(BadQueryError, match="merge rule"):
        merge_steps([], top_k=5, rule="sum")  # type: ignore[arg-type]


# --- --level auto: decide_level -------------------------------------------------------------------------


def test_auto_answers_with_the_agent_when_two_of_its_tools_are_in_the_answer() -> None:
    answer = [_tool("w/convert", "word", 0.9), _tool("p/convert", "pdf", 0.8), _tool("w/create", "word", 0.7)]

    decision = decide_level(answer, names={"word": "Office Word"})

    assert decision.level == "agent"
    assert [(a.agent_id, a.name, a.score, a.via) for a in decision.agents] == [
        ("word", "Office Word", 0.9, ("w/convert", "w/create"))]
    assert "Office Word (2) of the 3 tools" in decision.reason


def test_auto_answers_with_the_tools_when_every_tool_has_another_owner() -> None:
    answer = [_tool("a/x", "a", 0.9), _tool("b/y", "b", 0.8), _tool("lonely", None, 0.7)]

    decision = decide_level(answer)

    assert (decision.level, decision.agents) == ("tool", ())
    assert "no agent owns 2 or more of the 3 tools" in decision.reason


def test_auto_orders_several_qualifying_agents_by_their_best_tool() -> None:
    answer = [_tool("b/1", "b", 0.9), _tool("a/1", "a", 0.8), _tool("a/2", "a", 0.7), _tool("b/2", "b", 0.6)]

    assert [a.agent_id for a in decide_level(answer).agents] == ["b", "a"]


def test_agent_documents_in_the_answer_do_not_count_as_tools() -> None:
    assert decide_level([_agent("a", 0.9), _tool("a/1", "a", 0.8)]).level == "tool"


def test_the_threshold_is_a_parameter() -> None:
    answer = [_tool("a/1", "a", 0.9), _tool("a/2", "a", 0.8)]

    assert decide_level(answer, min_tools=3).level == "tool"
    assert decide_level(answer[:1], min_tools=1).level == "agent"
    with pytest.raises(BadQueryError, match="min_tools"):
        decide_level(answer, min_tools=0)
