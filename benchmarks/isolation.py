"""What isolation costs a trial: the same trivial script agent under `none` and `bwrap`, in one run.

Each row is ``trialbook eval`` of one eval with N trials of ``script: 'true'`` (so the harness is all there
is), marginal cost per trial over a 1-trial run; ``floor`` is ``bwrap ... true`` alone, the least the
wrapping itself can cost.

    uv run --frozen python benchmarks/isolation.py [--trials N] [--rounds R]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TRIALBOOK = Path(sys.executable).parent / "trialbook"


def _eval(folder: Path, trials: int) -> float:
    started = time.perf_counter()
    subprocess.run(
        [str(TRIALBOOK), "eval", "evals", "--trials", str(trials), "--concurrency", "4"],
        cwd=folder, env={**os.environ, "CI": "true"}, capture_output=True, check=True,
    )  # fmt: skip
    return time.perf_counter() - started


def _project(root: Path, isolation: str) -> Path:
    folder = root / isolation
    (folder / "evals").mkdir(parents=True)
    (folder / "evals/t.eval.yaml").write_text(
        f"prompt_text: x\nagents: [{{name: s, script: 'true'}}]\nnegative_control: false\n"
        f"sandbox: {{isolation: {isolation}}}\n"
    )
    return folder


def main() -> None:
    """Print the marginal milliseconds a trial costs under each isolation, and the floor."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=40)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    rows: dict[str, list[float]] = {"none": [], "bwrap": [], "floor: bwrap true": []}
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        raise SystemExit("bubblewrap is needed: sudo apt-get install bubblewrap")
    with tempfile.TemporaryDirectory(prefix="tb-isolation-") as scratch:
        for _ in range(args.rounds):
            for isolation in ("none", "bwrap"):
                folder = _project(Path(scratch) / f"r{len(rows[isolation])}", isolation)
                one, many = _eval(folder, 1), _eval(folder, args.trials)
                rows[isolation].append((many - one) / (args.trials - 1) * 1000)
            started = time.perf_counter()
            for _ in range(20):
                subprocess.run(
                    [bwrap, "--ro-bind", "/", "/", "--unshare-pid", "--proc", "/proc", "true"], check=True
                )
            rows["floor: bwrap true"].append((time.perf_counter() - started) / 20 * 1000)
    print(f"{'per trial (median of ' + str(args.rounds) + ')':<28} {'ms':>8}")
    for name, values in rows.items():
        print(f"{name:<28} {statistics.median(values):>8.2f}")


if __name__ == "__main__":
    main()
