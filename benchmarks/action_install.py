"""How long the action's install step takes in a job: cold (no cache), warm (the cached venv), and the floor.

A CI job's install is time every user of the action waits for on every run. The rows run the action's
own install commands on this machine, each in a fresh folder:

- ``cold, empty pip cache``: a job's first run, ``python -m venv --without-pip`` and ``pip --python VENV
  install --require-hashes`` of ``requirements/action.txt`` from PyPI with an empty pip cache (needs
  network);
- ``cold, warm pip cache``: the same with pip's download cache kept (a self-hosted runner);
- ``warm (cached venv)``: what a job does after ``actions/cache/restore`` hit: unpack the venv saved by an
  earlier job, check it imports, and write trialbook's entry points from the action folder;
- ``floor: unpack only``: the unpacking alone, the least a cached install can cost.

    uv run --frozen python benchmarks/action_install.py [--rounds N]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
REQUIREMENTS = ROOT / "requirements/action.txt"
PYTHON = str(Path(sys.base_prefix) / "bin/python3")
"""The interpreter this environment was made from: one with pip, as setup-python's is."""


def _run(*argv: str, env: dict[str, str] | None = None) -> None:
    subprocess.run(argv, check=True, capture_output=True, env=env)


def _cold(folder: Path, pip_cache: Path) -> float:
    venv = folder / "trialbook-venv"
    started = time.perf_counter()
    _run(PYTHON, "-m", "venv", "--without-pip", str(venv))
    python = str(venv / "bin/python")
    env = {"PIP_CACHE_DIR": str(pip_cache), "PATH": "/usr/bin:/bin"}
    _run(PYTHON, "-m", "pip", "--python", python, "install", "--quiet", "--disable-pip-version-check",
         "--require-hashes", "--no-deps", "-r", str(REQUIREMENTS), env=env)  # fmt: skip
    _run(python, str(ROOT / "scripts/action/install_trialbook.py"), str(ROOT))
    return time.perf_counter() - started


def _warm(folder: Path, saved: Path, *, floor: bool) -> float:
    venv = folder / "trialbook-venv"
    started = time.perf_counter()
    venv.mkdir(parents=True)
    with tarfile.open(saved) as archive:
        archive.extractall(venv, filter="fully_trusted")
    if not floor:
        python = str(venv / "bin/python")
        _run(python, "-c", "import pygit2, yaml, click")
        _run(python, str(ROOT / "scripts/action/install_trialbook.py"), str(ROOT))
    return time.perf_counter() - started


def main() -> None:
    """Print one table: the median of each row over the rounds, in seconds."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    rounds = parser.parse_args().rounds
    rows: dict[str, list[float]] = {
        "cold, empty pip cache": [],
        "cold, warm pip cache": [],
        "warm (cached venv)": [],
        "floor: unpack only": [],
    }
    with tempfile.TemporaryDirectory(prefix="tb-install-") as scratch:
        base = Path(scratch)
        kept_cache = base / "pip-kept"
        for index in range(rounds):
            rows["cold, empty pip cache"].append(_cold(base / f"empty-{index}", base / f"pip-{index}"))
            rows["cold, warm pip cache"].append(_cold(base / f"kept-{index}", kept_cache))
        saved = base / "venv.tar"
        with tarfile.open(saved, "w") as archive:  # what actions/cache/save keeps
            archive.add(base / "kept-0/trialbook-venv", arcname=".")
        for index in range(rounds):
            rows["warm (cached venv)"].append(_warm(base / f"warm-{index}", saved, floor=False))
            rows["floor: unpack only"].append(_warm(base / f"floor-{index}", saved, floor=True))
            shutil.rmtree(base / f"warm-{index}")
    print(f"{'install step (median of ' + str(rounds) + ')':<32} {'seconds':>8}")
    for name, times in rows.items():
        print(f"{name:<32} {statistics.median(times):>8.2f}")


if __name__ == "__main__":
    main()
