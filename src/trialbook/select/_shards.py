"""Which shard of a matrix runs which eval × agent: balanced by recorded durations, else by hash (pure).

Every shard of a matrix computes the split on its own, with no coordination, so the split must be a
function of what every shard sees alike: the planned keys and the durations the history branch records.
With durations, the longest pairs are dealt first, each to the shard with the least work so far (longest
processing time first, LPT); the hash split is computed too and kept when it happens to finish sooner, so
balancing by duration is never worse than not balancing. Pairs history knows nothing about are counted at
the median of the known ones; without any duration the hash split is used as before.
"""

from __future__ import annotations

import hashlib
import math
import statistics
from collections.abc import Sequence
from typing import TypeVar

__all__ = ["balanced_shard_of", "hash_assignment", "lpt_assignment", "makespan", "shard_of"]

T = TypeVar("T")


def _hash_order(keys: Sequence[str]) -> list[int]:
    return sorted(range(len(keys)), key=lambda i: (hashlib.sha256(keys[i].encode()).hexdigest(), keys[i]))


def hash_assignment(keys: Sequence[str], count: int) -> list[int]:
    """The 0-based shard of each key: ordered by a hash of the key and dealt round robin."""
    shards = [0] * len(keys)
    for position, i in enumerate(_hash_order(keys)):
        shards[i] = position % count
    return shards


def lpt_assignment(keys: Sequence[str], weights: Sequence[float], count: int) -> list[int]:
    """The 0-based shard of each key: heaviest first, each to the least loaded shard (lowest on ties)."""
    rank = {i: position for position, i in enumerate(_hash_order(keys))}
    loads = [0.0] * count
    shards = [0] * len(keys)
    for i in sorted(range(len(keys)), key=lambda i: (-weights[i], rank[i])):
        target = min(range(count), key=lambda s: (loads[s], s))
        shards[i] = target
        loads[target] += weights[i]
    return shards


def makespan(assignment: Sequence[int], weights: Sequence[float], count: int) -> float:
    """The expected duration of the slowest shard.

    Each shard's load is summed exactly (``math.fsum``): a float sum in input order rounds differently
    for another order of the same pairs, and two shards listing their pairs in different orders must
    still agree on which split wins when the two finish at the same time.
    """
    loads: list[list[float]] = [[] for _ in range(count)]
    for shard, weight in zip(assignment, weights, strict=True):
        loads[shard].append(weight)
    return max((math.fsum(load) for load in loads), default=0.0)


def _weights(durations: Sequence[float | None]) -> list[float] | None:
    known = [d for d in durations if d is not None and d >= 0]
    if not known:
        return None
    typical = statistics.median(known)
    return [d if d is not None and d >= 0 else typical for d in durations]


def balanced_shard_of(
    items: Sequence[T], keys: Sequence[str], durations: Sequence[float | None], index: int, count: int
) -> list[T]:
    """The items of shard ``index`` (1-based) of ``count``, balanced by ``durations`` (seconds, or None).

    Deterministic in (keys, durations): every shard that reads the same history computes the same
    split, and each item lands in exactly one shard.
    """
    if not len(items) == len(keys) == len(durations):
        raise ValueError("items, keys and durations must have the same length")
    weights = _weights(durations)
    chosen = hash_assignment(keys, count)
    if weights is not None:
        balanced = lpt_assignment(keys, weights, count)
        if makespan(balanced, weights, count) <= makespan(chosen, weights, count):
            chosen = balanced
    return [item for item, shard in zip(items, chosen, strict=True) if shard == index - 1]


def shard_of(items: Sequence[T], keys: Sequence[str], index: int, count: int) -> list[T]:
    """The items of shard ``index`` of ``count`` by hash alone.

    Items are ordered by a hash of their key and dealt round robin, so every machine computes the same
    split from the same evals, shards differ in size by at most one, and each item lands in exactly one.
    """
    return balanced_shard_of(items, keys, [None] * len(items), index, count)
