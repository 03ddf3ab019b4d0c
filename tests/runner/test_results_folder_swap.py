"""Attacking the swap: whatever the user keeps in a marked results folder survives every run, and
whatever an earlier run wrote is gone once the next run is swapped in."""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from trialbook.runner._folder import MARKER, is_owned, stage

OURS = {"suite.json", "manifest.json", "evals", ".gitignore", MARKER}
NAMES = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789._-", min_size=1, max_size=12).filter(
    lambda name: name not in OURS and name not in (".", "..") and not name.startswith(".results.")
)


def _write_run(folder: Path, evals: list[str]) -> None:
    (folder / "suite.json").write_text("{}\n")
    for eval_id in evals:
        trial = folder / "evals" / eval_id / "literal" / "trial-1"
        trial.mkdir(parents=True)
        (trial / "result.json").write_text(eval_id)


def _evals(folder: Path) -> set[str]:
    evals = folder / "evals"
    return {p.name for p in evals.iterdir()} if evals.exists() else set()


@settings(max_examples=60, deadline=None)
@given(
    user=st.dictionaries(NAMES, st.binary(max_size=64), max_size=5),
    first=st.lists(st.sampled_from(["a", "b", "c"]), unique=True),
    second=st.lists(st.sampled_from(["a", "b", "c"]), unique=True),
)
def test_user_files_survive_and_old_results_go(
    user: dict[str, bytes], first: list[str], second: list[str]
) -> None:
    with tempfile.TemporaryDirectory() as scratch:
        final = Path(scratch) / "results"
        run = stage(final, "20260101T000000Z-000001")
        _write_run(run.staging, first)
        run.commit()
        for name, data in user.items():
            (final / name).write_bytes(data)
        assert is_owned(final)
        run = stage(final, "20260101T000001Z-000002")
        _write_run(run.staging, second)
        assert _evals(final) == set(first)  # until the swap the previous run is whole
        run.commit()
        for name, data in user.items():
            assert (final / name).read_bytes() == data
        assert _evals(final) == set(second)
        assert sorted(p.name for p in Path(scratch).iterdir()) == ["results"]


def test_a_symlink_in_the_old_run_is_removed_not_followed(tmp_path: Path) -> None:
    outside = tmp_path / "precious"
    outside.mkdir()
    (outside / "keep.txt").write_text("mine\n")
    final = tmp_path / "results"
    run = stage(final, "20260101T000000Z-000001")
    _write_run(run.staging, ["a"])
    (run.staging / "evals" / "a" / "link").symlink_to(outside, target_is_directory=True)
    run.commit()
    run = stage(final, "20260101T000001Z-000002")
    _write_run(run.staging, ["b"])
    run.commit()
    assert (outside / "keep.txt").read_text() == "mine\n"
    assert not (final / "evals" / "a").exists()
