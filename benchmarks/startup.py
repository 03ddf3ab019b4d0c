"""How long ``trialbook --help`` takes to start, against a bare interpreter and click alone.

The budget is 0.5 s for ``--help``: people type it, and shell completion and wrappers call it. Rows:
``floor`` is ``python -c pass`` (the least any Python CLI costs), ``click`` imports click only (the
least a click CLI costs), then ``trialbook --help``, ``trialbook --version``, ``import trialbook`` (the
package, whose public names load lazily) and ``import trialbook.cli`` (which imports every command).
CPU time (user + system of the child) is shown beside wall time because on a shared machine the wall
time mostly measures the neighbours.

    uv run --frozen python benchmarks/startup.py
"""

from __future__ import annotations

import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPEATS = 7
TRIALBOOK = Path(sys.executable).parent / "trialbook"
CASES = {
    "floor: python -c pass": [sys.executable, "-c", "pass"],
    "click: import click": [sys.executable, "-c", "import click"],
    "trialbook --help": [str(TRIALBOOK), "--help"],
    "trialbook --version": [str(TRIALBOOK), "--version"],
    "import trialbook (the package, lazy)": [sys.executable, "-c", "import trialbook"],
    "import trialbook.cli (every command)": [sys.executable, "-c", "import trialbook.cli"],
}


def _time(argv: list[str], env: dict[str, str] | None = None) -> tuple[float, float]:
    walls, cpus = [], []
    for _ in range(REPEATS):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        subprocess.run(argv, check=True, capture_output=True, env=env)
        walls.append(time.perf_counter() - started)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return statistics.median(walls) * 1000, statistics.median(cpus) * 1000


def bytecode_envs(folder: str) -> dict[str, dict[str, str]]:
    """Two well-defined ways to start, each with its own bytecode cache under ``folder``.

    ``bytecode``: compiled once, then read (as an installed package runs). ``source``: nothing compiled
    is read or written, the standard library included, so every start compiles every module (the
    worst case; machines that set ``PYTHONDONTWRITEBYTECODE`` compile trialbook and its dependencies on
    every start but read the standard library's bytecode, which lies between the two).
    """
    compiled = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    compiled["PYTHONPYCACHEPREFIX"] = f"{folder}/bytecode"
    source = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "PYTHONPYCACHEPREFIX": f"{folder}/empty"}
    return {"bytecode": compiled, "source": source}


def main() -> None:
    """Print one row per case: median wall and CPU milliseconds over the repeats."""
    print(f"| case (median of {REPEATS}) | wall | CPU |")
    print("| --- | --- | --- |")
    for name, argv in CASES.items():
        wall, cpu = _time(argv)
        print(f"| {name} | {wall:,.0f} ms | {cpu:,.0f} ms |")


if __name__ == "__main__":
    main()
