"""``toolsift bench load``: the search API under concurrent clients, next to a floor measured in the
same run through the same HTTP stack.

Two services run as their own processes on loopback, one after the other, on the same index:

* the search API, started exactly as a user starts it (``toolsift serve api``, one worker, with an API
  key, so authentication is paid), answering ``POST /v1/search {"query": ...}`` at its defaults;
* the floor (:mod:`toolsift.bench.load_floor`): one MiniLM encode and one plain k-NN query per
  request, on the same uvicorn/FastAPI stack.

Locust (:mod:`toolsift.bench.locustfile`, headless, its own process) drives N closed-loop clients
for T seconds per step, with requests drawn from a benchmark's queries (a seeded shuffle, so repeats
are rare and the embedding cache does not flatter the API). Each service is stepped through rising
client counts; its capacity is the best requests/s of a step with p95 ≤ the target and no error,
and that step's client count is then held for ``hold_s`` seconds; a hold that misses the target or
errs steps down to the next best step and holds that (all holds tried are kept in the figures). The figures: requests/s, p50 / p95
/ p99, errors per step; capacity; the hold; and the API's p50 and capacity as ratios to the floor's.
"""

from __future__ import annotations

import csv
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import httpx

from toolsift.access import hash_key, new_key
from toolsift.config import Settings
from toolsift.errors import ConfigError, ToolsiftError

__all__ = ["LoadStep", "NoRequestCompletedError", "run_load", "DEFAULT_CLIENTS", "SERVICE_PATHS", "free_port", "stop_process", "serving",
           "locust_step", "load_environment", "service_command"]

#: Client counts stepped through, per service.
DEFAULT_CLIENTS: tuple[int, ...] = (1, 2, 4, 8, 16)
#: The services a load run measures, each with the path its clients post to.
SERVICE_PATHS: dict[str, str] = {"api": "/v1/search", "floor": "/v1/floor"}


@dataclass(frozen=True)
class LoadStep:
    """One step: ``clients`` closed-loop clients for ``seconds``; latencies in milliseconds."""

    service: str
    clients: int
    seconds: float
    requests: int
    errors: int
    requests_per_s: float
    p50: float
    p95: float
    p99: float
    mean: float


def free_port() -> int:
    """A free TCP port on loopback."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def stop_process(process: subprocess.Popen[bytes], timeout: float) -> None:
    """SIGTERM ``process``, then SIGKILL when it has not exited within ``timeout`` seconds; reaped either way."""
    process.terminate()
    try:
        process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def _locust() -> str:
    found = shutil.which("locust", path=str(Path(sys.executable).parent)) or shutil.which("locust")
    if not found:
        raise ConfigError("toolsift bench load needs Locust: pip install 'toolsift[bench]' (or pip install locust)")
    return found


@contextmanager
def serving(command: Sequence[str], env: dict[str, str], url: str, timeout: float = 300,
            ready_path: str | None = "/health") -> Iterator[None]:
    """Run a service process until the block ends; ready when ``url`` + ``ready_path`` answers 200, or,
    with no ``ready_path`` (an MCP server, whose ``GET /mcp`` is an event stream), when its port accepts."""
    log = tempfile.TemporaryFile(mode="w+")
    process = subprocess.Popen(list(command), env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + timeout
        while True:
            try:
                if ready_path is None:
                    with socket.create_connection((httpx.URL(url).host, httpx.URL(url).port or 80), timeout=2):
                        break
                if httpx.get(f"{url}{ready_path}", timeout=2).status_code == 200:
                    break
            except (httpx.HTTPError, OSError):
                pass
            if process.poll() is not None or time.monotonic() > deadline:
                log.seek(0)
                raise ToolsiftError(f"{' '.join(command[:3])} did not start: {log.read()[-2000:]}")
            time.sleep(0.5)
        yield
    finally:
        stop_process(process, timeout=30)
        log.close()


def service_command(service: str, port: int) -> list[str]:
    """The command serving ``service`` on loopback ``port``: ``api`` is ``toolsift serve api`` as a user starts
    it, ``floor`` the floor app (:mod:`toolsift.bench.load_floor`) on uvicorn."""
    if service == "api":
        return [str(Path(sys.executable).with_name("toolsift")), "serve", "api", "--port", str(port)]
    return [sys.executable, "-m", "uvicorn", "toolsift.bench.load_floor:app_from_environment", "--factory",
            "--port", str(port), "--log-level", "warning"]


def load_environment(settings: Settings, queries: Sequence[str], folder: Path) -> tuple[dict[str, str], str]:
    """The services' and Locust's environment for a load run on ``settings.index`` with ``queries``, and the
    API key the API's clients send (``TOOLSIFT_LOAD_KEY``; the floor's clients send none).

    The key is a tenant's search key, configured in a ``toolsift.toml`` written to ``folder`` (with the
    queries' JSON): every API request pays authentication and carries the tenant filter. The caller's
    ``TOOLSIFT_*`` variables are not passed on.
    """
    key = new_key()
    config = folder / "toolsift.toml"
    config.write_text(f'[[api_keys]]\nname = "load"\ntenant = "load"\nrole = "search"\nsha256 = "{hash_key(key)}"\n',
                      encoding="utf-8")
    (folder / "queries.json").write_text(json.dumps(list(queries), ensure_ascii=False), encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith("TOOLSIFT_")}
    env.update({"TOOLSIFT_OPENSEARCH_URL": settings.effective_url, "TOOLSIFT_INDEX": settings.index,
                "TOOLSIFT_RETRIEVER": settings.retriever, "TOOLSIFT_LOAD_QUERIES": str(folder / "queries.json"),
                "TOOLSIFT_CONFIG": str(config)})
    return env, key


class NoRequestCompletedError(ToolsiftError):
    """A load step ended before any request was answered (a cold or overloaded service)."""


def locust_step(service: str, url: str, path: str, clients: int, seconds: float, env: dict[str, str],
                folder: Path) -> LoadStep:
    """``clients`` closed-loop Locust clients (a process of its own) posting to ``url`` + ``path`` for ``seconds``.

    ``env`` is :func:`load_environment`'s with ``TOOLSIFT_LOAD_KEY``; Locust's CSV files go to ``folder``.

    Raises:
        ConfigError: Locust is not installed.
        ToolsiftError: Locust wrote no statistics.
        NoRequestCompletedError: no request completed within the step.
    """
    prefix = folder / f"{service}-{clients}"
    locustfile = Path(__file__).with_name("locustfile.py")
    run = subprocess.run(
        [_locust(), "-f", str(locustfile), "--headless", "-u", str(clients), "-r", str(clients),
         "-t", f"{int(seconds)}s", "-H", url, "--csv", str(prefix), "--only-summary", "--loglevel", "WARNING",
         "--stop-timeout", "10"],
        env={**env, "TOOLSIFT_LOAD_PATH": path}, capture_output=True, text=True, timeout=seconds + 120,
    )
    stats = prefix.with_name(prefix.name + "_stats.csv")
    if not stats.exists():
        raise ToolsiftError(f"locust wrote no statistics (exit {run.returncode}): {run.stderr[-2000:]}")
    with stats.open(encoding="utf-8") as handle:
        row = next(r for r in csv.DictReader(handle) if r["Name"] == "Aggregated")
    if row["50%"] == "N/A":  # Locust's percentiles of a step in which no request completed
        raise NoRequestCompletedError(f"{service}: no request completed in {seconds:g} s with {clients} client(s) "
                                      f"({row['Request Count']} recorded): the service answers slower than the step lasts")
    return LoadStep(
        service=service, clients=clients, seconds=seconds, requests=int(row["Request Count"]),
        errors=int(row["Failure Count"]), requests_per_s=round(float(row["Requests/s"]), 2),
        p50=float(row["50%"]), p95=float(row["95%"]), p99=float(row["99%"]),
        mean=round(float(row["Average Response Time"]), 1),
    )


def _capacity(steps: Sequence[LoadStep], p95_target: float) -> LoadStep | None:
    """The step with the most requests/s whose p95 meets the target with no error."""
    fit = [s for s in steps if s.p95 <= p95_target and s.errors == 0]
    return max(fit, key=lambda s: s.requests_per_s) if fit else None


def run_load(
    settings: Settings,
    queries: Sequence[str],
    *,
    clients: Sequence[int] = DEFAULT_CLIENTS,
    step_s: float = 20,
    hold_s: float = 60,
    p95_target_ms: float = 200,
    progress: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Measure the search API and the floor on ``settings.index`` (which must exist) with ``queries``.

    Raises:
        ConfigError: Locust is not installed, or there are no queries.
        ToolsiftError: a service did not start.
    """
    if not queries:
        raise ConfigError("bench load needs queries to send")
    say = progress or (lambda _: None)
    folder = Path(tempfile.mkdtemp(prefix="toolsift-load-"))
    # a tenant's search key: every request pays authentication and carries the tenant filter
    base, key = load_environment(settings, queries, folder)
    figures: dict[str, Any] = {"index": settings.index, "queries": len(queries), "p95_target_ms": p95_target_ms,
                               "step_s": step_s, "hold_s": hold_s, "cpu_count": os.cpu_count(), "services": {}}
    for name, path in SERVICE_PATHS.items():
        port = free_port()
        url = f"http://127.0.0.1:{port}"
        env = {**base, "TOOLSIFT_LOAD_KEY": key if name == "api" else ""}
        command = service_command(name, port)
        with serving(command, env, url):
            say(f"{name}: warming up")
            locust_step(name, url, path, 1, 5, env, folder)
            steps = []
            for n in clients:
                steps.append(locust_step(name, url, path, n, step_s, env, folder))
                say(f"{name}: {n} clients: {steps[-1].requests_per_s} req/s, p95 {steps[-1].p95} ms")
                if steps[-1].p95 > 2 * p95_target_ms:  # well past the target: more clients only queue
                    break
            # capacity: the best step within the target, held; a hold that misses the target steps down
            best, hold = _capacity(steps, p95_target_ms), None
            held: list[LoadStep] = []
            while best is not None:
                hold = locust_step(name, url, path, best.clients, hold_s, env, folder)
                held.append(hold)
                say(f"{name}: held {hold.clients} clients for {hold_s:.0f}s: {hold.requests_per_s} req/s, "
                    f"p95 {hold.p95} ms, {hold.errors} errors")
                if hold.p95 <= p95_target_ms and hold.errors == 0:
                    break
                best = _capacity([s for s in steps if s.clients < best.clients], p95_target_ms)
                hold = None
        figures["services"][name] = {"command": " ".join(command[:4]), "path": path,
                                     "steps": [asdict(s) for s in steps],
                                     "capacity": asdict(best) if best else None,
                                     "hold": asdict(hold) if hold else None,
                                     "holds_tried": [asdict(h) for h in held]}
    api, floor = figures["services"]["api"], figures["services"]["floor"]
    api_first, floor_first = api["steps"][0], floor["steps"][0]  # one client each
    figures["ratios"] = {
        "p50_at_1_client": round(api_first["p50"] / floor_first["p50"], 2) if floor_first["p50"] else None,
        "capacity": (round(api["capacity"]["requests_per_s"] / floor["capacity"]["requests_per_s"], 2)
                     if api["capacity"] and floor["capacity"] else None),
        "p50_at_capacity": (round(api["hold"]["p50"] / floor["hold"]["p50"], 2)
                            if api["hold"] and floor["hold"] else None),
    }
    shutil.rmtree(folder, ignore_errors=True)
    return figures
