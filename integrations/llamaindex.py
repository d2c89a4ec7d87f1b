"""toolsift for LlamaIndex: a retriever over toolsift's index, and the ``tool_retriever`` agents take.

:class:`ToolsiftRetriever` is a :class:`llama_index.core.base.base_retriever.BaseRetriever`: ``retrieve``
/ ``aretrieve`` (a ``str`` or a ``QueryBundle``) ask toolsift's search API and answer one
``NodeWithScore`` per tool, in toolsift's order, scored by toolsift (None for a pinned tool it did not
rank); the node's id is the tool's id and its metadata holds ``name``, ``tool_id``, ``original_name``,
``server`` and ``rank``.

:class:`ToolsiftToolRetriever` is an :class:`llama_index.core.objects.ObjectRetriever` over the user's own
tools (``FunctionTool``, any ``BaseTool``): ``retrieve(query)`` / ``aretrieve(query)`` answer the user's
tool objects toolsift picks, so it goes wherever LlamaIndex takes an ``ObjectRetriever``, e.g. an agent's
``tool_retriever``::

    from llama_index.core.agent.workflow import FunctionAgent
    from toolsift.client import AsyncToolsiftClient, ToolsiftClient
    from toolsift.integrations.llamaindex import ToolsiftRetriever, ToolsiftToolRetriever

    url, key = "http://127.0.0.1:8000", "tsk_..."
    retriever = ToolsiftRetriever(ToolsiftClient(url, key), async_client=AsyncToolsiftClient(url, key), top_k=8)
    tools = ToolsiftToolRetriever(all_my_tools, retriever, always_include=["ask_user"])
    agent = FunctionAgent(tool_retriever=tools, llm=llm)
    await agent.run("what is AAPL trading at?")

Matching: a user's tool is picked when its ``metadata.name`` equals a returned tool's ``name`` (as the
asked ``format`` calls it: ``openai`` by default), its ``original_name`` or its ``id``. Returned tools
that match none are skipped, never invented; picked tools come in toolsift's order, then the
``always_include`` ones. A blank query searches nothing and answers every tool; a query that is exactly
one tool's name searches nothing and answers that tool, then the ``always_include`` ones (LlamaIndex's
agents look a tool up that way, ``get_tools(tool_name)``, before they call it).

When toolsift cannot answer (no connection, a timeout, 429, 5xx), :class:`ToolsiftToolRetriever` answers
all the user's tools with a logged warning (``on_error="fallback"``, the default) or raises the client's
error (``on_error="raise"``); any other error answer (a wrong key: 401, a bad option: 400) is always
raised. :class:`ToolsiftRetriever` itself always raises. Needs the ``llamaindex`` extra:
``pip install 'toolsift[llamaindex]'``.
"""

from __future__ import annotations

import logging
from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import Any

from toolsift.client import AsyncToolsiftClient, Format, SearchResult, ToolsiftClient
from toolsift.errors import ConfigError, ToolsiftError
from toolsift.integrations._common import (OnError, check_clients, check_positive, clip_query, fall_back, first_known,
                                           pick, search_async, search_kwargs, sync_client)

try:
    from llama_index.core.base.base_retriever import BaseRetriever
    from llama_index.core.callbacks import CallbackManager
    from llama_index.core.objects import ObjectRetriever, SimpleToolNodeMapping
    from llama_index.core.postprocessor.types import BaseNodePostprocessor
    from llama_index.core.schema import NodeWithScore, QueryBundle, QueryType, TextNode
    from llama_index.core.tools import BaseTool
except ImportError as exc:  # pragma: no cover - the extra is installed in the test environment
    raise ImportError("toolsift.integrations.llamaindex needs llama-index-core: "
                      "pip install 'toolsift[llamaindex]'") from exc

__all__ = ["ToolsiftRetriever", "ToolsiftToolRetriever", "OnError"]

logger = logging.getLogger(__name__)


def _match(node: NodeWithScore, names: Collection[str]) -> str | None:
    """The user's tool name a node of :meth:`ToolsiftRetriever.nodes` stands for (the tool's ``name``,
    ``original_name`` or ``id``, from the node's metadata), or None."""
    meta = node.node.metadata
    return first_known((meta.get("name"), meta.get("original_name"), meta.get("tool_id")), names)


class ToolsiftRetriever(BaseRetriever):
    """Tools from toolsift's search API as LlamaIndex nodes (one per tool, toolsift's order and scores).

    Args:
        client: the sync client (``retrieve``); also used, in a worker thread, by ``aretrieve`` when
            ``async_client`` is not given.
        async_client: the async client (``aretrieve``).
        top_k: how many tools to ask toolsift for.
        format: the format of the returned names and definitions (``openai``: callable names).
        search_options: more :meth:`ToolsiftClient.search` keywords (``servers``, ``tags``, ``pinned``...).
        callback_manager: LlamaIndex's callback manager, as for any retriever.

    Raises:
        ConfigError: neither client is given, or ``top_k`` is not positive.
    """

    def __init__(self, client: ToolsiftClient | None = None, *, async_client: AsyncToolsiftClient | None = None,
                 top_k: int = 10, format: Format = "openai", search_options: Mapping[str, Any] | None = None,
                 callback_manager: CallbackManager | None = None) -> None:
        check_clients("ToolsiftRetriever", client, async_client)
        check_positive(top_k=top_k)
        super().__init__(callback_manager=callback_manager)
        self.client = client
        self.async_client = async_client
        self.top_k = top_k
        self.format: Format = format
        self.search_options = dict(search_options or {})

    def search(self, query: str) -> SearchResult:
        """toolsift's answer for ``query`` (sync client); its errors are raised."""
        client = sync_client(self.client, "ToolsiftRetriever", "aretrieve")
        return client.search(clip_query(query, strip=False), **self._search_kwargs())

    async def asearch(self, query: str) -> SearchResult:
        """As :meth:`search`, with the async client (or the sync one in a worker thread)."""
        return await search_async(clip_query(query, strip=False), self._search_kwargs(), client=self.client,
                                  async_client=self.async_client)

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        return self.nodes(self.search(query_bundle.query_str))

    async def _aretrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        return self.nodes(await self.asearch(query_bundle.query_str))

    def _search_kwargs(self) -> dict[str, Any]:
        return search_kwargs(self.search_options, top_k=self.top_k, format=self.format)

    @staticmethod
    def nodes(answer: SearchResult) -> list[NodeWithScore]:
        """One node per tool of ``answer``, in its order."""
        return [NodeWithScore(node=TextNode(
            id_=hit.id, text=f"{hit.name}: {hit.description}",
            metadata={"name": hit.name, "tool_id": hit.id, "original_name": hit.raw.get("original_name"),
                      "server": hit.server, "rank": hit.rank},
            excluded_embed_metadata_keys=["tool_id", "original_name", "server", "rank"],
            excluded_llm_metadata_keys=["tool_id", "original_name", "server", "rank"],
        ), score=hit.score) for hit in answer.tools]


class ToolsiftToolRetriever(ObjectRetriever[BaseTool]):
    """The user's LlamaIndex tools that toolsift picks for a query (an agent's ``tool_retriever``).

    Args:
        tools: the user's tools, each with a unique ``metadata.name``.
        retriever: the :class:`ToolsiftRetriever` that asks toolsift.
        always_include: names of tools answered for every query, whatever toolsift answers.
        on_error: ``"fallback"`` (all the tools, a warning) or ``"raise"`` when toolsift cannot answer.
        node_postprocessors: applied to toolsift's nodes before they are mapped to tools, as in
            ``ObjectRetriever``.

    Raises:
        ConfigError: a tool without a name, two tools with one name, or an ``always_include`` name that
            is no tool's.
    """

    def __init__(self, tools: Sequence[BaseTool], retriever: ToolsiftRetriever, *,
                 always_include: Iterable[str] = (), on_error: OnError = "fallback",
                 node_postprocessors: list[BaseNodePostprocessor] | None = None) -> None:
        names = [t.metadata.name for t in tools]
        if any(not n for n in names) or len(set(names)) != len(names):
            raise ConfigError(f"each tool needs a name of its own; got {names}")
        self.tools: dict[str, BaseTool] = {str(t.metadata.name): t for t in tools}
        self.always_include = list(dict.fromkeys(always_include))
        unknown = [n for n in self.always_include if n not in self.tools]
        if unknown:
            raise ConfigError(f"always_include names no tool: {unknown}; the tools: {sorted(self.tools)}")
        self.on_error: OnError = on_error
        super().__init__(retriever, SimpleToolNodeMapping(list(tools)), node_postprocessors)

    def retrieve(self, str_or_query_bundle: QueryType) -> list[BaseTool]:
        """The tools toolsift picks for the query, then the ``always_include`` ones."""
        bundle = self._bundle(str_or_query_bundle)
        known = self._known(bundle)
        if known is not None:
            return known
        try:
            nodes = self.retriever.retrieve(bundle)
        except ToolsiftError as exc:
            return self._failed(exc)
        return self._pick(nodes, bundle)

    async def aretrieve(self, str_or_query_bundle: QueryType) -> list[BaseTool]:
        """As :meth:`retrieve`, asking toolsift with the async client."""
        bundle = self._bundle(str_or_query_bundle)
        known = self._known(bundle)
        if known is not None:
            return known
        try:
            nodes = await self.retriever.aretrieve(bundle)
        except ToolsiftError as exc:
            return self._failed(exc)
        return self._pick(nodes, bundle)

    @staticmethod
    def _bundle(query: QueryType) -> QueryBundle:
        return QueryBundle(query_str=query) if isinstance(query, str) else query

    def _known(self, bundle: QueryBundle) -> list[BaseTool] | None:
        """The answer to a query that needs no search (blank: every tool; a tool's name: that tool), or None."""
        query = bundle.query_str.strip()
        if not query:
            return list(self.tools.values())
        if query in self.tools:
            return [self.tools[name] for name in dict.fromkeys([query, *self.always_include])]
        return None

    def _failed(self, exc: ToolsiftError) -> list[BaseTool]:
        fall_back(exc, self.on_error, logger, "toolsift could not answer (%s); answering all %d tools", len(self.tools))
        return list(self.tools.values())

    def _pick(self, nodes: list[NodeWithScore], bundle: QueryBundle) -> list[BaseTool]:
        for postprocessor in self.node_postprocessors:
            nodes = postprocessor.postprocess_nodes(nodes, query_bundle=bundle)
        picked = pick((_match(node, self.tools) for node in nodes), exclude=self.always_include)
        if nodes and not picked:
            logger.warning("toolsift's %d tools for the query match none of the %d tools by name or id",
                           len(nodes), len(self.tools))
        return [self.tools[name] for name in [*picked, *self.always_include]]
