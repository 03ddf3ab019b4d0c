"""What a trial's process supervision costs: starting a command and sweeping after it.

``naive`` is the floor (``subprocess.run(["true"])``); ``run_process`` starts the command the way trials do
(new session, pipes, deadline) without a trial; ``marker`` adds a trial scope (marker in the environment,
subreaper, and the ``/proc`` sweep when the scope closes); ``cgroup`` also starts the command inside a
per-trial cgroup (an extra ``sh`` exec, ``cgroup.kill`` and ``rmdir``), where this machine allows it.
Modes alternate in batches so a change in the machine's load hits each alike.

    uv run --frozen python benchmarks/process_cleanup.py            # 5 batches of 40
    uv run --frozen python benchmarks/process_cleanup.py --batches 3 --per-batch 20
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

from trialbook.sandbox.process import run_process
from trialbook.sandbox.supervisor import TRIAL_MARKER, supervisor

ENV = {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}


def naive() -> None:
    subprocess.run(["true"], check=True)


def plain() -> None:
    asyncio.run(run_process(["true"], cwd=Path.cwd(), env=ENV, timeout_s=30))


def scoped(cgroup: bool) -> Callable[[], None]:
    def one() -> None:
        os.environ["TRIALBOOK_CGROUP"] = "on" if cgroup else "off"
        scope = supervisor().open_trial()
        try:
            env = {**ENV, TRIAL_MARKER: scope.marker}
            asyncio.run(run_process(["true"], cwd=Path.cwd(), env=env, timeout_s=30))
        finally:
            scope.close()
        assert scope.mechanism == ("cgroup" if cgroup else "marker") or not cgroup

    return one


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batches", type=int, default=5)
    parser.add_argument("--per-batch", type=int, default=40)
    args = parser.parse_args()
    modes: dict[str, Callable[[], None]] = {
        "naive": naive,
        "run_process": plain,
        "marker": scoped(False),
        "cgroup": scoped(True),
    }
    times: dict[str, list[float]] = {name: [] for name in modes}
    for _ in range(args.batches):
        for name, mode in modes.items():
            for _ in range(args.per_batch):
                started = time.perf_counter()
                mode()
                times[name].append(time.perf_counter() - started)
    processes = sum(1 for entry in os.listdir("/proc") if entry.isdigit()) if os.path.isdir("/proc") else 0
    print(f"{args.batches * args.per_batch} runs per mode, {processes} processes on the machine")
    print(f"{'mode':<12} {'median ms':>10} {'p90 ms':>8}")
    for name, values in times.items():
        values.sort()
        p90 = values[int(len(values) * 0.9) - 1]
        print(f"{name:<12} {statistics.median(values) * 1000:>10.2f} {p90 * 1000:>8.2f}")


if __name__ == "__main__":
    main()
