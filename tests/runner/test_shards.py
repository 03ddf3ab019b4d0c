"""Shards balanced by recorded durations: a partition, deterministic, never worse than the hash split."""

from __future__ import annotations

import json
import random
import statistics
from collections.abc import Sequence
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.history.helpers import line
from trialbook.select import balanced_shard_of, shard_of
from trialbook.select._shards import hash_assignment, makespan

from .conftest import Invoke, write

KEYS = st.lists(st.text(min_size=1, max_size=12), unique=True, max_size=40)
DURATION = st.one_of(st.none(), st.floats(min_value=0, max_value=1e5, allow_nan=False))
Plan = tuple[list[str], list[float | None], int]


@st.composite
def plans(draw: st.DrawFn) -> Plan:
    keys = draw(KEYS)
    durations = draw(st.lists(DURATION, min_size=len(keys), max_size=len(keys)))
    return keys, durations, draw(st.integers(min_value=1, max_value=8))


def _split(keys: list[str], durations: Sequence[float | None], count: int) -> list[list[str]]:
    return [balanced_shard_of(keys, keys, durations, index, count) for index in range(1, count + 1)]


@settings(deadline=None)
@given(plans())
def test_every_pair_lands_in_exactly_one_shard(plan: Plan) -> None:
    keys, durations, count = plan
    shards = _split(keys, durations, count)
    assert sorted(key for shard in shards for key in shard) == sorted(keys)


@settings(deadline=None)
@given(plans(), st.randoms(use_true_random=False))
def test_the_same_input_gives_the_same_split_in_any_order(plan: Plan, rng: random.Random) -> None:
    keys, durations, count = plan
    pairs = list(zip(keys, durations, strict=True))
    rng.shuffle(pairs)
    shuffled = _split([k for k, _ in pairs], [d for _, d in pairs], count)
    assert [sorted(s) for s in _split(keys, durations, count)] == [sorted(s) for s in shuffled]
    assert _split(keys, durations, count) == _split(list(keys), list(durations), count)


@settings(deadline=None)
@given(plans())
def test_balance_is_never_worse_than_the_hash_split(plan: Plan) -> None:
    keys, durations, count = plan
    known = [d for d in durations if d is not None]
    if not known:
        return
    # Pairs without a recorded duration are expected to take the median of the known ones.
    weights = [d if d is not None else statistics.median(known) for d in durations]
    shards = _split(keys, durations, count)
    chosen = [next(i for i, shard in enumerate(shards) if key in shard) for key in keys]
    assert makespan(chosen, weights, count) <= makespan(hash_assignment(keys, count), weights, count)


@settings(deadline=None)
@given(KEYS, st.integers(min_value=1, max_value=8))
def test_without_durations_the_split_is_the_hash_split(keys: list[str], count: int) -> None:
    hashed = [shard_of(keys, keys, index, count) for index in range(1, count + 1)]
    assert _split(keys, [None] * len(keys), count) == hashed
    sizes = [len(shard) for shard in hashed]
    assert max(sizes, default=0) - min(sizes, default=0) <= 1


def test_longest_first_gives_a_long_pair_a_shard_of_its_own() -> None:
    keys = [f"eval-{n}::literal" for n in range(9)]
    durations: list[float | None] = [600.0, *([10.0] * 8)]
    shards = _split(keys, durations, 2)
    assert [keys[0]] in shards


def test_a_durations_list_of_another_length_is_refused() -> None:
    with pytest.raises(ValueError, match="same length"):
        balanced_shard_of(["a"], ["a"], [], 1, 1)


def _listed(invoke: Invoke, index: int, history: Path | None) -> list[str]:
    args = ["list", "evals", "--shard", f"{index}/2"]
    if history is not None:
        args += ["--history-dir", str(history)]
    result = invoke(*args)
    assert result.exit_code == 0, result.output
    return sorted(row.split()[1] for row in result.output.splitlines() if row.startswith("run "))


def test_list_balances_shards_by_the_durations_history_records(invoke: Invoke, tmp_path: Path) -> None:
    """Through the real planner: recorded durations decide the split; no history splits by hash."""
    names = ["slow", *(f"quick{n}" for n in range(5))]
    for name in names:
        write(
            tmp_path / f"evals/{name}.eval.yaml",
            f"""
            prompt_text: make {name}.txt
            agents: [literal]
            assert:
              - file_exists: {name}.txt
            """,
        )
    cold = [_listed(invoke, index, None) for index in (1, 2)]
    history = tmp_path / "history"
    history.mkdir()
    for name in names:
        seconds = 900.0 if name == "slow" else 30.0
        recorded = line(name, "literal", trials=1, passed=1, duration_s=seconds)
        (history / f"{name}.jsonl").write_text(json.dumps(recorded.to_json()) + "\n")
    warm = [_listed(invoke, index, history) for index in (1, 2)]
    for split in (cold, warm):
        assert sorted(n for shard in split for n in shard) == sorted(names)
    assert sorted(len(shard) for shard in cold) == [3, 3]
    assert ["slow"] in warm, warm
    assert warm == [_listed(invoke, index, history) for index in (1, 2)]


def test_a_shard_s_load_does_not_depend_on_the_order_of_its_pairs() -> None:
    """(0.1 + 0.2) + 0.3 and (0.3 + 0.2) + 0.1 differ as floats; shards listing pairs in other orders
    must still pick the same split when the balanced and the hash split tie."""
    assert makespan([0, 0, 0], [0.1, 0.2, 0.3], 1) == makespan([0, 0, 0], [0.3, 0.2, 0.1], 1)
