"""RankedTool, the record every ranking stage passes on: rescoring keeps everything but the score."""

from __future__ import annotations

from dataclasses import replace

from toolsift.records import RankedTool, ToolCopy


def test_a_rescored_tool_equals_replace_with_the_new_score_and_leaves_the_original_alone() -> None:
    tool = RankedTool("srv/search", "search", "tool", "agent:srv", 0.8, field_scores={"description": 0.5},
                      first_stage_rank=3, prerequisites=("srv/login",), risk=("hidden-unicode",),
                      via_need="find pages", also_on=(ToolCopy("other/search", "search", "agent:other"),))

    twin = tool.rescored(0.25)

    assert twin == replace(tool, score=0.25)
    assert (tool.score, twin.score) == (0.8, 0.25)
    assert twin is not tool and twin.field_scores is tool.field_scores
