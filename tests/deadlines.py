"""Timeouts for tests of what a timeout does, grown until the trial got to where the test cuts it short.

Such a test needs the trial to reach a point first (the agent's escaping processes all running, its tool
call made) and the timeout to come after it. One fixed timeout cannot be both short and safe: long
enough for a machine busy with other work, it costs every run that long; short enough for a quiet one,
it fails on a busy one before the point is reached. So the test tries a short timeout, and when the trial
was cut short before the point (which it tells by an event: a file, a request received), it runs the
trial again with twice as long, up to a bound no machine needs. The verdict is then the same however
fast the machine is; only the time it takes differs.
"""

from __future__ import annotations

from collections.abc import Iterator

__all__ = ["growing"]


def growing(first_s: float, *, last_s: float = 128.0) -> Iterator[float]:
    """``first_s``, then twice as long each time, while not past ``last_s``."""
    timeout = first_s
    while timeout <= last_s:
        yield timeout
        timeout *= 2
