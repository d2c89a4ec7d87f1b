"""Prerequisites: the tools of the same server that a tool needs called first, linked at ingest.

A request says what the user wants, not the calls that get there: "what is interesting within 1 km
of the Forbidden City" needs ``find_nearby_places``, which takes a latitude and a longitude that
only ``geocode_address`` can give; "train tickets from Beijing to Shanghai" needs ``get-tickets``,
whose station codes come from ``get-station-code-of-citys``. No word of the request names the first
call, so no ranking of the request's words finds it. The documentation does say it, and these rules
read it, within one server (one agent's tools), for every tool:

1. **Named in a parameter.** A parameter's description names a sibling tool (``"the station_code,
   obtained with get-station-code-by-names"``, ``"use the search_cards tool to find the id"``): that
   sibling produces the value.
2. **Produces a required identifier.** A required parameter whose name is an identifier or a
   coordinate (:data:`IDENTIFIER_WORDS`: ``objectId``, ``paper_id``, ``station_code``,
   ``latitude``) comes from the sibling whose own name, description and response carry the
   parameter's other words (``object``; for ``latitude``, the word itself), and which requires no
   identifier itself: a tool that asks for a ``latitude`` does not produce one — whether a required
   parameter is named so or its description says so, in the schema or in the argument list of the
   tool's docstring-style description (``locations: List of dictionaries, each containing the latitude
   and longitude of a person's location``: ``suggest_meeting_point`` takes coordinates,
   ``geocode_address`` gives them).

A tool's ``prerequisites`` are those siblings' ids, named ones first, each once, at most
:data:`MAX_PREREQUISITES` (the field is a keyword list: a search reads it back sorted, so it holds
no more than the search places). The multi-need search (:mod:`toolsift.search.planner`) places the
prerequisites of its best tools right after them; a search team can query the field.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace

from toolsift.ingest.derive import identifier_words
from toolsift.mappings.model import ToolDoc

__all__ = ["IDENTIFIER_WORDS", "MAX_PREREQUISITES", "ToolFacts", "documented", "link_prerequisites",
           "with_prerequisites"]

#: Parameter-name words that mark a value another call produces: identifiers and coordinates.
IDENTIFIER_WORDS: frozenset[str] = frozenset({
    "id", "ids", "code", "codes", "key", "uuid", "slug", "latitude", "longitude", "lat", "lng", "lon", "coordinates",
})
#: The identifier words that name a coordinate: a point is one whatever it is the point of
#: (``from_latitude`` and ``locations: each with a latitude`` ask for the same kind of value).
COORDINATE_WORDS: frozenset[str] = frozenset({"latitude", "longitude", "lat", "lng", "lon", "coordinates"})
#: The most prerequisites one tool lists (and the search places after it).
MAX_PREREQUISITES = 2
#: Names this short are words ("get", "run"), not references to a tool.
_MIN_NAME_CHARS = 4


@dataclass(frozen=True)
class ToolFacts:
    """What the rules read of one tool: its identity, its text and its parameters."""

    tool_id: str
    agent_id: str
    name: str
    words: frozenset[str]
    parameter_text: str
    required_words: tuple[tuple[str, ...], ...]
    #: The words of the required parameters' names and descriptions: what the tool asks for.
    asks_for: frozenset[str] = frozenset()

    @classmethod
    def of(cls, doc: ToolDoc) -> ToolFacts | None:
        """The facts of ``doc``; None for a tool of no server (it has no siblings)."""
        if not doc.agent_id:
            return None
        text = " ".join((doc.name, doc.description, doc.response))
        return cls(
            tool_id=doc.tool_id,
            agent_id=doc.agent_id,
            name=doc.name,
            words=frozenset(identifier_words(text).split()),
            parameter_text=" ".join(p.description for p in doc.parameters if p.description),
            required_words=tuple(tuple(identifier_words(p.name).split()) for p in doc.required_parameters),
            asks_for=frozenset(identifier_words(" ".join(
                f"{p.name} {p.description or documented(doc.description, p.name)}" for p in doc.required_parameters
            )).split()),
        )

    @property
    def requires_identifier(self) -> bool:
        return any(IDENTIFIER_WORDS.intersection(words) for words in self.required_words)

    def asks_for_value(self, words: Sequence[str]) -> bool:
        """Whether a required parameter's name or description asks for the value a parameter named
        ``words`` holds: a coordinate (any coordinate word of it), else all of its words."""
        kind = COORDINATE_WORDS.intersection(words) or set(words)
        return kind <= self.asks_for


def documented(description: str, name: str) -> str:
    """What a tool's description says of its parameter ``name`` in a docstring-style argument list
    (``Args:``): the line ``name: text`` (or ``name (type): text``) and its more indented continuation.

    Example:
        >>> documented("Find a venue.\\n\\nArgs:\\n    locations: points, each a latitude\\n        and longitude\\n",
        ...            "locations")
        'points, each a latitude and longitude'
    """
    found = re.search(rf"^([ \t]*){re.escape(name)}[ \t]*(?:\([^)\n]*\))?[ \t]*:[ \t]*(.*)$", description, re.M)
    if found is None:
        return ""
    indent = len(found.group(1).expandtabs())
    said = [found.group(2).strip()]
    for line in description[found.end():].splitlines()[1:]:
        if not line.strip() or len(line) - len(line.lstrip()) <= indent:
            break
        said.append(line.strip())
    return " ".join(s for s in said if s)


def _named(tool: ToolFacts, siblings: Sequence[ToolFacts]) -> list[str]:
    """Siblings a parameter description of ``tool`` names (rule 1), in sibling order."""
    if not tool.parameter_text:
        return []
    return [
        s.tool_id for s in siblings
        if s is not tool and len(s.name) >= _MIN_NAME_CHARS
        and s.name in tool.parameter_text  # a plain substring test first: a server's siblings are many
        and re.search(rf"(?<![\w-]){re.escape(s.name)}(?![\w-])", tool.parameter_text)
    ]


def _producers(tool: ToolFacts, siblings: Sequence[ToolFacts]) -> list[str]:
    """Siblings that produce one of ``tool``'s required identifiers (rule 2), in sibling order."""
    out: list[str] = []
    for words in tool.required_words:
        if not IDENTIFIER_WORDS.intersection(words):
            continue
        wanted = [w for w in words if w not in IDENTIFIER_WORDS] or list(words)
        out.extend(
            s.tool_id for s in siblings
            if s is not tool and not s.requires_identifier and not s.asks_for_value(words)
            and all(w in s.words for w in wanted)
        )
    return out


def link_prerequisites(tools: Iterable[ToolDoc]) -> dict[str, tuple[str, ...]]:
    """Every tool's prerequisites (tool id → sibling ids), for tools that have any.

    Example:
        >>> from toolsift.mappings.model import ParameterDoc
        >>> geo = ToolDoc(tool_id="maps/geocode", name="geocode", agent_id="agent:maps",
        ...               description="Convert an address to latitude and longitude",
        ...               parameters=(ParameterDoc("address"),))
        >>> near = ToolDoc(tool_id="maps/nearby", name="nearby", agent_id="agent:maps",
        ...                description="Places near a point",
        ...                parameters=(ParameterDoc("latitude"), ParameterDoc("longitude")))
        >>> link_prerequisites([geo, near])
        {'maps/nearby': ('maps/geocode',)}
    """
    servers: dict[str, list[ToolFacts]] = {}
    for doc in tools:
        facts = ToolFacts.of(doc)
        if facts is not None:
            servers.setdefault(facts.agent_id, []).append(facts)
    links: dict[str, tuple[str, ...]] = {}
    for siblings in servers.values():
        for tool in siblings:
            found = tuple(dict.fromkeys([*_named(tool, siblings), *_producers(tool, siblings)]))[:MAX_PREREQUISITES]
            if found:
                links[tool.tool_id] = found
    return links


def with_prerequisites(doc: ToolDoc, links: Mapping[str, tuple[str, ...]]) -> ToolDoc:
    """``doc`` with its linked prerequisites (unchanged when it has none)."""
    found = links.get(doc.tool_id, ())
    return doc if found == doc.prerequisites else replace(doc, prerequisites=found)
