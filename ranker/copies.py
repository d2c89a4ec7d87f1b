"""One capability once: the same tool on many servers answered once, with where else it lives.

Registries hold many copies of popular MCP servers (forks, re-packagings, renamed variants), and a
large catalog's top 10 fills with them: among 100k generated tools 60 % of a top 10 repeats a
capability already above it (``docs/evaluation.md``, issue 45). An agent gains nothing from a second
``read_file`` that does what the first does; it gains from the tool it would otherwise not see.

**Two tools are copies** (:func:`same_capability`) when they sit on different servers, neither or both
were flagged by the screen of hostile text, their names are the same once case, separators and
punctuation are set aside (:func:`capability_name`: ``getWeather``, ``get_weather``, ``Get Weather``),
and the shorter description shares at least ``threshold`` of its character 5-grams with the other
(:func:`description_overlap`, containment: a fork that adds a sentence or drops one still matches,
two tools that only share a name and a template do not). A tool without a description is never a copy:
its name alone cannot say what it does. Only the catalog's own text decides; nothing is learned.

The threshold (:data:`COPY_OVERLAP`, the ``copy_overlap`` setting) was read off LiveMCPBench's real
catalog: its 9 same-named copies on two servers (Desktop Commander's forks of the Filesystem server's
tools, two arXiv servers' ``search_papers``) overlap 0.37–0.74, its 14 same-named tools of other
capabilities (``search`` on Yahoo Finance, Hacker News and BioMCP; ``add_table`` of PowerPoint and of
Word; ``fetch`` of BioMCP and of the web fetcher …) 0.02–0.48: at 0.5 it folds 5 copies and no other
capability, preferring a copy missed to two capabilities folded. On generated catalogs it finds 97 % of
the same-named copies (``docs/evaluation.md``).

**Collapse** (:func:`collapse_copies`) walks a ranking best first: a tool that is a copy of one kept
above it is left out and named in that tool's ``also_on``; a tool placed as another's prerequisite is
always kept and never absorbs one. The kept copy is the best-ranked one, so the ranking's order is
kept, and a flagged fork never hides the clean tool it copies (nor the other way round).

Example:
    >>> a = ToolText("getWeather", "Get the current weather for a city. Returns JSON.")
    >>> b = ToolText("get_weather", "Get the current weather for a city.")
    >>> same_capability(a, b)
    True
    >>> same_capability(a, ToolText("get_weather", "Weather alerts for a US state."))
    False
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from toolsift.records import RankedTool, ToolCopy

__all__ = ["COPY_OVERLAP", "SHINGLE_CHARS", "ToolText", "capability_name", "shingles", "description_overlap",
           "same_capability", "possible_copies", "collapse_copies"]

#: The least share of the shorter description's character 5-grams the other must hold (the
#: ``copy_overlap`` setting's default).
COPY_OVERLAP = 0.5
#: The length of the character shingles descriptions are compared by.
SHINGLE_CHARS = 5

_NOT_NAME = re.compile(r"[\W_]+", re.UNICODE)


@dataclass(frozen=True)
class ToolText:
    """What decides whether two tools are copies: the name, the description, the screen's flag."""

    name: str
    description: str
    flagged: bool = False


def capability_name(name: str) -> str:
    """``name`` in lower case without separators or punctuation: the part of a name a copy keeps.

    Example:
        >>> [capability_name(n) for n in ("getWeather", "get_weather", "Get-Weather", "get weather")]
        ['getweather', 'getweather', 'getweather', 'getweather']
    """
    return _NOT_NAME.sub("", name.casefold())


def shingles(text: str, size: int = SHINGLE_CHARS) -> frozenset[str]:
    """The character ``size``-grams of ``text`` in lower case, white space collapsed (one, the text
    itself, when it is shorter; none when it is empty)."""
    flat = " ".join(text.casefold().split())
    if not flat:
        return frozenset()
    return frozenset(flat[i:i + size] for i in range(max(len(flat) - size + 1, 1)))


def description_overlap(a: str, b: str) -> float:
    """The share of the shorter text's shingles the other holds (0 when either is empty)."""
    first, second = shingles(a), shingles(b)
    if not first or not second:
        return 0.0
    return len(first & second) / min(len(first), len(second))


def same_capability(a: ToolText, b: ToolText, threshold: float = COPY_OVERLAP) -> bool:
    """Whether ``a`` and ``b`` are copies of one tool (the module docstring says when); the caller
    checks that they are on different servers."""
    if a.flagged != b.flagged or not a.description.strip() or not b.description.strip():
        return False
    key = capability_name(a.name)
    return bool(key) and key == capability_name(b.name) and description_overlap(
        a.description, b.description) >= threshold


def _foldable(tool: RankedTool) -> bool:
    """Whether ``tool`` may be folded into a copy or absorb one: a tool, not placed as a prerequisite."""
    return tool.entity == "tool" and not tool.prerequisite_of


def possible_copies(tools: Sequence[RankedTool]) -> list[str]:
    """The ids of the tools of ``tools`` whose name (:func:`capability_name`) a foldable tool of another
    server shares: the only ones that can be copies, so the only texts :func:`collapse_copies` needs."""
    servers: dict[str, set[str | None]] = {}
    for tool in filter(_foldable, tools):
        servers.setdefault(capability_name(tool.name), set()).add(tool.agent_id)
    shared = {key for key, owners in servers.items() if key and len(owners) > 1}
    return list(dict.fromkeys(t.doc_id for t in tools if _foldable(t) and capability_name(t.name) in shared))


def collapse_copies(tools: Sequence[RankedTool], texts: Mapping[str, ToolText],
                    threshold: float = COPY_OVERLAP) -> list[RankedTool]:
    """``tools`` (best first) with every copy of a tool above it left out and named in that tool's
    ``also_on``, in the order it ranked.

    Args:
        texts: tool id → its text; a tool missing here (an agent document, a tool the caller cannot
            see) is kept as it is and absorbs nothing.
        threshold: :func:`same_capability`'s.
    """
    kept: list[RankedTool] = []
    copies: dict[int, list[ToolCopy]] = {}
    by_name: dict[str, list[int]] = {}
    for tool in tools:
        text = texts.get(tool.doc_id)
        if text is None or not _foldable(tool):
            kept.append(tool)
            continue
        key = capability_name(text.name)
        first = next((i for i in by_name.get(key, ())
                      if kept[i].agent_id != tool.agent_id and same_capability(texts[kept[i].doc_id], text, threshold)),
                     None)
        if first is not None:
            copies.setdefault(first, []).append(ToolCopy(tool.doc_id, tool.name, tool.agent_id))
            continue
        by_name.setdefault(key, []).append(len(kept))
        kept.append(tool)
    return [replace(tool, also_on=(*tool.also_on, *copies[i])) if i in copies else tool
            for i, tool in enumerate(kept)]
