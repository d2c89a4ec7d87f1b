"""The opt-in local LLM: Qwen2.5-Coder-1.5B-Instruct served by llama.cpp through ``python -m toolsift.llm.server``,
answered through the `openai` client as any endpoint is. Slow (~10 s an answer on two cores); it runs where
`toolsift llm fetch` put the model and llama-cpp-python is installed (both opt-in)."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.conftest import not_applicable
from toolsift.llm.fetch import QWEN_CODER_1_5B
from toolsift.llm.server import llama_cpp_available

pytestmark = [pytest.mark.integration, pytest.mark.slow]


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    from toolsift.config import get_settings

    model = get_settings().data_dir / "llm" / QWEN_CODER_1_5B.filename
    if not llama_cpp_available() or not model.is_file():
        not_applicable("the local LLM is opt-in: pip install llama-cpp-python and run `toolsift llm fetch`")
    from toolsift.bench.load import free_port

    port = free_port()
    log = (tmp_path_factory.mktemp("llm") / "server.log").open("w")
    process = subprocess.Popen([sys.executable, "-m", "toolsift.llm.server", "--gguf", str(model), "--port", str(port),
                                "--served-model-name", "qwen2.5-coder-1.5b-instruct"], stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}/v1"
    try:
        for _ in range(240):
            try:
                if httpx.get(f"{url}/models", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            time.sleep(0.5)
        yield url
    finally:
        process.terminate()
        process.wait(timeout=30)
        log.close()


def test_it_answers_valid_json_through_the_openai_client(served: str) -> None:
    from openai import OpenAI

    client = OpenAI(base_url=served, api_key="local")
    answer = client.chat.completions.create(
        model="qwen2.5-coder-1.5b-instruct", temperature=0, max_tokens=120,
        response_format={"type": "json_object"},
        messages=[{"role": "system", "content": 'Split the request into the separate tools it needs. Answer JSON: {"needs": [..]}'},
                  {"role": "user", "content": "Find flights to Lisbon next Friday and add the trip to my calendar."}])
    needs = json.loads(answer.choices[0].message.content or "")["needs"]
    assert isinstance(needs, list) and len(needs) >= 2
    assert answer.usage is not None and answer.usage.completion_tokens > 0
