"""One history writer process for the concurrency tests: append and sync N runs, then exit.

Run as ``python writer_script.py CLONE WRITER RUNS START_FILE``; waits for START_FILE so that every
writer starts pushing at about the same moment.
"""

from __future__ import annotations

import sys
import time
from datetime import UTC, datetime
from pathlib import Path

from trialbook.history import GitBranchStore, HistoryLine, format_started_at

IDS = ("shared", "group/shared two")


def main(clone: str, writer: str, runs: str, start_file: str) -> int:
    deadline = time.monotonic() + 60
    while not Path(start_file).exists():
        if time.monotonic() > deadline:
            return 3
        time.sleep(0.01)
    with GitBranchStore(Path(clone), max_attempts=1000) as store:
        for run in range(int(runs)):
            store.append([_line(IDS[run % 2], writer, run)])
            store.sync()
    return 0


def _line(eval_id: str, writer: str, run: int) -> HistoryLine:
    return HistoryLine(
        id=eval_id,
        agent=f"writer-{writer}",
        agent_version=None,
        model=None,
        prompt_sha256="0" * 64,
        cache_key="sha256:" + "1" * 64,
        trials=1,
        passed=1,
        pass_rate=1.0,
        threshold=1.0,
        verdict="pass",
        cost_usd=None,
        duration_s=None,
        started_at=format_started_at(datetime.now(UTC)),
        commit=None,
        trialbook_version="0.1.0",
        ci_run=None,
        extra={"run": run},
    )


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
