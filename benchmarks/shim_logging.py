"""How long a shim takes to log one call, by argument size and content.

Each row runs a stub shim once with one argument of the given size, so the time is a whole call: bash
start, JSON escaping, the locked append. ``floor`` runs ``bash -c true`` with the same argument (the
least any bash shim costs); ``shim`` is trialbook's shim. CPU time is reported beside wall time because
on a shared machine the wall time mostly measures the neighbours. Arguments over 128 KiB are not possible
on Linux (MAX_ARG_STRLEN), so 100 KB is the largest case that matters.

    uv run --frozen python benchmarks/shim_logging.py
"""

from __future__ import annotations

import resource
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from trialbook.sandbox import ShimConfig, create_sandbox
from trialbook.sandbox._shims import bash_path

CONTENTS = {"plain text": "a", "quotes": '"', "newlines": "\n", "control bytes": "\x01"}
SIZES = (1_000, 10_000, 50_000, 100_000)
REPEATS = 3


def _time(argv: list[str], env: dict[str, str], cwd: Path) -> tuple[float, float]:
    """Median wall and CPU milliseconds of one call (CPU: the child's user + system time)."""
    walls, cpus = [], []
    for _ in range(REPEATS):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        subprocess.run(argv, env=env, cwd=cwd, check=True)
        walls.append(time.perf_counter() - started)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return statistics.median(walls) * 1000, statistics.median(cpus) * 1000


def main() -> None:
    with tempfile.TemporaryDirectory() as scratch:
        shims = [ShimConfig("tool", "stub")]
        with create_sandbox(root=Path(scratch), template=None, shims=shims, secrets={}, extra_env={}) as box:
            print("| content | size | floor wall ms | floor CPU ms | shim wall ms | shim CPU ms |")
            print("| --- | ---: | ---: | ---: | ---: | ---: |")
            for content, char in CONTENTS.items():
                for size in SIZES:
                    argument = char * size
                    floor = _time([bash_path(), "-c", "true", "bash", argument], box.env, box.workdir)
                    shim = _time(["tool", argument], box.env, box.workdir)
                    box.call_log.write_bytes(b"")
                    cells = " | ".join(f"{ms:,.1f}" for ms in (*floor, *shim))
                    print(f"| {content} | {size:,} | {cells} |")


if __name__ == "__main__":
    main()
