"""The clients of ``toolsift bench load`` (run by Locust, headless, in its own process).

Each simulated client sends one request, waits for the answer, and sends the next (a closed loop, no
think time). Requests are the benchmark's queries in a seeded shuffle, each client starting at its
own offset, so repeats are rare. Read from the environment: ``TOOLSIFT_LOAD_QUERIES`` (a JSON list),
``TOOLSIFT_LOAD_PATH`` (``/v1/search`` or ``/v1/floor``), ``TOOLSIFT_LOAD_KEY`` (an API key, or empty).
"""

from __future__ import annotations

import itertools
import json
import os
import random

from locust import FastHttpUser, constant, task

__all__ = ["SearchClient"]

_QUERIES: list[str] = json.loads(open(os.environ["TOOLSIFT_LOAD_QUERIES"], encoding="utf-8").read())
random.Random(0).shuffle(_QUERIES)
_PATH = os.environ.get("TOOLSIFT_LOAD_PATH", "/v1/search")
_KEY = os.environ.get("TOOLSIFT_LOAD_KEY", "")
_NEXT = itertools.count()


class SearchClient(FastHttpUser):
    wait_time = constant(0)

    def on_start(self) -> None:
        self._queries = itertools.cycle(_QUERIES[next(_NEXT) * 997 % len(_QUERIES):] + _QUERIES)
        self._headers = {"Authorization": f"Bearer {_KEY}"} if _KEY else {}

    @task
    def search(self) -> None:
        self.client.post(_PATH, json={"query": next(self._queries)}, headers=self._headers, name=_PATH)
