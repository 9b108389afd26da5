"""Test-wide settings.

Hypothesis: no per-example deadline and no "too slow" health check. CI runs the whole suite on
2 shared cores, where a slow example says nothing about the code (performance is measured by
the benchmarks in benchmarks/, never by tests).
"""

from hypothesis import HealthCheck, settings

settings.register_profile(
    "p2p-chinchon",
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile("p2p-chinchon")
