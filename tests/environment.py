"""The environment a test hands a ``toolsift`` subprocess.

A subprocess must not be steered by the developer's own ``TOOLSIFT_*`` settings, so those are dropped;
the suite-wide ones in :data:`SUITE_SETTINGS` (``tests/conftest.py``) stay, so a CLI a test starts
ingests as the in-process code does: without compacting (a 30-s wait for OpenSearch's retention leases
on every new index). The tests' eval-runs index is not among them: a deployment's config file names its
own, and the environment would override it.

Import as ``from tests.environment import subprocess_environment``.
"""

from __future__ import annotations

import os

__all__ = ["SUITE_SETTINGS", "subprocess_environment"]

#: The suite-wide settings (``tests/conftest.py``) every subprocess keeps.
SUITE_SETTINGS = frozenset({"TOOLSIFT_INGEST_COMPACT"})


def subprocess_environment(**settings: str) -> dict[str, str]:
    """This process's environment without its ``TOOLSIFT_*`` settings other than
    :data:`SUITE_SETTINGS`, then ``settings`` on top."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("TOOLSIFT_") or k in SUITE_SETTINGS}
    env.update(settings)
    return env
