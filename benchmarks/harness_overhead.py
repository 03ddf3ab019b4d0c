"""What trialbook's trial harness costs over the least a trial needs.

Each trial copies a template of small files, runs an agent that does nothing (``true``), and throws the
copy away. ``harness`` does it the trialbook way (sandbox with isolated HOME and call log, script agent
through ``run_process``, finished-trial view, teardown); ``naive`` does only ``copytree`` +
``subprocess.run`` + ``rmtree``, the floor; ``runner`` is the whole ``trialbook.run`` path (plan,
scheduling, a ``file_exists`` check, transcripts and ``suite.json``). Each mode runs in fresh child
processes, so its peak memory is its own, in alternating batches, so a change in the machine's load hits
every mode alike.

    uv run --frozen python benchmarks/harness_overhead.py            # 200 trials, 1,000 files
    uv run --frozen python benchmarks/harness_overhead.py --trials 20 --files 100

A mode is a function ``(template, scratch, trials, concurrency) -> per-trial seconds``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
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
from typing import Any

from trialbook.agents import Agent, AgentTask, create_agent, script_agent
from trialbook.runner import RunOptions, run
from trialbook.sandbox import create_sandbox

Mode = Callable[[Path, Path, int, int], list[float]]


def make_template(folder: Path, files: int) -> Path:
    """A project-like tree: ``files`` files of 200 bytes, 50 to a folder."""
    for index in range(files):
        sub = folder / f"pkg{index // 50:03d}"
        sub.mkdir(parents=True, exist_ok=True)
        (sub / f"module{index:04d}.py").write_text("# generated\n" + "x = 1\n" * 31 + "\n")
    return folder


PHASES: dict[str, float] = {}
"""Seconds spent in each part of the harness trials of this process, summed over trials."""


def _phase(name: str, since: float) -> float:
    now = time.perf_counter()
    PHASES[name] = PHASES.get(name, 0.0) + now - since
    return now


async def _harness_trial(agent: Agent, template: Path, scratch: Path, index: int) -> float:
    started = time.perf_counter()
    sandbox = await asyncio.to_thread(
        create_sandbox, root=scratch / "trials", template=template, shims=(), secrets={}, extra_env={}
    )
    mark = _phase("create sandbox", started)
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
        mark = _phase("agent run", mark)
        sandbox.finished(result)
        mark = _phase("read call log", mark)
    finally:
        await asyncio.to_thread(sandbox.close)
    _phase("close sandbox", mark)
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


def runner(template: Path, scratch: Path, trials: int, concurrency: int) -> list[float]:
    """The whole ``trialbook.run`` path: one eval of ``trials`` trials, with a check and transcripts."""
    eval_file = scratch / "evals" / "bench.eval.yaml"
    eval_file.parent.mkdir(parents=True, exist_ok=True)
    eval_file.write_text(
        "prompt_text: do nothing\n"
        "agents: [{name: bench, script: 'true'}]\n"
        f"trials: {trials}\n"
        f"sandbox: {{template: {template}}}\n"
        "assert:\n  - file_exists: pkg000/module0000.py\n"
    )
    options = RunOptions(
        paths=(eval_file,),
        concurrency=concurrency,
        unsafe_local=True,
        results_dir=scratch / "results",
        environ={"PATH": os.environ.get("PATH", "/usr/bin:/bin")},
    )
    report = run(options)
    return [outcome.duration_s for result in report.results for outcome in result.outcomes]


MODES: dict[str, Mode] = {"naive": naive, "harness": harness, "runner": runner}


def measure(mode: str, concurrency: int, trials: int, files: int) -> dict[str, object]:
    """Run one batch in this process; per-trial durations, wall time, phases and peak memory."""
    with tempfile.TemporaryDirectory(prefix="trialbook-bench-") as tmp:
        scratch = Path(tmp)
        template = make_template(scratch / "template", files)
        started = time.perf_counter()
        durations = MODES[mode](template, scratch, trials, concurrency)
        wall = time.perf_counter() - started
    return {
        "durations": durations,
        "wall_s": wall,
        "phases": PHASES,
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


def _batch(mode: str, concurrency: int, trials: int, files: int) -> dict[str, Any]:
    argv = [sys.executable, str(Path(__file__).resolve()), "--one", mode, str(concurrency)]
    argv += ["--trials", str(trials), "--files", str(files)]
    result: dict[str, Any] = json.loads(
        subprocess.run(argv, check=True, capture_output=True, text=True).stdout
    )
    return result


def compare(concurrency: int, trials: int, files: int, rounds: int) -> dict[str, dict[str, Any]]:
    """Both modes in alternating batches, so a change in machine load hits both alike."""
    totals: dict[str, dict[str, Any]] = {
        m: {"durations": [], "wall_s": 0.0, "peak": 0.0, "phases": {}} for m in MODES
    }
    per_round = max(1, trials // rounds)
    for round_ in range(rounds):
        order = list(MODES) if round_ % 2 == 0 else list(reversed(MODES))
        for mode in order:
            batch = _batch(mode, concurrency, per_round, files)
            total = totals[mode]
            total["durations"] += batch["durations"]
            total["wall_s"] += batch["wall_s"]
            total["peak"] = max(total["peak"], batch["peak_rss_mb"])
            for phase, seconds in batch["phases"].items():
                total["phases"][phase] = total["phases"].get(phase, 0.0) + seconds
    return totals


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--trials", type=int, default=200)
    parser.add_argument("--files", type=int, default=1000)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 4, 8])
    parser.add_argument("--rounds", type=int, default=4, help="alternating batches per mode (default 4)")
    parser.add_argument("--one", nargs=2, metavar=("MODE", "CONCURRENCY"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(measure(args.one[0], int(args.one[1]), args.trials, args.files)))
        return
    print(f"{args.trials} trials per mode, template of {args.files} files, {args.rounds} alternating rounds")
    header = ("concurrency", "mode", "wall s", "trial ms", "median ms", "overhead ms", "peak MB")
    widths = (11, 8, 8, 9, 9, 11, 8)
    print(" ".join(f"{name:>{width}}" for name, width in zip(header, widths, strict=True)))
    for concurrency in args.concurrency:
        totals = compare(concurrency, args.trials, args.files, args.rounds)
        floor = statistics.mean(totals["naive"]["durations"]) * 1000
        for mode, total in totals.items():
            mean = statistics.mean(total["durations"]) * 1000
            median = statistics.median(total["durations"]) * 1000
            overhead = "" if mode == "naive" else f"{mean - floor:+.1f}"
            cells = (concurrency, mode, f"{total['wall_s']:.2f}", f"{mean:.1f}", f"{median:.1f}", overhead)
            row = [*cells, f"{total['peak']:.1f}"]
            print(" ".join(f"{cell:>{width}}" for cell, width in zip(row, widths, strict=True)))
        count = len(totals["harness"]["durations"])
        phases = ", ".join(
            f"{name} {seconds / count * 1000:.1f}" for name, seconds in totals["harness"]["phases"].items()
        )
        print(f"{'':>11} harness ms per trial: {phases}")


if __name__ == "__main__":
    main()
