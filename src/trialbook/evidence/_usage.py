"""Token usage records and the arithmetic over them, where unknown is never zero."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

__all__ = ["PRICES", "CostEstimate", "ModelPrice", "UsageEntry", "estimate_cost", "sum_known"]


@dataclass(frozen=True)
class UsageEntry:
    """Tokens one model request (or one reported aggregate) used. Each count is ``None`` when not reported.

    ``input_tokens`` includes cached input when the agent reports it that way (Copilot, Codex); adapters
    whose source excludes cache tokens (Claude Code) add them back so the field means the same everywhere.
    """

    model: str | None
    input_tokens: int | None
    output_tokens: int | None
    cache_read_tokens: int | None
    cache_write_tokens: int | None
    reasoning_tokens: int | None
    reasoning_effort: str | None
    duration_ms: float | None

    def impossible(self) -> list[tuple[str, str]]:
        """Negative counts or durations, as ``(field, why)``; the codec refuses a record with any."""
        names = (
            "input_tokens",
            "output_tokens",
            "cache_read_tokens",
            "cache_write_tokens",
            "reasoning_tokens",
        )
        return [
            (name, f"{getattr(self, name)} is negative")
            for name in (*names, "reasoning_tokens", "duration_ms")
            if getattr(self, name) is not None and getattr(self, name) < 0
        ]


def sum_known(values: Iterable[int | None]) -> int | None:
    """Sum counts, or ``None`` when any one of them is unknown (a known zero stays zero)."""
    total = 0
    for value in values:
        if value is None:
            return None
        total += value
    return total


@dataclass(frozen=True)
class ModelPrice:
    """USD per million tokens for one model."""

    input: float
    output: float
    cache_read: float | None = None


# Public list prices, USD per million tokens. A model missing here is reported as unpriced, never as free.
PRICES: dict[str, ModelPrice] = {
    "claude-sonnet-4.5": ModelPrice(3.0, 15.0, 0.30),
    "claude-sonnet-4-5": ModelPrice(3.0, 15.0, 0.30),
    "claude-sonnet-5": ModelPrice(3.0, 15.0, 0.30),
    "claude-opus-4-8": ModelPrice(15.0, 75.0, 1.50),
    "claude-haiku-4.5": ModelPrice(1.0, 5.0, 0.10),
    "gpt-5": ModelPrice(1.25, 10.0, 0.125),
    "gpt-5-mini": ModelPrice(0.25, 2.0, 0.025),
    "gpt-5.2": ModelPrice(1.75, 14.0, 0.175),
    "gpt-5.5": ModelPrice(1.75, 14.0, 0.175),
}


@dataclass(frozen=True)
class CostEstimate:
    """An estimate from reported token counts; not a claim of complete billing evidence.

    ``usd`` is ``None`` when any entry could not be priced (unknown model or unknown counts);
    ``unpriced_models`` names the models that had no price so a reader knows why.
    """

    usd: float | None
    unpriced_models: tuple[str, ...]


def estimate_cost(usage: Iterable[UsageEntry], prices: dict[str, ModelPrice] | None = None) -> CostEstimate:
    """Price usage entries from input/output counts; unknown cache reads get no cache discount."""
    table = PRICES if prices is None else prices
    total = 0.0
    known = True
    unpriced: list[str] = []
    for entry in usage:
        price = table.get(entry.model) if entry.model is not None else None
        if price is None:
            name = entry.model if entry.model is not None else "<unknown model>"
            if name not in unpriced:
                unpriced.append(name)
            known = False
            continue
        if entry.input_tokens is None or entry.output_tokens is None:
            known = False
            continue
        cached = entry.cache_read_tokens
        if cached is not None and price.cache_read is not None:
            fresh = max(entry.input_tokens - cached, 0)
            total += fresh * price.input / 1e6 + cached * price.cache_read / 1e6
        else:
            total += entry.input_tokens * price.input / 1e6
        total += entry.output_tokens * price.output / 1e6
    return CostEstimate(usd=total if known else None, unpriced_models=tuple(unpriced))
