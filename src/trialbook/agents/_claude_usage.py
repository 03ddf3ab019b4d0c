"""Token and cost accounting from the final ``result`` event of Claude Code's ``stream-json`` output.

Per-line usage on ``assistant`` lines is never summed: one API message arrives as several lines that each
repeat the message-start usage. Tokens come from the result event's ``modelUsage`` instead, because its
``usage`` is all zeros after a budget stop, and its input count leaves out cache reads and writes, which
trialbook counts as input (seen with Claude Code 2.1.197).
"""

from __future__ import annotations

import re

from ..evidence import JsonObject, JsonValue, UsageEntry

__all__ = ["plain_model", "reported_cost_usd", "usage_entries"]


def plain_model(name: str) -> str:
    """``claude-opus-4-8[1m]`` → ``claude-opus-4-8``: the context-window tag is not part of the model."""
    return re.sub(r"\[[^\]]*\]$", "", name)


def usage_entries(result: JsonObject | None, model: str | None) -> tuple[UsageEntry, ...]:
    """Per-model usage from the result event; ``()`` (unknown) when the stream has no result."""
    if result is None:
        return ()
    by_model = result.get("modelUsage")
    if isinstance(by_model, dict) and by_model:
        return tuple(
            _entry(plain_model(name), counts, _MODEL_USAGE_KEYS)
            for name, counts in by_model.items()
            if isinstance(counts, dict)
        )
    usage = result.get("usage")
    if isinstance(usage, dict):
        # No model answered (e.g. a rejected key): the aggregate is a real, usually zero, count.
        return (_entry(model, usage, _USAGE_KEYS),)
    return ()


def reported_cost_usd(result: JsonObject | None) -> float | None:
    """The CLI's own price of the run, when it reported one."""
    cost = result.get("total_cost_usd") if result is not None else None
    return float(cost) if isinstance(cost, int | float) and not isinstance(cost, bool) else None


def _int(value: JsonValue) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _total(*counts: int | None) -> int | None:
    return None if any(c is None for c in counts) else sum(c for c in counts if c is not None)


_MODEL_USAGE_KEYS = ("inputTokens", "outputTokens", "cacheReadInputTokens", "cacheCreationInputTokens")
"""Input, output, cache-read and cache-write counts as ``modelUsage`` spells them."""
_USAGE_KEYS = ("input_tokens", "output_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")
"""The same four counts as the aggregate ``usage`` spells them."""


def _entry(model: str | None, counts: dict[str, JsonValue], keys: tuple[str, str, str, str]) -> UsageEntry:
    """One usage entry; Claude counts cached input apart, trialbook's ``input_tokens`` includes it."""
    fresh, output, read, write = (_int(counts.get(key)) for key in keys)
    return UsageEntry(
        model=model,
        input_tokens=_total(fresh, read, write),
        output_tokens=output,
        cache_read_tokens=read,
        cache_write_tokens=write,
        reasoning_tokens=None,
        reasoning_effort=None,
        duration_ms=None,
    )
