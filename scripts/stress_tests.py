"""Run trialbook's test suite with every core busy, to show that no test depends on the machine's speed.

    uv run --frozen python scripts/stress_tests.py [--rounds 3] [PYTEST ARGS...]

One CPU burner per core (plain Python loops, in processes of their own, at normal priority) runs for as
long as the suite does; the suite runs ``--rounds`` times in a row, as the README's test command runs it.
A round that fails stops the script with pytest's exit code; the burners always stop with it.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import subprocess
import sys
import time


def _burn(stop: multiprocessing.synchronize.Event) -> None:
    """Keep one core busy until told to stop."""
    count = 0
    while not stop.is_set():
        for _ in range(100_000):
            count += 1


def main() -> int:
    """Start the burners, run the rounds, stop the burners; the first failing round's exit code."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3, help="times the whole suite runs (default 3)")
    parser.add_argument(
        "--burners", type=int, default=os.cpu_count() or 2, help="busy processes (default: cores)"
    )
    options, pytest_args = parser.parse_known_args()
    stop = multiprocessing.Event()
    burners = [
        multiprocessing.Process(target=_burn, args=(stop,), daemon=True) for _ in range(options.burners)
    ]
    for burner in burners:
        burner.start()
    try:
        for round_number in range(1, options.rounds + 1):
            started = time.monotonic()
            done = subprocess.run([sys.executable, "-m", "pytest", *pytest_args], check=False)
            took = time.monotonic() - started
            print(
                f"stress round {round_number}/{options.rounds}: exit {done.returncode} in {took:.0f}s",
                flush=True,
            )
            if done.returncode != 0:
                return done.returncode
        return 0
    finally:
        stop.set()
        for burner in burners:
            burner.join(timeout=5)
            if burner.is_alive():
                burner.kill()


if __name__ == "__main__":
    raise SystemExit(main())
