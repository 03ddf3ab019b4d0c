"""How close trialbook's whole runner comes to the least a trial can cost, in one run on one machine.

Four questions, each against a naive floor measured in the same run, in child processes of this one
(so each row's peak RSS is its own process's), in alternating rounds (so a change in the machine's load
hits floor and trialbook alike):

- ``floor``: asyncio, one ``sh -c`` subprocess per trial writing ``ok`` into a fresh temp folder, a
  substring check of that file, the folder removed; ``concurrency`` trials at a time. ``floor (bash)``
  is the same with ``bash -c``, which trialbook's script agent runs (trivial agent only).
- ``trialbook``: ``trialbook.run`` on one eval of N trials with the same script agent, a
  ``file_contains`` check, transcripts (``result.json``, ``changes.json``, ``script.log``; no
  ``calls.jsonl``, as the eval has no shims) and ``suite.json``; no template.
- both with a trivial agent (``echo ok``) and a 0.5 s agent (``sleep 0.5; echo ok``), at concurrency
  1, 4 and 8.
- ``startup``: ``trialbook eval`` of one trial (with and without the negative control that a first run
  adds) and ``trialbook --help`` as subprocesses, against
  ``python -c pass``, each from compiled bytecode (written once into a temporary cache) and compiling
  every module from source (``PYTHONDONTWRITEBYTECODE=1``, which some machines set).
- ``copy``: a 1,000-file template copied into a trial sandbox and removed again, against
  ``cp -a`` + ``rm -rf`` of the same template on the same filesystem.

"marginal ms/trial" is ``(wall(N) - wall(1)) / (N - 1)``: what one more trial costs once the run has
started, so the fixed cost of a run (planning, ``suite.json``) is left out; "CPU ms/trial" is the same
for the CPU time of the process and its children (the agents), which a machine's other load disturbs
far less than wall time. "efficiency" is the ideal
wall time (``ceil(N / concurrency) * 0.5 s``) over the actual one, for the 0.5 s agent. "x floor" is
trialbook's marginal cost over the floor's at the same concurrency. What each row writes stays on disk
until the last table is done (see ``KEEP``).

    uv run --frozen python -m benchmarks.harness_floor                 # 200 trials, 3 rounds
    uv run --frozen python -m benchmarks.harness_floor --trials 50 --rounds 1 --slow-concurrency 8
    uv run --frozen python -m benchmarks.harness_floor --profile 4     # cProfile of one 200-trial run
    uv run --frozen python -m benchmarks.harness_floor --scratch /dev/shm --slow-concurrency  # on tmpfs

``--scratch`` puts everything the rows write (the floor's folders, trialbook's results and sandboxes, the
copy table's template) on another filesystem: on tmpfs, the same rows show what the disk's file creation
costs each of them and what is left of the harness itself.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import cProfile
import json
import math
import os
import pstats
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

# Nothing of trialbook at module level: the floor's child process must not carry its imports in its RSS.
from benchmarks.startup import _time as time_command

SLEEP_S = 0.5
ROOT = Path(__file__).resolve().parents[1]
TRIALBOOK = Path(sys.executable).parent / "trialbook"


def _script(sleep: bool) -> str:
    return ("sleep 0.5; " if sleep else "") + "echo ok > out.txt"


async def _floor(trials: int, concurrency: int, sleep: bool, scratch: Path, shell: str) -> None:
    gate = asyncio.Semaphore(concurrency)
    script = _script(sleep)

    async def one() -> None:
        async with gate:
            folder = Path(tempfile.mkdtemp(dir=scratch))
            proc = await asyncio.create_subprocess_exec(shell, "-c", script, cwd=folder)
            await proc.wait()
            if "ok" not in (folder / "out.txt").read_text():
                raise RuntimeError("the floor's agent did not write ok")
            shutil.rmtree(folder)

    await asyncio.gather(*(one() for _ in range(trials)))


def floor(trials: int, concurrency: int, sleep: bool, scratch: Path, shell: str = "sh") -> float:
    """The naive floor's wall seconds for ``trials`` trials, the script run by ``shell``."""
    started = time.perf_counter()
    asyncio.run(_floor(trials, concurrency, sleep, scratch, shell))
    return time.perf_counter() - started


def bash_floor(trials: int, concurrency: int, sleep: bool, scratch: Path) -> float:
    """The floor with the script run by bash, as trialbook's script agent runs it (see ``MODES``)."""
    return floor(trials, concurrency, sleep, scratch, shutil.which("bash") or "bash")


def _eval_file(
    folder: Path, trials: int, sleep: bool, template: Path | None = None, *, control: bool = True
) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / ("bench.eval.yaml" if control else "bench-nocontrol.eval.yaml")
    sandbox = f"sandbox: {{template: {template}}}\n" if template else ""
    # Without history an eval's first run also runs its negative control: one more (noop) trial.
    no_control = "" if control else "negative_control: false\n"
    path.write_text(
        "prompt_text: write ok\n"
        f"agents: [{{name: bench, script: {json.dumps(_script(sleep))}}}]\n"
        f"trials: {trials}\n"
        f"{no_control}"
        f"{sandbox}"
        "assert:\n  - file_contains: {path: out.txt, pattern: ok}\n"
    )
    return path


CLEANUP: dict[str, str] = {}
"""How the last trialbook run in this process ended its trials' processes (``cgroup``, ``marker``)."""


def trialbook(trials: int, concurrency: int, sleep: bool, scratch: Path) -> float:
    """``trialbook.run``'s wall seconds for one eval of ``trials`` trials; every trial must pass."""
    from trialbook.runner import RunOptions, run

    folder = Path(tempfile.mkdtemp(dir=scratch))
    options = RunOptions(
        paths=(_eval_file(folder / "evals", trials, sleep),),
        concurrency=concurrency,
        unsafe_local=True,
        results_dir=folder / "results",
        environ={"PATH": os.environ.get("PATH", "/usr/bin:/bin")},
    )
    started = time.perf_counter()
    report = run(options)
    wall = time.perf_counter() - started
    outcomes = [outcome for result in report.results for outcome in result.outcomes]
    if len(outcomes) != trials or not all(outcome.passed for outcome in outcomes):
        raise RuntimeError(f"trialbook ran {len(outcomes)} of {trials} trials, not all passed")
    CLEANUP["mechanism"] = outcomes[0].process_cleanup
    # The results folder stays until ``scratch`` goes, after the CPU time is read: removing what a run
    # wrote is no part of the run (the floor's folders are its sandboxes, which trialbook removes too).
    return wall


MODES = {"floor": floor, "floor (bash)": bash_floor, "trialbook": trialbook, "no-cgroup": trialbook}
"""``no-cgroup`` is trialbook with ``TRIALBOOK_CGROUP=off``: the marker sweep alone (see docs/processes.md).

``floor (bash)`` is the floor running the same script with bash, the program trialbook's script agent
runs, where ``floor`` runs it with ``sh`` (dash on Debian, which starts in half bash's CPU time). Its
marginal cost less the ``floor``'s is the agent's own, which no harness can save; "x floor" is always
against ``floor``.

Where trialbook can make cgroups, each command it starts moves itself into its trial's group, and on
kernels whose cgroup2 mount lacks ``favordynmods`` that move waits for an RCU grace period (about
10 ms) unless another move happened just before: a 0.5 s agent pays it once per trial, a run of
trivial ones hardly at all. The mode shows what the cgroup costs and what the rest of the runner does.
"""


def _cpu() -> dict[str, float]:
    """CPU seconds so far: the main thread's (the event loop's), all of this process's, its children's."""
    mine, children = (resource.getrusage(who) for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN))
    return {
        "main": time.thread_time(),
        "self": mine.ru_utime + mine.ru_stime,
        "children": children.ru_utime + children.ru_stime,
    }


def _spent(start: dict[str, float], end: dict[str, float]) -> dict[str, float]:
    return {key: end[key] - start[key] for key in start}


KEEP = "TRIALBOOK_FLOOR_SCRATCH"
"""Where the rows' children leave their folders, which the benchmark removes only at its very end.

On an ext4 file system without a journal, every file or folder made scans past the inodes deleted in
the last minutes of its block group (the kernel's ``recently_deleted``). A row that removed the 1,000
files of its 200 results folders on its way out would make the next row's creates slower, the
floor's less than trialbook's (which writes each trial's transcripts): removing what a run wrote is
no part of any row, so it happens once, after the last table.
"""


@contextlib.contextmanager
def _scratch() -> Iterator[Path]:
    keep = os.environ.get(KEEP)
    if keep:
        yield Path(tempfile.mkdtemp(dir=keep))
        return
    with tempfile.TemporaryDirectory(prefix="trialbook-floor-") as tmp:
        yield Path(tmp)


def measure(mode: str, trials: int, concurrency: int, sleep: bool) -> dict[str, Any]:
    """In this (child) process: a warm-up trial, a 1-trial run, an N-trial run, CPU time and peak RSS.

    CPU is this process's and its children's (user + system): on a shared machine wall time mostly
    measures the neighbours, CPU time what the work itself cost.
    """
    if mode == "no-cgroup":
        os.environ["TRIALBOOK_CGROUP"] = "off"
    with _scratch() as scratch:
        run = MODES[mode]
        run(1, 1, False, scratch)  # imports and first-use costs, which a marginal cost leaves out
        before = _cpu()
        one = run(1, concurrency, sleep, scratch)
        middle = _cpu()
        many = run(trials, concurrency, sleep, scratch)
        after = _cpu()
    return {
        "cleanup": CLEANUP.get("mechanism", "—"),
        "one_s": one,
        "wall_s": many,
        "one_cpu_s": sum(_spent(before, middle)[k] for k in ("self", "children")),
        "cpu_s": sum(_spent(middle, after)[k] for k in ("self", "children")),
        "one_split_s": _spent(before, middle),
        "split_s": _spent(middle, after),
        "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


def copy_rounds(files: int, rounds: int) -> dict[str, Any]:
    """In this (child) process: sandbox template copies against ``cp -a`` + ``rm -rf``, interleaved."""
    from benchmarks.harness_overhead import make_template
    from trialbook.sandbox import create_sandbox

    with _scratch() as scratch:
        template = make_template(scratch / "template", files)
        ours: list[float] = []
        theirs: list[float] = []
        copy = "unknown"
        for _ in range(rounds):
            started = time.perf_counter()
            box = create_sandbox(
                root=scratch / "trials", template=template, shims=(), secrets={}, extra_env={}
            )
            copy = box.copy or "none"
            box.close()
            ours.append(time.perf_counter() - started)
            target = scratch / "cp-target"
            started = time.perf_counter()
            subprocess.run(["cp", "-a", str(template), str(target)], check=True)
            subprocess.run(["rm", "-rf", str(target)], check=True)
            theirs.append(time.perf_counter() - started)
    return {"ours": ours, "theirs": theirs, "copy": copy}


def _child(*args: str) -> Any:
    argv = [sys.executable, "-m", "benchmarks.harness_floor", "--child", *args]
    done = subprocess.run(argv, check=True, capture_output=True, text=True, cwd=ROOT)
    return json.loads(done.stdout)


def _cells(row: list[str], widths: list[int]) -> str:
    return " | ".join(f"{cell:>{width}}" for cell, width in zip(row, widths, strict=True))


def _runner_table(args: argparse.Namespace) -> None:
    print(
        "| agent | concurrency | mode | wall s | marginal ms/trial | CPU ms/trial | efficiency | x floor "
        "| peak RSS MiB |"
    )
    print("| --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    widths = [7, 3, 18, 7, 6, 6, 5, 5, 5]
    splits: list[list[str]] = []
    for sleep in (False, True):
        levels = args.slow_concurrency if sleep else args.concurrency
        for concurrency in levels:
            # The marker-only mode for the 0.5 s agent only where it answers the efficiency question
            # (concurrency 1 would add 100 s a round).
            # The bash floor only for the trivial agent, where the agent's own cost shows.
            modes = [
                m
                for m in MODES
                if (m != "no-cgroup" or not sleep or concurrency >= 4) and (m != "floor (bash)" or not sleep)
            ]
            results: dict[str, list[dict[str, Any]]] = {mode: [] for mode in modes}
            for round_ in range(args.rounds):
                order = modes if round_ % 2 == 0 else list(reversed(modes))
                for mode in order:
                    results[mode].append(
                        _child("run", mode, str(args.trials), str(concurrency), str(int(sleep)))
                    )
            marginals: dict[str, float] = {}
            for mode, runs in results.items():
                wall = statistics.median(r["wall_s"] for r in runs)
                one = statistics.median(r["one_s"] for r in runs)
                marginals[mode] = (wall - one) / (args.trials - 1) * 1000
                extra = [(r["cpu_s"] - r["one_cpu_s"]) / (args.trials - 1) * 1000 for r in runs]
                cpu = statistics.median(extra)
                ideal = math.ceil(args.trials / concurrency) * SLEEP_S
                cleanup = runs[0]["cleanup"]
                if mode == "no-cgroup" and cleanup != "marker":
                    continue  # this machine makes no cgroups: the same as the trialbook row
                row = [
                    "0.5 s" if sleep else "trivial",
                    str(concurrency),
                    f"{mode} ({cleanup})" if mode == "trialbook" else mode,
                    f"{wall:.2f}",
                    f"{marginals[mode]:.2f}",
                    f"{cpu:.2f}",
                    f"{ideal / wall:.3f}" if sleep else "—",
                    "1.0" if mode == "floor" else f"{marginals[mode] / marginals['floor']:.1f}",
                    f"{max(r['peak_rss_mib'] for r in runs):.1f}",
                ]
                print(f"| {_cells(row, widths)} |", flush=True)
                if not sleep:
                    splits.append([row[0], row[1], row[2], *_split(runs, args.trials)])
    _split_table(splits)


def _split(runs: list[dict[str, Any]], trials: int) -> list[str]:
    """The marginal CPU ms/trial of the event loop's thread, the worker threads and the agents."""

    def marginal(part: str) -> float:
        per_run = []
        for r in runs:
            many, one = r["split_s"], r["one_split_s"]
            if part == "workers":
                spent = (many["self"] - many["main"]) - (one["self"] - one["main"])
            else:
                spent = many[part] - one[part]
            per_run.append(float(spent) / (trials - 1) * 1000)
        return float(statistics.median(per_run))

    # The worker threads' share is the process's CPU less the loop thread's, marginal over two runs: with
    # the threads idle it is a difference of near-equal figures, whose rounding must not print as -0.00.
    return [f"{round(marginal(part), 2) + 0.0:.2f}" for part in ("main", "workers", "children")]


def _split_table(rows: list[list[str]]) -> None:
    """Where each trivial row's CPU goes: trialbook's event loop and worker threads run under one GIL."""
    if not rows:
        return
    print("\n| agent | concurrency | mode | event-loop thread CPU ms/trial | worker threads | agents |")
    print("| --- | ---: | --- | ---: | ---: | ---: |")
    for row in rows:
        print(f"| {_cells(row, [7, 3, 18, 6, 6, 6])} |", flush=True)


def _copy_table(args: argparse.Namespace) -> None:
    result = _child("copy", str(args.files), str(args.copy_rounds))
    ours = statistics.median(result["ours"]) * 1000
    theirs = statistics.median(result["theirs"]) * 1000
    print(f"\n| {args.files:,}-file template, median of {args.copy_rounds} | ms | x `cp -a` + `rm -rf` |")
    print("| --- | ---: | ---: |")
    print(f"| `cp -a` + `rm -rf` (floor) | {theirs:.1f} | 1.00 |")
    print(
        f"| trialbook sandbox (sandbox.copy: {result['copy']}) + removal | {ours:.1f} | {ours / theirs:.2f} |"
    )


def _startup_table() -> None:
    from benchmarks.startup import bytecode_envs

    with tempfile.TemporaryDirectory(prefix="trialbook-floor-") as tmp:
        eval_file = _eval_file(Path(tmp) / "evals", 1, False)
        one_trial = [str(TRIALBOOK), "eval", str(eval_file), "--unsafe-local", "--results-dir", f"{tmp}/r"]
        bare = _eval_file(Path(tmp) / "bare", 1, False, control=False)
        no_control = [str(TRIALBOOK), "eval", str(bare), "--unsafe-local", "--results-dir", f"{tmp}/b"]
        cases = {
            "floor: python -c pass": [sys.executable, "-c", "pass"],
            "trialbook --help": [str(TRIALBOOK), "--help"],
            "trialbook eval, one trial": one_trial,
            "the same without its negative control": no_control,
        }
        print("\n| startup (median of 7) | modules from | wall ms | CPU ms |")
        print("| --- | --- | ---: | ---: |")
        for how, env in bytecode_envs(f"{tmp}/pycache").items():
            for name, argv in cases.items():
                subprocess.run(argv, check=True, capture_output=True, env=env)  # writes the bytecode once
                wall, cpu = time_command(argv, env)
                print(f"| {name} | {how} | {wall:,.0f} | {cpu:,.0f} |")


def _profile(trials: int, concurrency: int) -> None:
    with tempfile.TemporaryDirectory(prefix="trialbook-floor-") as tmp:
        trialbook(1, 1, False, Path(tmp))
        profiler = cProfile.Profile()
        profiler.enable()
        wall = trialbook(trials, concurrency, False, Path(tmp))
        profiler.disable()
    print(f"{trials} trials at concurrency {concurrency}: {wall:.2f} s")
    pstats.Stats(profiler).sort_stats("cumulative").print_stats(40)


def _filesystem(path: str) -> str:
    """The type of the filesystem holding ``path``, from ``/proc/self/mounts`` (Linux); else ``unknown``."""
    best, kind = "", "unknown"
    real = os.path.realpath(path)
    with contextlib.suppress(OSError):
        for line in Path("/proc/self/mounts").read_text().splitlines():
            fields = line.split()
            if len(fields) < 3:
                continue
            mount = fields[1].replace("\\040", " ")
            inside = real == mount or real.startswith(mount.rstrip("/") + "/")
            if inside and len(mount) >= len(best):
                best, kind = mount, fields[2]
    return kind


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--trials", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=3, help="alternating rounds per row (median)")
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 4, 8])
    parser.add_argument("--slow-concurrency", type=int, nargs="*", default=[1, 4, 8])
    parser.add_argument("--files", type=int, default=1000)
    parser.add_argument("--copy-rounds", type=int, default=20)
    parser.add_argument("--profile", type=int, metavar="CONCURRENCY", help="profile one run instead")
    parser.add_argument(
        "--scratch", type=Path, help="the folder (so the filesystem) every row writes in; default: $TMPDIR"
    )
    parser.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.scratch:
        # Sandboxes go to the temp folder; children inherit it, so every row writes on that filesystem.
        os.environ["TMPDIR"] = str(args.scratch.resolve())
        tempfile.tempdir = None
    if args.child:
        kind, *rest = args.child
        if kind == "run":
            mode, trials, concurrency, sleep = rest
            print(json.dumps(measure(mode, int(trials), int(concurrency), sleep == "1")))
        else:
            print(json.dumps(copy_rounds(int(rest[0]), int(rest[1]))))
        return
    if args.profile:
        _profile(args.trials, args.profile)
        return
    where = tempfile.gettempdir()
    print(
        f"{args.trials} trials a run, median of {args.rounds} alternating rounds, {os.cpu_count()} CPUs, "
        f"writing in {where} ({_filesystem(where)})\n"
    )
    with tempfile.TemporaryDirectory(prefix="trialbook-floor-") as keep:
        os.environ[KEEP] = keep
        _runner_table(args)
        # Start-up before the copies: their 20,000 removed files would slow its creates (see KEEP).
        _startup_table()
        _copy_table(args)


if __name__ == "__main__":
    main()
