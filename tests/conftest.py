"""Test-wide settings.

Hypothesis: no per-example deadline and no "too slow" health check. CI runs the whole suite on
2 shared cores, where a slow example says nothing about the code (performance is measured by
the benchmarks in benchmarks/, never by tests).

The copy of rbcl's libsodium (``deck/sodium.py``) goes to a folder of this test session, not the
user's cache; child processes inherit it.

SIGINT: tests stop child processes with it (a person's Ctrl-C). A suite started in the
background by a shell without job control inherits SIGINT ignored, and so would every child
(Python leaves an ignored SIGINT ignored): a child told to leave would never hear it. The
suite catches it again, so that each child starts with the default and its KeyboardInterrupt.

The fast lane (``-m "not slow"``): every test that starts a process (a peer, a bot, tmux, ``ip``
for a network namespace, a forked worker) is marked ``slow``. An audit hook (PEP 578) sees every
process start: a test that starts one while it runs (its fixtures included) without the marker
fails, naming the first command. Tests marked ``netns`` are marked ``slow`` here too.
"""

import atexit
import os
import shutil
import signal
import sys
import tempfile
from collections.abc import Generator
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

if "P2P_CHINCHON_SODIUM_CACHE" not in os.environ:
    _cache = tempfile.mkdtemp(prefix="p2p-chinchon-sodium-")
    os.environ["P2P_CHINCHON_SODIUM_CACHE"] = _cache
    atexit.register(shutil.rmtree, _cache, ignore_errors=True)

if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

settings.register_profile(
    "p2p-chinchon",
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile("p2p-chinchon")


# Audit events that start a process (https://docs.python.org/3/library/audit_events.html).
PROCESS_EVENTS = frozenset({"subprocess.Popen", "os.fork", "os.forkpty", "os.posix_spawn", "os.spawn",
                            "os.system", "os.exec", "pty.spawn"})
# Starts seen while the current test runs (setup, call and teardown); None between tests.
_starts: list[str] | None = None


def _audit(event: str, args: tuple[Any, ...]) -> None:
    if _starts is not None and event in PROCESS_EVENTS:
        # subprocess.Popen, os.posix_spawn, os.spawn and os.exec carry the path and the argv,
        # os.system the command line, os.fork and os.forkpty nothing
        argv = args[1] if len(args) > 1 and isinstance(args[1], (list, tuple)) else args[:1]
        _starts.append(f"{event}: {' '.join(map(str, argv)) if argv else '(fork)'}")


sys.addaudithook(_audit)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if item.get_closest_marker("netns") and not item.get_closest_marker("slow"):
            item.add_marker(pytest.mark.slow)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    global _starts
    _starts = []


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None, Any, None]:
    global _starts
    outcome = yield
    report: pytest.TestReport = outcome.get_result()
    if call.when == "teardown":
        starts, _starts = _starts, None
        if starts and report.passed and not item.get_closest_marker("slow"):
            report.outcome = "failed"
            report.longrepr = (f"{item.nodeid} started {len(starts)} process(es) without the slow marker "
                               f"(first: {starts[0]}): mark it @pytest.mark.slow, or its module "
                               f"pytestmark = pytest.mark.slow, so that -m 'not slow' stays the fast lane")
