"""The fast lane's own checks (``tests/slow_marks.py``): the names it marks slow are tests, and
its guard fails an unmarked test that starts a process."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from slow_marks import SLOW_TESTS

pytest_plugins = ["pytester"]

TESTS = Path(__file__).resolve().parent


def _test_functions(module: Path) -> set[str]:
    tree = ast.parse(module.read_text(encoding="utf-8"))
    return {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
            and n.name.startswith("test")}


def test_every_listed_slow_test_is_a_test() -> None:
    defined = set().union(*(_test_functions(m) for m in TESTS.glob("test_*.py")))
    missing = SLOW_TESTS - defined
    assert not missing, f"SLOW_TESTS names {sorted(missing)}, which no test module defines (renamed?)"


# The inner session registers the same hooks as tests/conftest.py; each test raises the audit
# event of a process start by hand (sys.audit), so no process is started.
INNER_CONFTEST = """
from slow_marks import pytest_collection_modifyitems, pytest_runtest_makereport, pytest_runtest_setup

def pytest_configure(config):
    config.addinivalue_line("markers", "slow: as in pyproject.toml")
    config.addinivalue_line("markers", "netns: as in pyproject.toml")
"""
INNER_TESTS = """
import sys
import pytest

def _start(event):
    sys.audit(event, "/bin/true", ["/bin/true", "--flag"], None, None)

def test_unmarked_start():
    _start("subprocess.Popen")

def test_unmarked_fork():
    sys.audit("os.fork")

@pytest.mark.slow
def test_marked_start():
    _start("subprocess.Popen")

@pytest.mark.netns
def test_netns_start():
    _start("os.posix_spawn")

def test_no_start():
    sys.audit("open", "x", "r", 0)

@pytest.fixture
def proc():
    _start("subprocess.Popen")

def test_a_library_probe_is_no_start():
    import ctypes.util
    ctypes.util.find_library("c")

def test_start_in_a_fixture(proc):
    pass
"""


def test_the_guard_fails_an_unmarked_test_that_starts_a_process(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(INNER_CONFTEST)
    pytester.makepyfile(test_inner=INNER_TESTS)
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=7, errors=3)
    result.stdout.fnmatch_lines([
        "*test_unmarked_start started 1 process(es) without the slow marker (first: subprocess.Popen: /bin/true --flag)*",
        "*test_unmarked_fork started 1 process(es) without the slow marker (first: os.fork: (fork))*",
        "*test_start_in_a_fixture started 1 process(es)*",
    ])
    assert "test_marked_start started" not in result.stdout.str()
    assert "test_netns_start started" not in result.stdout.str()
    assert "test_a_library_probe_is_no_start started" not in result.stdout.str()


def test_the_fast_lane_skips_what_is_marked_or_netns(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(INNER_CONFTEST)
    pytester.makepyfile(test_inner=INNER_TESTS)
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider", "-m", "not slow")
    result.assert_outcomes(passed=5, errors=3, deselected=2)  # an error at teardown follows a passed call

