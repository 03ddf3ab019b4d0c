"""Whether an eval × agent runs: cache hits and the shard argument (pure decisions)."""

from __future__ import annotations

from typing import Protocol

__all__ = ["CACHEABLE_VERDICTS", "LastRun", "cache_decision", "parse_shard"]

CACHEABLE_VERDICTS = frozenset({"pass", "fail"})
"""Only settled verdicts serve as cache: an error or an incomplete run says nothing about the prompt."""


class LastRun(Protocol):
    """What the cache needs of the last history line of an eval × agent."""

    @property
    def cache_key(self) -> str:
        """The key that run was made with."""
        ...

    @property
    def verdict(self) -> str:
        """``pass``, ``fail``, ``error`` or ``incomplete``."""
        ...


def cache_decision(key: str, last: LastRun | None, *, force: bool) -> tuple[bool, str]:
    """``(cached, reason)`` for one eval × agent given its last history line."""
    if last is None:
        return False, "no earlier run in history"
    if last.cache_key != key:
        return False, "cache key changed since the last run (prompt, agent version, template or settings)"
    if last.verdict not in CACHEABLE_VERDICTS:
        return False, f"the last run ended '{last.verdict}', which is never reused"
    if force:
        return False, f"cached ({last.verdict}) but --force given"
    return True, f"unchanged since the last run, which ended '{last.verdict}'"


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
