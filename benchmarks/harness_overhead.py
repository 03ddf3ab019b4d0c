"""What trialbook's trial harness costs over the least a trial needs.

Each trial copies a template of small files, runs an agent that does nothing (``true``), and throws the
copy away. ``harness`` does it the trialbook way (sandbox with isolated HOME and call log, script agent
through ``run_process``, finished-trial view, teardown); ``naive`` does only ``copytree`` +
``subprocess.run`` + ``rmtree``, the floor. Every (mode, concurrency) runs in a fresh child process so its
peak memory is its own.

    uv run --frozen python -m benchmarks.harness_overhead            # 200 trials, 1,000 files
    uv run --frozen python -m benchmarks.harness_overhead --trials 20 --files 100

A mode is a function ``(template, scratch, trials, concurrency) -> per-trial seconds``; a mode driving the
full runner can be added to ``MODES`` beside these two.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from trialbook.agents import Agent, AgentTask, create_agent, script_agent
from trialbook.sandbox import create_sandbox

Mode = Callable[[Path, Path, int, int], list[float]]


def make_template(folder: Path, files: int) -> Path:
    """A project-like tree: ``files`` files of 200 bytes, 50 to a folder."""
    for index in range(files):
        sub = folder / f"pkg{index // 50:03d}"
        sub.mkdir(parents=True, exist_ok=True)
        (sub / f"module{index:04d}.py").write_text("# generated\n" + "x = 1\n" * 31 + "\n")
    return folder


async def _harness_trial(agent: Agent, template: Path, scratch: Path, index: int) -> float:
    started = time.perf_counter()
    sandbox = await asyncio.to_thread(
        create_sandbox, root=scratch / "trials", template=template, shims=(), secrets={}, extra_env={}
    )
    try:
        task = AgentTask(
            prompt="do nothing",
            workdir=sandbox.workdir,
            home=sandbox.home,
            env=sandbox.env,
            output_dir=scratch / "results" / f"trial-{index}",
            timeout_s=60,
        )
        result = await agent.run(task)
        if not result.success:
            raise RuntimeError(f"trial {index} failed: {result.error}")
        sandbox.finished(result)
    finally:
        await asyncio.to_thread(sandbox.close)
    return time.perf_counter() - started


def harness(template: Path, scratch: Path, trials: int, concurrency: int) -> list[float]:
    """Trials through trialbook's sandbox and script agent, ``concurrency`` at a time."""

    async def main() -> list[float]:
        agent = create_agent(script_agent("bench", "true"))
        gate = asyncio.Semaphore(concurrency)

        async def one(index: int) -> float:
            async with gate:
                return await _harness_trial(agent, template, scratch, index)

        return list(await asyncio.gather(*(one(i) for i in range(trials))))

    return asyncio.run(main())


def _naive_trial(template: Path, scratch: Path) -> float:
    started = time.perf_counter()
    folder = Path(tempfile.mkdtemp(dir=scratch))
    shutil.copytree(template, folder / "work", symlinks=True)
    subprocess.run(["bash", "-c", "true"], cwd=folder / "work", check=True)
    shutil.rmtree(folder)
    return time.perf_counter() - started


def naive(template: Path, scratch: Path, trials: int, concurrency: int) -> list[float]:
    """The floor: copy, run, remove, in a thread pool."""
    with ThreadPoolExecutor(max_workers=concurrency) as pool:
        return list(pool.map(lambda _: _naive_trial(template, scratch), range(trials)))


MODES: dict[str, Mode] = {"naive": naive, "harness": harness}


def measure(mode: str, concurrency: int, trials: int, files: int) -> dict[str, float | int | str]:
    """Run one configuration in this process and describe it."""
    with tempfile.TemporaryDirectory(prefix="trialbook-bench-") as tmp:
        scratch = Path(tmp)
        template = make_template(scratch / "template", files)
        started = time.perf_counter()
        durations = MODES[mode](template, scratch, trials, concurrency)
        wall = time.perf_counter() - started
    return {
        "mode": mode,
        "concurrency": concurrency,
        "trials": trials,
        "wall_s": wall,
        "mean_trial_ms": statistics.mean(durations) * 1000,
        "median_trial_ms": statistics.median(durations) * 1000,
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--trials", type=int, default=200)
    parser.add_argument("--files", type=int, default=1000)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 4, 8])
    parser.add_argument("--one", nargs=2, metavar=("MODE", "CONCURRENCY"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(measure(args.one[0], int(args.one[1]), args.trials, args.files)))
        return
    print(f"{args.trials} trials, template of {args.files} files")
    header = ("concurrency", "mode", "wall s", "trial ms", "median ms", "overhead ms", "peak MB")
    print(" ".join(f"{name:>{width}}" for name, width in zip(header, (11, 8, 8, 9, 9, 11, 8), strict=True)))
    for concurrency in args.concurrency:
        rows = {}
        for mode in MODES:
            argv = [sys.executable, "-m", "benchmarks.harness_overhead", "--one", mode, str(concurrency)]
            argv += ["--trials", str(args.trials), "--files", str(args.files)]
            rows[mode] = json.loads(subprocess.run(argv, check=True, capture_output=True, text=True).stdout)
        floor = rows["naive"]["mean_trial_ms"]
        for mode, row in rows.items():
            overhead = "" if mode == "naive" else f"{float(row['mean_trial_ms']) - float(floor):+.1f}"
            print(
                f"{concurrency:>11} {mode:>8} {row['wall_s']:>8.2f} {row['mean_trial_ms']:>9.1f} "
                f"{row['median_trial_ms']:>9.1f} {overhead:>11} {row['peak_rss_mb']:>8.1f}"
            )


if __name__ == "__main__":
    main()
