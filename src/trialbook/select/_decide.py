"""Whether an eval × agent runs: cache hits and the shard argument (pure decisions)."""

from __future__ import annotations

from typing import Protocol

__all__ = ["CACHEABLE_VERDICTS", "LastRun", "cache_decision", "parse_shard"]

CACHEABLE_VERDICTS = frozenset({"pass", "fail"})
"""Only settled verdicts serve as cache: an error or an incomplete run says nothing about the prompt."""


class LastRun(Protocol):
    """What the cache needs of a history line of an eval × agent."""

    @property
    def cache_key(self) -> str:
        """The key that run was made with."""
        ...

    @property
    def verdict(self) -> str:
        """``pass``, ``fail``, ``error`` or ``incomplete``."""
        ...

    @property
    def started_at(self) -> str:
        """When that run started (ISO-8601 UTC)."""
        ...

    @property
    def run_id(self) -> str:
        """The line's unique id."""
        ...


def cache_decision(key: str, hit: LastRun | None, last: LastRun | None, *, force: bool) -> tuple[bool, str]:
    """``(cached, reason)`` for one eval × agent.

    The cache is content-addressed: ``hit`` is the newest line with this very ``key`` and a settled
    verdict, whichever ref (a PR, main, a nightly) recorded it; ``last`` is the newest line of the eval ×
    agent with any key, used only to say why nothing was reused.
    """
    if hit is not None and hit.cache_key == key and hit.verdict in CACHEABLE_VERDICTS:
        if force:
            return False, f"cached ({hit.verdict}) but --force given"
        if last is None or last.run_id == hit.run_id:
            return True, f"unchanged since the last run, which ended '{hit.verdict}'"
        return True, f"a run with the same cache key ({hit.started_at}) ended '{hit.verdict}'"
    if last is None:
        return False, "no earlier run in history"
    if last.cache_key != key:
        return False, "cache key changed since the last run (prompt, agent version, template or settings)"
    return False, f"the last run ended '{last.verdict}', which is never reused"


def parse_shard(text: str) -> tuple[int, int]:
    """Parse ``I/N`` (1-based) into ``(I, N)``, raising ``ValueError`` with the accepted form."""
    try:
        index_text, count_text = text.split("/")
        index, count = int(index_text), int(count_text)
    except ValueError:
        raise ValueError(f"--shard takes I/N such as 2/4, not {text!r}") from None
    if count < 1 or not 1 <= index <= count:
        raise ValueError(f"--shard {text}: I must be between 1 and N, and N at least 1")
    return index, count
