"""Counted nouns for messages people read: ``1 trial``, ``2 trials``, never ``1 trials``."""

from __future__ import annotations

__all__ = ["plural"]


def plural(count: int, noun: str, many: str | None = None) -> str:
    """``count`` and ``noun``, with the plural form (``noun + "s"`` unless ``many`` is given) when not 1."""
    return f"{count} {noun if count == 1 else (many or noun + 's')}"
