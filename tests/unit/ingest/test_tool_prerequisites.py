"""Prerequisites: the tools of a server that a tool needs called first, read from the documentation."""

from __future__ import annotations

from toolsift.ingest.prerequisites import MAX_PREREQUISITES, link_prerequisites, with_prerequisites
from toolsift.mappings.model import ParameterDoc, ToolDoc


def _tool(name: str, description: str = "", *parameters: ParameterDoc, server: str | None = "maps",
          response: str = "") -> ToolDoc:
    return ToolDoc(tool_id=f"{server or 'none'}/{name}", name=name, agent_id=f"agent:{server}" if server else None,
                   description=description, response=response, parameters=parameters)


GEOCODE = _tool("geocode_address", "Convert an address to geographic coordinates: latitude and longitude.",
                ParameterDoc("address"))
NEARBY = _tool("find_nearby_places", "Places of interest around a point.",
               ParameterDoc("latitude", "number"), ParameterDoc("longitude", "number"))
ROUTE = _tool("get_route", "Directions between two points, with their latitude and longitude.",
              ParameterDoc("from_latitude", "number"), ParameterDoc("to_latitude", "number"))


def test_a_tool_that_gives_the_coordinates_another_requires_is_its_prerequisite() -> None:
    links = link_prerequisites([GEOCODE, NEARBY])

    assert links == {"maps/find_nearby_places": ("maps/geocode_address",)}


def test_a_tool_that_itself_requires_an_identifier_produces_none() -> None:
    links = link_prerequisites([ROUTE, NEARBY])

    assert "maps/find_nearby_places" not in links  # the route mentions latitude but asks for one too


def test_a_sibling_named_in_a_parameter_description_is_a_prerequisite() -> None:
    codes = _tool("get-station-code-of-citys", "车站代码", ParameterDoc("citys"), server="rail")
    tickets = _tool("get-tickets", "余票查询", ParameterDoc("fromStation", description="出发地的 station_code，必须是通过 "
                                                        "`get-station-code-of-citys` 得到的"), server="rail")

    assert link_prerequisites([codes, tickets]) == {"rail/get-tickets": ("rail/get-station-code-of-citys",)}


def test_the_producer_of_an_id_carries_the_ids_other_words() -> None:
    search = _tool("search-objects", "Search the collection; returns object ids.", ParameterDoc("q"), server="museum")
    departments = _tool("list-departments", "All departments.", server="museum")
    get = _tool("get-object", "One object's record.", ParameterDoc("objectId", "number"), server="museum")

    assert link_prerequisites([search, departments, get]) == {"museum/get-object": ("museum/search-objects",)}


def test_tools_link_only_within_their_own_server() -> None:
    elsewhere = _tool("geocode_address", GEOCODE.description, ParameterDoc("address"), server="other")
    alone = _tool("find_nearby_places", NEARBY.description, *NEARBY.parameters, server=None)

    assert link_prerequisites([elsewhere, NEARBY]) == {}
    assert link_prerequisites([GEOCODE, alone]) == {}


def test_a_tool_lists_at_most_the_cap_named_ones_first() -> None:
    producers = [_tool(f"locate_{i}", "Gives a latitude for a place.", ParameterDoc("place")) for i in range(4)]
    named = _tool("pick_point", "A point on the map.", ParameterDoc("place"))
    needy = _tool("weather_at", "Weather at a point.", ParameterDoc("latitude", description="from `pick_point`"))

    found = link_prerequisites([*producers, named, needy])["maps/weather_at"]

    assert len(found) == MAX_PREREQUISITES and found[0] == "maps/pick_point"


def test_a_words_only_name_in_a_description_is_not_a_reference() -> None:
    get = _tool("get", "Get a thing.", ParameterDoc("name"))
    user = _tool("read_thing", "Read a thing.", ParameterDoc("name", description="what to get, as you would get it"))

    assert link_prerequisites([get, user]) == {}


def test_linking_sets_the_field_and_the_content_hash_follows_it() -> None:
    linked = with_prerequisites(NEARBY, link_prerequisites([GEOCODE, NEARBY]))

    assert linked.prerequisites == ("maps/geocode_address",)
    assert linked.content_hash != NEARBY.content_hash
    assert with_prerequisites(GEOCODE, {}) is GEOCODE


def test_a_tool_whose_docstring_says_a_required_parameter_holds_coordinates_produces_none() -> None:
    meet = _tool("suggest_meeting_point", "Find a meeting place between people.\n\nArgs:\n    locations: List of "
                 "dictionaries, each containing the latitude and longitude of a person's location\n"
                 "              Example: [{\"latitude\": 37.7}]\n", ParameterDoc("locations", "array"))
    route = _tool("get_route", "Directions from a point.", ParameterDoc("latitude", "number"))

    links = link_prerequisites([meet, GEOCODE, route])

    assert links == {"maps/get_route": ("maps/geocode_address",)}  # it takes coordinates, it does not give them
