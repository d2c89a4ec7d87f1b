"""Re-embedding an index with another encoder: a new version beside the current one, swapped in only
when the guard passes, and nothing left behind when it does not."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from toolsift.encoders.embedding import Embedder, model_path
from toolsift.learning.learner import reembed_guarded
from toolsift.evaluation.runner import ensure_eval_index
from toolsift.learning.reembed import doc_from_source, reembed_version
from toolsift.mappings.index import IndexManager
from toolsift.encoders.encoder_artifact import save_embedder
from toolsift.encoders.encoder_pairs import load_training_pairs
from toolsift.encoders.encoder_training import EmbedderTrainingConfig, train_embedder
from toolsift.search import Searcher
from toolsift.errors import ConfigError, IndexMismatchError
from toolsift.opensearch import cosine_from_lucene

pytestmark = pytest.mark.integration

ALIAS = "toolsift-test-reembed"


@pytest.fixture(scope="module")
def indexed(client: Any, base_settings: Any, embedder: Any, datasets: Path) -> Any:
    IndexManager(client, ALIAS).delete_all()  # a run before this one may have swapped in versions
    settings = base_settings.with_overrides(index=ALIAS, query_log=False, feedback_index=f"{ALIAS}-feedback")
    ensure_eval_index(client, settings, embedder, ALIAS, datasets / "toolret" / "apibank" / "tools.json", "toolret")
    return settings


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory, datasets: Path) -> Embedder:
    """An encoder a few steps of Tool-Embed training moved off MiniLM (its vectors differ)."""
    pairs = load_training_pairs(datasets / "train")
    outcome = train_embedder(model_path("all-MiniLM-L6-v2"), pairs.examples(None)[:6],
                             EmbedderTrainingConfig(batch_size=3, max_length=32, device="cpu"))
    root = tmp_path_factory.mktemp("embedders")
    save_embedder(outcome, root, "tiny", base_model="all-MiniLM-L6-v2", training={"sha256": pairs.sha256}, config={})
    return Embedder(str(root / "tiny"), device="cpu", backend="torch")


def test_every_document_is_written_again_with_the_new_model_s_vectors(
        client: Any, indexed: Any, embedder: Any, tiny: Embedder) -> None:
    manager = IndexManager(client, ALIAS)
    before = manager.require()
    built = reembed_version(client, ALIAS, tiny)
    try:
        assert manager.require().index == before.index  # nothing swapped
        assert manager.info(built.index).embedding_model == tiny.name
        assert manager.info(built.index).catalogs == before.catalogs
        old = {h["_id"]: h for h in client.search(index=before.index, body={"size": 500})["hits"]["hits"]}
        new = {h["_id"]: h for h in client.search(index=built.index, body={"size": 500})["hits"]["hits"]}
        assert built.documents == len(old) == len(new) > 100
        for doc_id, hit in new.items():
            assert hit.get("_routing") == old[doc_id].get("_routing")
            assert doc_from_source(hit["_source"]) == doc_from_source(old[doc_id]["_source"])
        # each stored vector is the new model's embedding of its text: a k-NN query with that embedding finds
        # its document at cosine 1 in the new version, not in the old one
        tool = next(h["_source"] for h in new.values() if h["_source"]["entity"] == "tool")
        vector = tiny.encode_document([tool["description"]])[0].tolist()
        knn = {"size": 1, "query": {"knn": {"description_vector": {"vector": vector, "k": 1}}}}
        top_new = client.search(index=built.index, body=knn)["hits"]["hits"][0]
        top_old = client.search(index=before.index, body=knn)["hits"]["hits"][0]
        assert top_new["_source"]["tool_id"] == tool["tool_id"]
        assert cosine_from_lucene(top_new["_score"]) == pytest.approx(1.0, abs=1e-5)
        assert cosine_from_lucene(top_old["_score"]) < 1.0 - 1e-4
    finally:
        client.indices.delete(index=built.index, ignore_unavailable=True)


def test_with_no_benchmark_named_the_guard_refuses_before_anything_is_built(
        client: Any, indexed: Any, embedder: Any, tiny: Embedder) -> None:
    manager = IndexManager(client, ALIAS)
    before, versions = manager.require().index, manager.versions()
    with pytest.raises(ConfigError, match="benchmark guard is on and names no benchmark.*--no-benchmark-guard"):
        reembed_guarded(client, indexed, embedder, tiny)
    assert manager.require().index == before and manager.versions() == versions


def test_with_nothing_to_compare_on_the_guard_fails_and_the_new_version_is_gone(
        client: Any, indexed: Any, embedder: Any, tiny: Embedder) -> None:
    manager = IndexManager(client, ALIAS)
    before, versions = manager.require().index, manager.versions()
    outcome = reembed_guarded(client, indexed, embedder, tiny, benchmark_guard=False)
    assert not outcome.guard.passed and not outcome.swapped
    assert outcome.guard.reasons == ("nothing to compare on: no benchmark given and no held-out feedback",)
    assert manager.require().index == before and manager.versions() == versions
    assert not client.indices.exists_alias(name=f"{ALIAS}-reembed-candidate")


def test_a_guard_that_passes_swaps_the_alias_and_keeps_the_old_version(
        client: Any, indexed: Any, embedder: Any, datasets: Path) -> None:
    """The same model from its folder: figures equal to the digit, so the guard passes by construction."""
    manager = IndexManager(client, ALIAS)
    before = manager.require().index
    same = Embedder(str(model_path("all-MiniLM-L6-v2")), device="cpu", backend=embedder.backend)
    outcome = reembed_guarded(client, indexed, embedder, same, benchmarks=[datasets / "toolret" / "apibank"])
    scores = outcome.guard.benchmarks["apibank"]
    assert scores["candidate"] == scores["current"] and outcome.guard.passed and outcome.swapped
    assert manager.require().index == outcome.built.index != before and before in manager.versions()
    hits = Searcher(client, indexed, same).search("convert currency", top_k=3, retriever="hybrid").tools
    assert len(hits) == 3
    json.dumps(outcome.to_dict())  # the CLI's --json


def test_an_index_refuses_queries_embedded_by_another_model(client: Any, indexed: Any, tiny: Embedder) -> None:
    with pytest.raises(IndexMismatchError):
        Searcher(client, indexed, tiny)
