"""The managed JVMs as POSIX processes: the children this interpreter started, whether a pid is alive (a
zombie is not), its command line, signals to its process group, and the ``flock`` that serialises starts.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

from toolsift.errors import NodeError

__all__ = ["pid_alive"]

# Children started by this interpreter, so they can be reaped (no zombies, no ResourceWarning from
# a collected Popen whose process still runs).
_CHILDREN: dict[int, subprocess.Popen[bytes]] = {}
_EXIT_CODES: dict[int, int] = {}


@contextlib.contextmanager
def _flock(path: Path) -> Iterator[None]:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a+b") as handle:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


def pid_alive(pid: int) -> bool:
    """Whether process ``pid`` is running (a zombie is not)."""
    if pid <= 0:
        return False
    child = _CHILDREN.get(pid)
    if child is not None:
        code = child.poll()
        if code is None:
            return True
        _EXIT_CODES[pid] = code
        del _CHILDREN[pid]
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return _proc_state(pid) != "Z"


def _proc_state(pid: int) -> str | None:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="ascii", errors="replace")
    except OSError:
        return None
    # The command name in parentheses may itself hold spaces and parentheses.
    return stat.rpartition(")")[2].split()[0] if ")" in stat else None


def _cmdline(pid: int) -> list[str]:
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except FileNotFoundError:
        raw = b""
    except OSError:
        return []
    if raw:
        return raw.decode(errors="replace").rstrip("\0").split("\0")
    if Path("/proc/self").exists():
        return []
    try:
        proc = subprocess.run(
            ["ps", "-ww", "-o", "command=", "-p", str(pid)],
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return []
    return proc.stdout.split()


def _kill_group(pid: int) -> None:
    """SIGKILL the node's process group and wait for it to be gone.

    Raises:
        NodeError: the process survived SIGKILL.
    """
    _signal_group(pid, signal.SIGKILL)
    if not _wait_exit(pid, 10.0):
        raise NodeError(f"the node (pid {pid}) survived SIGKILL")


def _signal_group(pid: int, sig: signal.Signals) -> None:
    try:
        os.killpg(pid, sig)
        return
    except (ProcessLookupError, PermissionError):
        pass
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, sig)


def _wait_exit(pid: int, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while pid_alive(pid):
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.2)
    return True
