"""Versioned indices behind an alias.

Each alias (default ``toolsift-tools``) points at one concrete index ``<alias>-NNNNNN`` created from a
composable index template derived from the document model. A rebuild creates the next version beside
the current one, fills it, and swaps the alias atomically; searches never see a half-built index.
The index's ``_meta.toolsift`` records the schema version, the mapping fingerprint and the embedding
model and dimension, and :meth:`IndexManager.check_model` refuses a query encoded by another model.
"""

from __future__ import annotations

import copy
import re
import time
from dataclasses import dataclass, field
from typing import Any

from opensearchpy import OpenSearch
from opensearchpy.exceptions import NotFoundError

from toolsift.errors import IndexMismatchError
from toolsift.mappings.layout import Layout, index_layout
from toolsift.mappings.template import index_body, mapping_fingerprint

__all__ = ["IndexManager", "IndexInfo"]


@dataclass(frozen=True)
class IndexInfo:
    """The concrete index an alias points at, and what it was built for."""

    alias: str
    index: str
    embedding_model: str
    embedding_dim: int
    mapping_fingerprint: str
    meta: dict[str, Any] = field(default_factory=dict)

    @property
    def catalogs(self) -> dict[str, Any]:
        value = self.meta.get("catalogs", {})
        return dict(value) if isinstance(value, dict) else {}

    @property
    def unfinished(self) -> dict[str, str]:
        """Catalog path → when an ingest of it started writing that has not finished (interrupted, or
        still running): the index may hold part of that catalog's new version."""
        value = self.meta.get("ingesting", {})
        return {str(k): str(v) for k, v in value.items()} if isinstance(value, dict) else {}


class IndexManager:
    """Create, inspect, version and swap the index behind one alias.

    Args:
        client: a connected opensearch-py client.
        alias: the alias searches and ingest use.
        shards, replicas: settings of new index versions; None: the layout rule
            (:func:`~toolsift.mappings.layout.index_layout`, by the tools a version is made for).
    """

    def __init__(self, client: OpenSearch, alias: str, *, shards: int | None = None,
                 replicas: int | None = None) -> None:
        self.client = client
        self.alias = alias
        self.shards = shards
        self.replicas = replicas

    # --- reading ----------------------------------------------------------------------------------
    def current(self) -> IndexInfo | None:
        """The index the alias points at, or None when the alias does not exist."""
        try:
            answer = self.client.indices.get_alias(name=self.alias)
        except NotFoundError:
            return None
        indices = sorted(answer)
        if len(indices) != 1:
            raise IndexMismatchError(f"alias {self.alias!r} points at {len(indices)} indices: {indices}")
        return self.info(indices[0])

    def versions(self) -> list[str]:
        """Every concrete version of this alias, oldest first."""
        try:
            answer = self.client.indices.get(index=f"{self.alias}-0*", allow_no_indices=True)
        except NotFoundError:
            return []
        return sorted(name for name in answer if self._is_version(name))

    def _is_version(self, name: str) -> bool:
        return re.fullmatch(re.escape(self.alias) + r"-\d{6}", name) is not None

    def info(self, index: str) -> IndexInfo:
        """What the concrete ``index`` was built for (its ``_meta.toolsift``)."""
        mapping = self.client.indices.get_mapping(index=index)[index]["mappings"]
        meta = mapping.get("_meta", {}).get("toolsift")
        if not meta:
            raise IndexMismatchError(
                f"index {index!r} (alias {self.alias!r}) was not created by toolsift: no _meta.toolsift"
            )
        return IndexInfo(
            alias=self.alias,
            index=index,
            embedding_model=str(meta.get("embedding_model", "")),
            embedding_dim=int(meta.get("embedding_dim", 0)),
            mapping_fingerprint=str(meta.get("mapping_fingerprint", "")),
            meta=dict(meta),
        )

    # --- checking ---------------------------------------------------------------------------------
    def require(self) -> IndexInfo:
        """The current index; raises when the alias does not exist."""
        info = self.current()
        if info is None:
            raise IndexMismatchError(
                f"index alias {self.alias!r} does not exist; ingest a catalog first (`toolsift ingest PATH`)"
            )
        return info

    def check_model(self, info: IndexInfo, model: str, dimension: int) -> None:
        """Refuse to use ``info`` with vectors from another embedding model than it was built with."""
        if info.embedding_model != model or info.embedding_dim != dimension:
            raise IndexMismatchError(
                f"index {info.index!r} holds {info.embedding_model} vectors ({info.embedding_dim}-d) "
                f"but the configured embedding model is {model} ({dimension}-d); set "
                f"TOOLSIFT_EMBEDDING_MODEL={info.embedding_model} or rebuild with `toolsift ingest --rebuild`"
            )

    def is_current_schema(self, info: IndexInfo) -> bool:
        return info.mapping_fingerprint == mapping_fingerprint(info.embedding_dim)

    def is_stale(self, model: str, dimension: int) -> bool:
        """True when the alias exists but was built for another model or an older schema."""
        info = self.current()
        return info is not None and (
            not self.is_current_schema(info) or info.embedding_model != model or info.embedding_dim != dimension
        )

    # --- writing ----------------------------------------------------------------------------------
    def layout(self, tools: int) -> Layout:
        """The primaries and replicas a new version for ``tools`` tools gets on this cluster."""
        nodes = int(self.client.cluster.health().get("number_of_data_nodes") or 1)
        return index_layout(max(tools, 1), nodes, shards=self.shards, replicas=self.replicas)

    def put_template(self, model: str, dimension: int, tools: int = 1) -> None:
        """(Re)write the composable index template that new versions of this alias are created from
        (laid out for ``tools`` tools)."""
        layout = self.layout(tools)
        body = index_body(
            dimension=dimension, embedding_model=model, shards=layout.shards, replicas=layout.replicas
        )
        self.client.indices.put_index_template(
            name=self.alias,
            body={"index_patterns": [f"{self.alias}-0*"], "priority": 100, "template": body},
        )

    def create_version(self, model: str, dimension: int, tools: int = 1) -> str:
        """Create the next concrete version (not yet aliased), laid out for ``tools`` tools; its name."""
        self.put_template(model, dimension, tools)
        existing = self.versions()
        number = int(existing[-1].rsplit("-", 1)[1]) + 1 if existing else 1
        name = f"{self.alias}-{number:06d}"
        self.client.indices.create(index=name)
        return name

    def ensure(self, model: str, dimension: int, tools: int = 1) -> IndexInfo:
        """The current index, created (version 1 + alias, laid out for ``tools`` tools) when the alias
        does not exist yet.

        Raises:
            IndexMismatchError: the index exists for another model or an older document schema.
        """
        info = self.current()
        if info is None:
            self.swap(self.create_version(model, dimension, tools), delete_old=False)
            return self.require()
        self.check_model(info, model, dimension)
        if not self.is_current_schema(info):
            raise IndexMismatchError(
                f"index {info.index!r} was built with an older document schema; rebuild it with "
                "`toolsift ingest PATH --rebuild` (a new version is built beside it, then swapped in)"
            )
        return info

    def swap(self, new_index: str, *, delete_old: bool = True) -> None:
        """Point the alias at ``new_index`` in one atomic action; optionally delete the old version."""
        old = self.current()
        actions: list[dict[str, Any]] = [{"add": {"index": new_index, "alias": self.alias}}]
        if old is not None and old.index != new_index:
            actions.insert(0, {"remove": {"index": old.index, "alias": self.alias}})
        self.client.indices.update_aliases(body={"actions": actions})
        if delete_old and old is not None and old.index != new_index:
            self.client.indices.delete(index=old.index)

    def mark_unfinished(self, index: str, catalog: str, unfinished: bool) -> None:
        """Record (``unfinished``) or clear that an ingest of ``catalog`` is writing into ``index``
        (:attr:`IndexInfo.unfinished`)."""
        marks = {k: v for k, v in self.info(index).unfinished.items() if k != catalog}
        if unfinished:
            marks[catalog] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        self.update_meta(index, ingesting=marks)

    def update_meta(self, index: str, **values: Any) -> None:
        """Merge ``values`` into the index's ``_meta.toolsift`` (read-modify-write)."""
        mapping = self.client.indices.get_mapping(index=index)[index]["mappings"]
        meta = copy.deepcopy(mapping.get("_meta", {}))
        meta.setdefault("toolsift", {}).update(values)
        self.client.indices.put_mapping(index=index, body={"_meta": meta})

    def delete_all(self) -> None:
        """Delete every version, the alias and the template (tests and `toolsift index drop`)."""
        for name in self.versions():
            self.client.indices.delete(index=name, ignore_unavailable=True)
        try:
            self.client.indices.delete_index_template(name=self.alias)
        except NotFoundError:
            pass
