"""Scores of trigger evals: how often an agent picks a skill up when it should, and only then (pure)."""

from __future__ import annotations

from ._score import Expect, QueryCounts, Rate, TriggerScore, score

__all__ = ["Expect", "QueryCounts", "Rate", "TriggerScore", "score"]
