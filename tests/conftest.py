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

The fast lane (``-m "not slow"``): which tests are ``slow`` and the guard that fails an unmarked
test that starts a process live in ``tests/slow_marks.py``; importing its hooks registers them.
"""

import atexit
import os
import shutil
import signal
import tempfile

from hypothesis import HealthCheck, settings

from slow_marks import pytest_collection_modifyitems, pytest_runtest_makereport, pytest_runtest_setup

__all__ = ["pytest_collection_modifyitems", "pytest_runtest_makereport", "pytest_runtest_setup"]

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
