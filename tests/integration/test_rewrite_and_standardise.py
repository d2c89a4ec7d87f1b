"""Query rewriting and LLM standardisation on a real node, with the paper's outputs and with an LLM.

* The MFTR paper's published GPT-4o-mini outputs, imported into a fresh cache, answer without any LLM:
  an APIBank request gets the paper's structured query (source ``cache``), and ``ingest
  --standardize llm`` indexes the paper's standardised descriptions.
* With an LLM configured (a scripted OpenAI-compatible server on 127.0.0.1 that answers each task
  with canned valid JSON and records every request): the rewrite sees the BM25 top descriptions of
  the index in its data sections, and standardisation goes standardize → expand → judge (fail) →
  one regeneration → judge (pass); every answer is cached, so asking again costs no request.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from toolsift.errors import ERROR_TABLE, LLMUnavailableError
from toolsift.ingest.loaders import load_catalog
from toolsift.ingest.pipeline import ingest_catalog
from toolsift.ingest.raw_records import RawTool
from toolsift.standardise.tasks import EXPAND_INSTRUCTIONS, JUDGE_INSTRUCTIONS, STANDARDIZE_INSTRUCTIONS
from toolsift.standardise.standardiser import LLMStandardiser
from toolsift.llm import LLM, LLMCache
from toolsift.standardise.published import import_published
from toolsift.mappings import F
from toolsift.mappings.index import IndexManager
from toolsift.opensearch import cap_terms
from toolsift.query.rewrite import REWRITE_INSTRUCTIONS, QueryRewriter
from toolsift.query.structured import StructuredQuery

from tests.fakes import LoopbackJSONServer, chat_completion

pytestmark = pytest.mark.integration

PAPER_MODEL = "gpt-4o-mini"


# --- the paper's outputs -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def paper_cache_dir(tmp_path_factory: pytest.TempPathFactory, datasets: Path) -> Path:
    """A fresh cache folder holding the MFTR paper's APIBank rewrites and standardised documents."""
    folder = tmp_path_factory.mktemp("paper-cache")
    import_published(LLMCache(folder), datasets / "mftr" / "apibank")
    return folder


@pytest.fixture(scope="module")
def paper_cache(paper_cache_dir: Path) -> LLMCache:
    return LLMCache(paper_cache_dir)


@pytest.fixture(scope="module")
def apibank(datasets: Path) -> dict[str, Any]:
    folder = datasets / "mftr" / "apibank"
    queries = json.loads((datasets / "toolret" / "apibank" / "queries.json").read_text(encoding="utf-8"))
    return {
        "catalog": datasets / "toolret" / "apibank" / "tools.json",
        "queries": {q["id"]: q["query"] for q in queries},
        "rewrites": json.loads((folder / "rewritten_queries.gpt-4o-mini.json").read_text(encoding="utf-8")),
        "standardized": {
            r["id"]: r["augmented"]
            for r in json.loads((folder / "standardized_tools.gpt-4o-mini.json").read_text(encoding="utf-8"))
        },
    }


def test_an_apibank_request_gets_the_papers_rewrite_from_the_cache_without_an_llm(
    client: Any, settings: Any, paper_cache: LLMCache, apibank: dict[str, Any]
) -> None:
    rewriter = QueryRewriter(client, settings, None, paper_cache)
    for qid in ("apibank_query_0", "apibank_query_32", "apibank_query_44"):
        text = apibank["queries"][qid]

        rewrite = rewriter.rewrite(text)

        assert rewrite.source == "cache", qid
        assert rewrite.query == StructuredQuery.from_dict(apibank["rewrites"][qid], text=text)


def test_an_unknown_request_falls_back_without_an_llm(client: Any, settings: Any, paper_cache: LLMCache) -> None:
    rewrite = QueryRewriter(client, settings, None, paper_cache).rewrite("convert 3 miles to kilometres")

    assert rewrite.source == "fallback"
    assert rewrite.query == StructuredQuery.from_text("convert 3 miles to kilometres")


def _indexed(client: Any, alias: str, fields: list[str]) -> dict[str, dict[str, Any]]:
    answer = client.search(index=alias, body={"size": 1000, "_source": fields, "query": {"term": {F.entity: "tool"}}})
    return {hit["_id"]: hit["_source"] for hit in answer["hits"]["hits"]}


def test_ingest_standardize_llm_indexes_the_papers_standardised_descriptions_from_the_cache(
    client: Any, settings: Any, model: Any, paper_cache: LLMCache, apibank: dict[str, Any]
) -> None:
    standardiser = LLMStandardiser(None, paper_cache, PAPER_MODEL)

    report = ingest_catalog(client, settings, model, apibank["catalog"], standardiser=standardiser.require)

    assert report.ok, report.to_dict()
    assert report.tools == 101
    docs = _indexed(client, settings.index, [F.description, F.parameters, F.function])
    assert {tool_id: d[F.description] for tool_id, d in docs.items()} == {
        tool_id: augmented["description"] for tool_id, augmented in apibank["standardized"].items()
    }
    assert not any(d.get(F.function) for d in docs.values())  # no judged profile cached: none invented
    params = {p["name"]: p["required"] for p in docs["apibank_tool_94"][F.parameters]}
    assert params == {"keyword": False, "lecturer": False, "type": False}  # "three optional parameters"


def test_ingest_standardize_llm_without_an_llm_or_cache_fails_before_writing(
    client: Any, settings: Any, model: Any, tmp_path: Path, apibank: dict[str, Any]
) -> None:
    standardiser = LLMStandardiser(None, LLMCache(tmp_path / "empty-cache"), PAPER_MODEL)

    with pytest.raises(LLMUnavailableError, match="llm_base_url"):
        ingest_catalog(client, settings, model, apibank["catalog"], standardiser=standardiser.require)

    assert IndexManager(client, settings.index).current() is None


# --- with an LLM: a scripted OpenAI-compatible server --------------------------------------------------

#: How each task's prompt is recognised: the first line of its instructions (the regeneration's
#: instructions are the expansion's plus a paragraph of their own).
_MARKERS = (
    ("regenerate", "A reviewer rejected an earlier profile"),
    ("judge", JUDGE_INSTRUCTIONS.splitlines()[0]),
    ("expand", EXPAND_INSTRUCTIONS.splitlines()[0]),
    ("standardize", STANDARDIZE_INSTRUCTIONS.splitlines()[0]),
    ("rewrite", REWRITE_INSTRUCTIONS.splitlines()[0]),
)


def prompt_text(body: dict[str, Any]) -> str:
    """Every message's text of a chat-completions request, joined."""
    parts = []
    for message in body.get("messages", []):
        content = message.get("content")
        if isinstance(content, list):
            content = "".join(c.get("text", "") for c in content if isinstance(c, dict))
        parts.append(str(content or ""))
    return "\n".join(parts)


def data_sections(user_message: str) -> dict[str, str]:
    """The delimited data sections of a prompt (``<<<BEGIN name>>> ... <<<END name>>>``)."""
    found = re.findall(r"<<<BEGIN (\w+)>>>\n(.*?)\n<<<END \1>>>", user_message, re.DOTALL)
    return {name: text for name, text in found}


def task_of(body: dict[str, Any]) -> str:
    text = prompt_text(body)
    for task, marker in _MARKERS:
        if marker in text:
            return task
    raise AssertionError(f"unrecognised prompt: {text[:300]}")


class ScriptedLLM:
    """A chat-completions endpoint that answers each task from a script and records every request."""

    def __init__(self, script: dict[str, list[dict[str, Any]]]) -> None:
        self.script = script
        self.requests: list[dict[str, Any]] = []
        self.loopback = LoopbackJSONServer(self._answer)
        self.thread = threading.Thread(target=self.loopback.server.serve_forever, daemon=True)

    def _answer(self, path: str, headers: dict[str, str], raw: bytes) -> tuple[int, Any]:
        if path.endswith("/models"):
            return 200, {"object": "list", "data": [{"id": "scripted", "object": "model"}]}
        body = json.loads(raw)
        self.requests.append(body)
        task = task_of(body)
        answers = self.script.get(task) or []
        if not answers:
            return 500, {"error": {"message": f"no scripted answer left for {task}"}}
        return 200, chat_completion(json.dumps(answers.pop(0)), model=body.get("model", "scripted"),
                                    completion_id=f"chatcmpl-{len(self.requests)}")

    @property
    def url(self) -> str:
        return f"{self.loopback.url}/v1"

    def tasks(self) -> list[str]:
        return [task_of(body) for body in self.requests]

    def __enter__(self) -> ScriptedLLM:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.loopback.server.shutdown()
        self.loopback.server.server_close()


@pytest.fixture()
def scripted() -> Iterator[ScriptedLLM]:
    with ScriptedLLM({}) as server:
        yield server


def _llm(settings: Any, server: ScriptedLLM, cache_dir: Path) -> LLM:
    llm = LLM.from_settings(
        settings.with_overrides(llm_base_url=server.url, llm_model="scripted-model", llm_cache_dir=cache_dir)
    )
    assert llm is not None
    return llm


REWRITE = {
    "tool_needs": [{
        "user_intent": "I want to know the historical events of April 21st.",
        "tool_description": "Query historical events that happened on a specified date.",
        "expected_response": "A list of historical events for the date.",
    }],
    "extracted_arguments": {"date": "The calendar date whose historical events are requested."},
}


def test_the_llm_rewrite_sees_the_bm25_top_descriptions_in_data_sections(
    client: Any, settings: Any, model: Any, scripted: ScriptedLLM, tmp_path: Path, apibank: dict[str, Any]
) -> None:
    ingest_catalog(client, settings, model, apibank["catalog"])
    settings = settings.with_overrides(rewrite_context=5)
    llm = _llm(settings, scripted, tmp_path / "cache")
    scripted.script["rewrite"] = [REWRITE]
    text = apibank["queries"]["apibank_query_0"]
    expected = client.search(index=settings.index, body={
        "size": 5, "_source": [F.description],
        "query": {"bool": {"must": [{"match": {F.description: cap_terms(text)}}],
                           "filter": [{"term": {F.entity: "tool"}}]}},
    })["hits"]["hits"]
    rewriter = QueryRewriter(client, settings.with_overrides(llm_model=llm.model), llm, llm.cache)

    rewrite = rewriter.rewrite(text)

    assert rewrite.source == "llm"
    assert rewrite.query == StructuredQuery.from_dict(REWRITE, text=text)
    assert scripted.tasks() == ["rewrite"]
    messages = scripted.requests[0]["messages"]
    assert messages[0]["role"] == "system" and REWRITE_INSTRUCTIONS.strip() in messages[0]["content"]
    sections = data_sections(messages[1]["content"])
    assert sections["request"] == text
    listed = sections["candidate_tools"]
    assert len(expected) == 5 and len(listed.splitlines()) == 5
    for hit in expected:
        assert hit["_source"][F.description] in listed
    assert json.loads(sections["example_tool_document"])["description"] == expected[0]["_source"][F.description]
    assert text not in messages[0]["content"]  # the request is data, never instructions
    # the answer is cached: the same request again costs no LLM call
    again = rewriter.rewrite(text)
    assert (again.source, again.query) == ("cache", rewrite.query)
    assert len(scripted.requests) == 1


STANDARDISED = {
    "description": "Retrieve a user's authentication token by verifying their username and password.",
    "parameters": {
        "username": {"type": "string", "description": "The user's name.", "required": True, "example": "alice"},
        "password": {"type": "string", "description": "The user's password.", "required": True},
    },
    "response": "The authentication token as a string.",
    "examples": [{"user_intent": "Log me in as alice and give me my token."}],
}
UNFAITHFUL = {
    "function": "Issues an authentication token for a username and password.",
    "tags": ["authentication", "token", "login", "oauth"],
    "when_to_use": "When a user must sign in before calling protected APIs.",
    "limitations": "Tokens expire after one hour.",
}
FAITHFUL = {**UNFAITHFUL, "tags": ["authentication", "token", "login"], "limitations": ""}


def _apibank_tool(apibank: dict[str, Any], tool_id: str) -> RawTool:
    return next(r for r in load_catalog(apibank["catalog"]) if isinstance(r, RawTool) and r.tool_id == tool_id)


def test_a_profile_the_judge_fails_is_regenerated_exactly_once_and_everything_is_cached(
    settings: Any, scripted: ScriptedLLM, tmp_path: Path, apibank: dict[str, Any]
) -> None:
    scripted.script.update({
        "standardize": [STANDARDISED],
        "expand": [UNFAITHFUL],
        "judge": [
            {"faithful": False, "failing_fields": ["tags", "limitations"],
             "feedback": "The documentation mentions neither OAuth nor token expiry."},
            {"faithful": True, "failing_fields": [], "feedback": ""},
        ],
        "regenerate": [FAITHFUL],
    })
    llm = _llm(settings, scripted, tmp_path / "cache")
    standardiser = LLMStandardiser(llm, llm.cache, llm.model)
    raw = _apibank_tool(apibank, "apibank_tool_0")

    outcome = standardiser.run(raw)

    assert scripted.tasks() == ["standardize", "expand", "judge", "regenerate", "judge"]
    regeneration = data_sections(scripted.requests[3]["messages"][1]["content"])
    assert "neither OAuth nor token expiry" in regeneration["review"]
    assert json.loads(regeneration["rejected_profile"]) == UNFAITHFUL
    assert json.loads(data_sections(scripted.requests[0]["messages"][1]["content"])["documentation"]) == dict(
        raw.documentation
    )
    assert outcome.expansion == "regenerated"
    assert outcome.doc is not None
    assert outcome.doc["description"] == STANDARDISED["description"]
    assert outcome.doc["tags"] == FAITHFUL["tags"]
    assert "limitations" not in outcome.doc
    # a fresh standardiser on the same cache (an ingest's second pass, a later run) asks nothing
    again = LLMStandardiser(llm, llm.cache, llm.model).run(raw)
    assert again.doc == outcome.doc and again.expansion == "regenerated"
    assert len(scripted.requests) == 5


def test_ingest_with_the_llm_indexes_the_judged_profile_and_asks_once_per_step(
    client: Any, settings: Any, model: Any, scripted: ScriptedLLM, tmp_path: Path, apibank: dict[str, Any]
) -> None:
    catalog = tmp_path / "one.json"
    records = json.loads(apibank["catalog"].read_text(encoding="utf-8"))
    catalog.write_text(json.dumps([r for r in records if r["id"] == "apibank_tool_0"]), encoding="utf-8")
    scripted.script.update({
        "standardize": [STANDARDISED],
        "expand": [FAITHFUL],
        "judge": [{"faithful": True, "failing_fields": [], "feedback": ""}],
    })
    llm = _llm(settings, scripted, tmp_path / "cache")

    report = ingest_catalog(
        client, settings, model, catalog, standardiser=LLMStandardiser(llm, llm.cache, llm.model).require
    )

    assert report.ok and report.created == 1
    assert scripted.tasks() == ["standardize", "expand", "judge"]  # the second pass read the cache
    doc = _indexed(client, settings.index, [F.description, F.function, F.tags, F.limitations])["apibank_tool_0"]
    assert doc[F.description] == STANDARDISED["description"]
    assert doc[F.function] == FAITHFUL["function"]
    assert doc[F.tags] == FAITHFUL["tags"]
    assert doc[F.limitations] == ""


def test_an_unreachable_llm_stops_the_ingest_before_anything_is_written(
    client: Any, settings: Any, model: Any, tmp_path: Path, apibank: dict[str, Any]
) -> None:
    llm = LLM.from_settings(settings.with_overrides(
        llm_base_url="http://127.0.0.1:9/v1", llm_cache_dir=tmp_path / "cache", llm_max_retries=0, llm_timeout=2
    ))
    assert llm is not None

    with pytest.raises(LLMUnavailableError):
        ingest_catalog(
            client, settings, model, apibank["catalog"], standardiser=LLMStandardiser(llm, llm.cache, llm.model).require
        )

    assert IndexManager(client, settings.index).current() is None


# --- the command line ----------------------------------------------------------------------------------


@pytest.fixture()
def cli_with_paper_cache(
    monkeypatch: pytest.MonkeyPatch, paper_cache_dir: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[None]:
    """``toolsift`` reading the paper's cache, with no LLM configured (settings rebuilt around it)."""
    from toolsift.config import get_settings

    for name in ("TOOLSIFT_LLM_BASE_URL", "TOOLSIFT_CONFIG", "TOOLSIFT_WEIGHTS"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("TOOLSIFT_LLM_CACHE_DIR", str(paper_cache_dir))
    monkeypatch.chdir(tmp_path_factory.mktemp("cwd"))  # no ./toolsift.toml
    get_settings.cache_clear()
    yield
    get_settings.cache_clear()


@pytest.mark.usefixtures("cli_with_paper_cache")
def test_search_says_where_its_structured_query_came_from(
    client: Any, settings: Any, model: Any, apibank: dict[str, Any]
) -> None:
    from click.testing import CliRunner

    from toolsift.cli.main import cli

    ingest_catalog(client, settings, model, apibank["catalog"])
    text = apibank["queries"]["apibank_query_32"]

    def search(*args: str) -> dict[str, Any]:
        result = CliRunner().invoke(cli, [
            "--opensearch-url", settings.opensearch_url, "search", *args,
            "--index", settings.index, "--retriever", "bm25", "-k", "3", "--json",
        ])
        assert result.exit_code == 0, result.output
        return dict(json.loads(result.stdout))

    cached = search(text)
    assert cached["rewrite_source"] == "cache"
    assert cached["structured_query"] == StructuredQuery.from_dict(apibank["rewrites"]["apibank_query_32"]).to_dict()
    assert "apibank_tool_65" in [t["id"] for t in cached["tools"]]  # DeleteScene
    assert search(text, "--no-rewrite")["rewrite_source"] == "off"
    assert search("turn the living room lights off")["rewrite_source"] == "fallback"

    shown = CliRunner().invoke(cli, [
        "--opensearch-url", settings.opensearch_url, "search", text, "--index", settings.index, "--retriever", "bm25",
    ])
    assert shown.exit_code == 0, shown.output
    assert "structured query: cached rewrite [cache]" in shown.output


@pytest.mark.usefixtures("cli_with_paper_cache")
def test_the_ingest_command_standardises_with_the_cache_and_says_so_when_it_cannot(
    client: Any, settings: Any, apibank: dict[str, Any], tmp_path: Path
) -> None:
    from click.testing import CliRunner

    from toolsift.cli.main import cli

    subset = tmp_path / "apibank-3.json"
    records = json.loads(apibank["catalog"].read_text(encoding="utf-8"))[:3]
    subset.write_text(json.dumps(records), encoding="utf-8")
    unknown = tmp_path / "unknown.json"
    unknown.write_text(json.dumps([{"id": "x", "documentation": {"name": "Unknown", "description": "Not cached."}}]))

    def ingest(path: Path) -> Any:
        return CliRunner().invoke(cli, [
            "--opensearch-url", settings.opensearch_url, "ingest", str(path), "--index", settings.index,
            "--standardize", "llm", "--json",
        ])

    done = ingest(subset)
    assert done.exit_code == 0, done.output
    assert json.loads(done.stdout)["created"] == 3
    docs = _indexed(client, settings.index, [F.description])
    assert {k: d[F.description] for k, d in docs.items()} == {
        r["id"]: apibank["standardized"][r["id"]]["description"] for r in records
    }

    refused = ingest(unknown)
    assert refused.exit_code == ERROR_TABLE[LLMUnavailableError].exit_code
    assert "LLMUnavailableError" in refused.output and "llm_base_url" in refused.output
    assert set(_indexed(client, settings.index, [F.description])) == set(docs)  # nothing written


# --- the whole-request evaluation's LLM row -----------------------------------------------------------

@pytest.mark.slow  # a benchmark command's full drill: `make test-slow` (CI time, docs/contributing.md)
def test_the_request_eval_llm_row_rewrites_each_request_once_and_no_other_row_asks(
    settings: Any, client: Any, embedder: Any, datasets: Path, scripted: ScriptedLLM, tmp_path: Path
) -> None:
    from toolsift.evaluation.request_eval import run_request_eval, save_rewrites
    from toolsift.llm import cached_output

    needs = {"tool_needs": [
        {"user_intent": "Find the information asked for.", "tool_description": "Search the web for pages.",
         "expected_response": "A list of pages."},
        {"user_intent": "Save the result.", "tool_description": "Write text to a file at a path.",
         "expected_response": "The path written."},
    ], "extracted_arguments": {}}
    scripted.script["rewrite"] = [needs, needs]
    local = settings.with_overrides(llm_base_url=scripted.url, llm_model="scripted-model",
                                    llm_cache_dir=tmp_path / "cache")

    result = run_request_eval(client, local, datasets / "livemcpbench", embedder=embedder, limit=2, peer=False,
                              llm_rewrite=True)

    assert scripted.tasks() == ["rewrite", "rewrite"]  # the LLM row's two requests, nobody else's
    row = result.rows[-1]
    assert row.name == "toolsift multi-need, hybrid, LLM rewrite (scripted-model)" and not row.main
    assert result.protocol["llm_rewrite"]["model"] == "scripted-model"
    assert result.protocol["llm_rewrite"]["sources"] == {"llm": 2}
    assert result.protocol["llm_rewrite"]["seconds_per_llm_request"] is not None

    # saved as evaluation data, the rewrites answer a fresh cache without the LLM
    saved = save_rewrites(local, datasets / "livemcpbench", tmp_path / "saved", limit=2)
    assert saved["rewrites"] == 2 and saved["missing"] == [] and saved["model"] == "scripted-model"
    fresh = LLMCache(tmp_path / "fresh-cache")
    imported = import_published(fresh, tmp_path / "saved", queries=tmp_path / "saved" / "queries.json")
    assert imported.rewrites == 2
    questions = json.loads((tmp_path / "saved" / "queries.json").read_text(encoding="utf-8"))
    assert all(cached_output(fresh, "rewrite", "scripted-model", q["query"]) == needs for q in questions)
