"""What a trial's process supervision costs: starting a command and sweeping after it.

``naive`` is the floor (``asyncio.create_subprocess_exec`` of ``bash -c true``, waited for);
``run_process`` starts the command the way trials do (new session, pipes, deadline) without a trial;
``marker`` adds a trial scope (marker in the environment, subreaper, the sweep after the agent and the one
when the scope closes); ``cgroup`` also starts the command inside a per-trial cgroup (``cgroup.kill`` and
``rmdir``), where this machine allows it. Modes alternate in batches so a change in the machine's load
hits each alike. CPU is this process's and its children's (user + system), which a shared machine's other
load disturbs far less than wall time.

    uv run --frozen python -m benchmarks.process_cleanup            # 5 batches of 40
    uv run --frozen python -m benchmarks.process_cleanup --batches 3 --per-batch 20
"""

from __future__ import annotations

import argparse
import asyncio
import os
import resource
import statistics
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

from trialbook.sandbox.process import run_process
from trialbook.sandbox.supervisor import TRIAL_MARKER, supervisor

ENV = {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}
COMMAND = ["bash", "-c", "true"]  # as agent scripts, literal steps and checks run


async def naive() -> None:
    proc = await asyncio.create_subprocess_exec(*COMMAND, env=ENV)
    await proc.wait()


async def plain() -> None:
    await run_process(COMMAND, cwd=Path.cwd(), env=ENV, timeout_s=30)


def scoped(cgroup: bool) -> Callable[[], Awaitable[None]]:
    async def one() -> None:
        os.environ["TRIALBOOK_CGROUP"] = "on" if cgroup else "off"
        scope = supervisor().open_trial()
        try:
            env = {**ENV, TRIAL_MARKER: scope.marker}
            await run_process(COMMAND, cwd=Path.cwd(), env=env, timeout_s=30)
            scope.sweep()  # after the agent, as a trial does
        finally:
            scope.close()
        if scope.mechanism != ("cgroup" if cgroup else "marker"):
            raise RuntimeError(f"expected {'cgroup' if cgroup else 'marker'}, ran {scope.mechanism}")

    return one


def _cpu() -> float:
    mine, children = (resource.getrusage(who) for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN))
    return mine.ru_utime + mine.ru_stime + children.ru_utime + children.ru_stime


async def _batches(
    modes: dict[str, Callable[[], Awaitable[None]]], batches: int, per_batch: int
) -> dict[str, dict[str, list[float]]]:
    walls: dict[str, list[float]] = {name: [] for name in modes}
    cpus: dict[str, list[float]] = {name: [] for name in modes}
    for mode in modes.values():  # warm-up: first-use costs are not a trial's
        await mode()
    for _ in range(batches):
        for name, mode in modes.items():
            cpu = _cpu()
            for _ in range(per_batch):
                started = time.perf_counter()
                await mode()
                walls[name].append(time.perf_counter() - started)
            cpus[name].append((_cpu() - cpu) / per_batch)
    return {"wall": walls, "cpu": cpus}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batches", type=int, default=5)
    parser.add_argument("--per-batch", type=int, default=40)
    args = parser.parse_args()
    modes: dict[str, Callable[[], Awaitable[None]]] = {
        "naive": naive,
        "run_process": plain,
        "marker": scoped(False),
        "cgroup": scoped(True),
    }
    result = asyncio.run(_batches(modes, args.batches, args.per_batch))
    processes = sum(1 for entry in os.listdir("/proc") if entry.isdigit()) if os.path.isdir("/proc") else 0
    print(f"{args.batches * args.per_batch} runs per mode, {processes} processes on the machine\n")
    print("| mode | median wall ms | p90 wall ms | CPU ms (median batch) | CPU ms (best batch) |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for name in modes:
        values = sorted(result["wall"][name])
        p90 = values[int(len(values) * 0.9) - 1]
        cpu = result["cpu"][name]
        print(
            f"| {name} | {statistics.median(values) * 1000:.2f} | {p90 * 1000:.2f} "
            f"| {statistics.median(cpu) * 1000:.2f} | {min(cpu) * 1000:.2f} |"
        )


if __name__ == "__main__":
    main()
