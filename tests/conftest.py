"""Settings shared by the whole suite.

Hypothesis's defaults include two timing checks: a per-example deadline and the "input generation is
slow" health check. Both are timing thresholds, and the suite runs on shared, loaded machines where a
property that is correct can still miss them. Properties here check behaviour, never speed (speed is
measured by ``benchmarks/``), so the suite's profile turns both timing checks off and keeps every other
health check.
"""

from __future__ import annotations

from hypothesis import HealthCheck, settings

settings.register_profile(
    "trialbook",
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile("trialbook")
