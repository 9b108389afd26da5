"""Test-wide settings.

Hypothesis: no per-example deadline and no "too slow" health check. CI runs the whole suite on
2 shared cores, where a slow example says nothing about the code (performance is measured by
the benchmarks in benchmarks/, never by tests).

The copy of rbcl's libsodium (``deck/sodium.py``) goes to a folder of this test session, not the
user's cache; child processes inherit it.
"""

import atexit
import os
import shutil
import tempfile

from hypothesis import HealthCheck, settings

if "P2P_CHINCHON_SODIUM_CACHE" not in os.environ:
    _cache = tempfile.mkdtemp(prefix="p2p-chinchon-sodium-")
    os.environ["P2P_CHINCHON_SODIUM_CACHE"] = _cache
    atexit.register(shutil.rmtree, _cache, ignore_errors=True)

settings.register_profile(
    "p2p-chinchon",
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile("p2p-chinchon")
