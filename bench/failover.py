"""``toolsift bench failover``: the ranker service dies mid-run and every search still answers.

The drill: start ``toolsift serve ranker`` as a child process on a free loopback port (with a fresh
bearer token unless one is configured), wait for ``/health``, and search through a
:class:`~toolsift.search.Searcher` whose ``ranker_url`` points at it. After a third of the queries the
service is killed with SIGKILL (no graceful shutdown); the next third must still be answered, in
first-stage order and marked ``degraded``. Then the service is started again, ``/health`` awaited,
and the last third must be ranked in full again. The report counts, per phase, the answers, the full
and the degraded ones and the errors (which must be 0), with the timeline of kills and restarts.
"""

from __future__ import annotations

import json
import logging
import os
import secrets
import signal
import statistics
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import IO, Any

import httpx

from toolsift.config import Retriever, Settings
from toolsift.encoders.embedding import Embedder
from toolsift.errors import CatalogError, ConfigError, RankerUnavailableError
from toolsift.bench.load import free_port, stop_process

__all__ = ["RankerProcess", "PhaseReport", "run_failover", "read_queries", "PHASES"]

#: The drill's three phases, in order.
PHASES = ("up", "killed", "restarted")

#: The settings the service is started with, passed as environment variables (flags win over them).
_SERVICE_SETTINGS = ("weights", "reranker", "rerank_top", "rerank_weight", "reranker_device", "reranker_batch_size",
                     "ranker_max_request_bytes", "ranker_batch_wait_ms", "retriever", "fusion", "candidates",
                     "embedding_model", "embedding_device", "opensearch_user")


class RankerProcess:
    """``toolsift serve ranker`` as a child process on loopback.

    Args:
        settings: the ranker's settings (weights, reranker, λ, M, device, token, limits).
        log_path: where the child's output goes (appended across restarts).
        port: the port; default a free one.
    """

    def __init__(self, settings: Settings, log_path: Path, *, port: int | None = None) -> None:
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log_path = log_path
        self.token = settings.ranker_token.get_secret_value() if settings.ranker_token else secrets.token_urlsafe(24)
        env = {k: v for k, v in os.environ.items() if not k.startswith("TOOLSIFT_") or k == "TOOLSIFT_CONFIG"}
        for name in _SERVICE_SETTINGS:
            value = getattr(settings, name)
            if value is not None:
                env[f"TOOLSIFT_{name.upper()}"] = str(value)
        env["TOOLSIFT_FIELD_WEIGHTS"] = json.dumps(settings.field_weights)
        # the same cluster as the caller: OpenSearch's search pipeline has the service search it
        env["TOOLSIFT_OPENSEARCH_URL"] = settings.effective_url
        if settings.opensearch_password is not None:
            env["TOOLSIFT_OPENSEARCH_PASSWORD"] = settings.opensearch_password.get_secret_value()
        env["TOOLSIFT_RANKER_TOKEN"] = self.token  # in the environment, not on the command line
        self._env = env
        self.process: subprocess.Popen[bytes] | None = None
        self._log: IO[bytes] | None = None

    @property
    def pid(self) -> int | None:
        return self.process.pid if self.process is not None else None

    def start(self) -> None:
        command = [sys.executable, "-m", "toolsift.cli.main", "serve", "ranker", "--host", "127.0.0.1",
                   "--port", str(self.port)]
        self._log = self.log_path.open("ab")
        self.process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=self._log, stderr=subprocess.STDOUT,
                                        env=self._env, start_new_session=True)

    def wait_healthy(self, timeout: float) -> dict[str, Any]:
        """Poll ``/health`` until it answers 200 (the model is loaded); its body.

        Raises:
            RankerUnavailableError: the child exited, or ``timeout`` seconds passed; with its log's tail.
        """
        deadline = time.monotonic() + timeout
        with httpx.Client(timeout=2.0) as http:
            while True:
                if self.process is None or self.process.poll() is not None:
                    raise RankerUnavailableError(f"the ranker service exited during start-up:\n{self.log_tail()}")
                try:
                    answer = http.get(f"{self.url}/health")
                    if answer.status_code == 200:
                        body: dict[str, Any] = answer.json()
                        return body
                except httpx.HTTPError:
                    pass
                if time.monotonic() > deadline:
                    raise RankerUnavailableError(
                        f"the ranker service did not become healthy within {timeout:.0f} s:\n{self.log_tail()}")
                time.sleep(0.2)

    def kill(self) -> None:
        """SIGKILL: the process dies at once, with no graceful shutdown."""
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait()

    def stop(self) -> None:
        """SIGTERM, then SIGKILL after 15 s."""
        if self.process is not None and self.process.poll() is None:
            stop_process(self.process, timeout=15)
        if self._log is not None:
            self._log.close()
            self._log = None

    def log_tail(self, lines: int = 20) -> str:
        try:
            text = self.log_path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return "(no log)"
        return "\n".join(text.splitlines()[-lines:])


@dataclass
class PhaseReport:
    """What one phase of the drill got."""

    phase: str
    queries: int = 0
    answered: int = 0
    full: int = 0
    degraded: int = 0
    errors: int = 0
    latencies_ms: list[float] = field(default_factory=list)
    degraded_reasons: Counter[str] = field(default_factory=Counter)
    error_messages: list[str] = field(default_factory=list)
    started_s: float | None = None
    ended_s: float | None = None

    def to_dict(self) -> dict[str, Any]:
        lat = sorted(self.latencies_ms)
        return {
            "queries": self.queries,
            "answered": self.answered,
            "full": self.full,
            "degraded": self.degraded,
            "errors": self.errors,
            "latency_ms": {
                "p50": round(statistics.median(lat), 2) if lat else None,
                "max": round(lat[-1], 2) if lat else None,
            },
            "degraded_reasons": dict(self.degraded_reasons.most_common(5)),
            "error_messages": self.error_messages[:5],
            "started_s": self.started_s,
            "ended_s": self.ended_s,
        }


def read_queries(dataset_dir: Path | None, queries_file: Path | None) -> tuple[str, list[str]]:
    """The drill's queries and where they came from: a benchmark folder's, or a file's.

    A file is JSON (a list of strings, or of objects with ``query`` or ``text``) or plain text, one
    query per line.
    """
    if queries_file is not None:
        raw = queries_file.read_text(encoding="utf-8")
        if queries_file.suffix == ".json":
            try:
                data = json.loads(raw)
            except json.JSONDecodeError as exc:
                raise CatalogError(f"{queries_file}: not JSON ({exc})") from exc
            if not isinstance(data, list):
                raise CatalogError(f"{queries_file}: expected a JSON list of queries")
            texts = [str(q.get("query") or q.get("text") or "") if isinstance(q, dict) else str(q) for q in data]
        else:
            texts = raw.splitlines()
        texts = [t.strip() for t in texts if t and t.strip()]
        if not texts:
            raise CatalogError(f"{queries_file}: no queries")
        return queries_file.name, texts
    if dataset_dir is None:
        raise CatalogError("give a benchmark folder or a queries file")
    from toolsift.ingest.benchmarks import load_benchmark

    benchmark = load_benchmark(dataset_dir)
    return benchmark.name, [t for t in benchmark.queries.values() if t.strip()]


def run_failover(
    settings: Settings,
    embedder: Embedder | None,
    client: Any,
    queries: Sequence[str],
    *,
    n_queries: int = 60,
    retriever: Retriever | None = None,
    top_k: int = 10,
    health_timeout: float = 300.0,
    log_path: Path,
    echo: Callable[[str], None] = lambda _: None,
) -> dict[str, Any]:
    # Long: the drill's phases in order (healthy, ranker killed mid-run, restarted), the figures gathered as
    # they come.
    """Run the drill (see the module docstring); the figures as a dict.

    Args:
        settings: the index, retriever, ranker settings and ``ranker_timeout`` for the search path;
            the service is started with the same ranker settings.
        embedder: the query encoder (None for BM25).
        client: a connected OpenSearch client.
        queries: the query texts; cycled when fewer than ``n_queries``.
        n_queries: how many searches in all (at least 3: one per phase).
        health_timeout: seconds to wait for the service's ``/health`` at each start.
        log_path: the service's log.
        echo: progress lines for people.
    """
    from toolsift.search import Searcher

    if n_queries < 3:
        raise ConfigError("the drill needs at least 3 queries (one per phase)")
    if not queries:
        raise ConfigError("no queries")
    texts = [queries[i % len(queries)] for i in range(n_queries)]
    kill_at, restart_at = n_queries // 3, (2 * n_queries) // 3
    service = RankerProcess(settings, log_path)
    clock0 = time.perf_counter()
    began = datetime.now(timezone.utc)

    def now() -> float:
        return round(time.perf_counter() - clock0, 3)

    timeline: dict[str, Any] = {"started_at": began.isoformat(timespec="seconds")}
    phases = {name: PhaseReport(name) for name in PHASES}
    client_log = logging.getLogger("toolsift.ranker.ranker_client")
    level = client_log.level
    client_log.setLevel(logging.ERROR)  # one warning per degraded answer would drown the report
    try:
        service.start()
        echo(f"started the ranker service (pid {service.pid}) at {service.url}; waiting for /health")
        health = service.wait_healthy(health_timeout)
        timeline["service_healthy_s"] = now()
        first_pid = service.pid
        remote = settings.with_overrides(ranker_url=service.url, ranker_token=service.token)
        searcher = Searcher(client, remote, embedder)
        retriever = retriever or settings.retriever
        echo(f"{health['ranker']} + {health['reranker'] or 'no reranker'} on {health['device']}: "
             f"{n_queries} queries, SIGKILL after {kill_at}, restart after {restart_at}")
        for i, text in enumerate(texts):
            if i == kill_at:
                timeline["killed_pid"] = service.pid
                service.kill()
                timeline["killed_s"] = now()
                echo(f"query {i + 1}: killed the ranker service (SIGKILL, pid {timeline['killed_pid']})")
            if i == restart_at:
                timeline["restart_s"] = now()
                service.start()
                echo(f"query {i + 1}: restarted the ranker service (pid {service.pid}); waiting for /health")
                service.wait_healthy(health_timeout)
                timeline["healthy_again_s"] = now()
                timeline["restarted_pid"] = service.pid
                timeline["recovery_s"] = round(timeline["healthy_again_s"] - timeline["restart_s"], 3)
            phase = phases[PHASES[0] if i < kill_at else PHASES[1] if i < restart_at else PHASES[2]]
            if phase.started_s is None:
                phase.started_s = now()
            phase.queries += 1
            t0 = time.perf_counter()
            try:
                result = searcher.search(text, top_k=top_k, method="multi-field", retriever=retriever)
            except Exception as exc:  # noqa: BLE001 - counted: the drill's claim is that there are none
                phase.errors += 1
                phase.error_messages.append(f"query {i + 1}: {type(exc).__name__}: {exc}")
            else:
                phase.answered += 1
                phase.latencies_ms.append((time.perf_counter() - t0) * 1000)
                if result.degraded:
                    phase.degraded += 1
                    phase.degraded_reasons[result.degraded_reason or "?"] += 1
                else:
                    phase.full += 1
            phase.ended_s = now()
        timeline["finished_s"] = now()
    finally:
        client_log.setLevel(level)
        service.stop()
    total = PhaseReport("total")
    for p in phases.values():
        total.queries += p.queries
        total.answered += p.answered
        total.full += p.full
        total.degraded += p.degraded
        total.errors += p.errors
        total.latencies_ms += p.latencies_ms
    checks = {
        "every_request_answered": total.answered == total.queries,
        "no_errors": total.errors == 0,
        "killed_phase_all_degraded": phases["killed"].degraded == phases["killed"].queries,
        "full_ranking_before_the_kill": phases["up"].full > 0,
        "full_ranking_after_the_restart": phases["restarted"].full > 0,
    }
    return {
        "queries": n_queries,
        "index": settings.index,
        "retriever": retriever,
        "top_k": top_k,
        "service": {"url": service.url, "first_pid": first_pid, "health": health, "log": str(log_path),
                    "ranker_timeout_s": settings.ranker_timeout},
        "phases": {name: p.to_dict() for name, p in phases.items()},
        "total": {k: v for k, v in total.to_dict().items() if k not in ("started_s", "ended_s")},
        "timeline": timeline,
        "checks": checks,
        "ok": all(checks.values()),
    }
