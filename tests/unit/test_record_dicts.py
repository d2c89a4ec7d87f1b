"""Records whose ``to_dict`` is the dataclass's fields with one of them shaped for JSON: each keeps its
keys, their order and the values the ``--json`` output and the stored reports had."""

from __future__ import annotations

from toolsift.dashboards.importer import ImportSummary
from toolsift.evaluation.runner import EvalResult
from toolsift.ingest.raw_records import FlaggedRecord, RiskFlaggedRecord


def test_an_import_summary_lists_its_objects_as_type_id_title_objects() -> None:
    summary = ImportSummary("http://d:5601", "saved.ndjson", 2, True, [("dashboard", "d1", "Tuning"), ("search", "s1", "Log")])

    as_dict = summary.to_dict()

    assert list(as_dict) == ["url", "source", "success_count", "overwrite", "objects"]
    assert as_dict == {
        "url": "http://d:5601",
        "source": "saved.ndjson",
        "success_count": 2,
        "overwrite": True,
        "objects": [{"type": "dashboard", "id": "d1", "title": "Tuning"}, {"type": "search", "id": "s1", "title": "Log"}],
    }


def test_an_eval_result_rounds_its_metrics_to_four_places_and_keeps_the_rest_as_it_is() -> None:
    protocol = {"run_depth": 100, "field_weights": {"name": 2.0}, "weights_version": None}
    ingest = {"catalog": "tools.json", "rejected": [{"position": "record 3"}], "ok": False}
    result = EvalResult(dataset="apibank", method="multi-field", retriever="bm25", n_queries=101,
                        metrics={"ndcg@10": 0.517249, "recall@10": 0.61}, index="toolsift-eval-apibank-v001",
                        embedding_model=None, latency_ms={"p50": 21.5, "n": 101}, protocol=protocol, ingest=ingest)

    as_dict = result.to_dict()

    assert list(as_dict) == ["dataset", "method", "retriever", "n_queries", "metrics", "index", "embedding_model",
                             "latency_ms", "protocol", "ingest"]
    assert as_dict["metrics"] == {"ndcg@10": 0.5172, "recall@10": 0.61}
    assert (as_dict["dataset"], as_dict["method"], as_dict["retriever"], as_dict["n_queries"]) == (
        "apibank", "multi-field", "bm25", 101)
    assert (as_dict["index"], as_dict["embedding_model"]) == ("toolsift-eval-apibank-v001", None)
    assert (as_dict["latency_ms"], as_dict["protocol"], as_dict["ingest"]) == ({"p50": 21.5, "n": 101}, protocol, ingest)


def test_a_flagged_record_gives_its_notes_as_a_list() -> None:
    flagged = FlaggedRecord("tools.json", "record 4", "weather", "inferred", ("parameters: inferred from the text",))

    assert flagged.to_dict() == {"source": "tools.json", "position": "record 4", "record_id": "weather",
                                 "quality": "inferred", "notes": ["parameters: inferred from the text"]}
    assert list(flagged.to_dict()) == ["source", "position", "record_id", "quality", "notes"]


def test_a_risk_flagged_record_gives_its_reasons_as_a_list() -> None:
    risky = RiskFlaggedRecord("tools.json", "record 5", "mailer", ("exfiltration: the user's passwords",))

    assert risky.to_dict() == {"source": "tools.json", "position": "record 5", "record_id": "mailer",
                               "reasons": ["exfiltration: the user's passwords"]}
    assert list(risky.to_dict()) == ["source", "position", "record_id", "reasons"]
