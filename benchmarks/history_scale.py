"""How the git-branch history store scales: 1,000 eval ids holding 100,000 lines.

Measures, against a bare remote reached by path (compare-and-swap push) and through ``git daemon``:
the first fetch a fresh CI clone pays, append + sync of one line, of one line for each of 100 ids and
of one line for each of the 1,000 ids (one run over every eval), and ``latest()`` for all 1,000 ids.

Run: ``uv run --frozen python benchmarks/history_scale.py [--ids 1000] [--lines-per-id 100]``
"""

from __future__ import annotations

import argparse
import os
import signal
import socket
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

from trialbook.history import GitBranchStore, HistoryLine, format_started_at

T0 = datetime(2025, 1, 1, tzinfo=UTC)
AGENTS = ("literal", "copilot", "claude-code")


def make_line(eval_id: str, n: int) -> HistoryLine:
    return HistoryLine(
        id=eval_id,
        agent=AGENTS[n % len(AGENTS)],
        agent_version="1.0." + str(n // 30),
        model=None,
        prompt_sha256=f"{n:064x}",
        cache_key=f"sha256:{n:064x}",
        trials=3,
        passed=3 if n % 7 else 2,
        pass_rate=1.0 if n % 7 else 2 / 3,
        threshold=0.67,
        verdict="pass",
        cost_usd=0.12 if n % 2 else None,
        duration_s=42.5,
        started_at=format_started_at(T0 + timedelta(hours=n)),
        commit="0" * 40,
        trialbook_version="0.1.0",
        ci_run="https://github.com/o/r/actions/runs/123",
    )


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, env=_env(cwd))


def _env(cwd: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(
        GIT_CONFIG_NOSYSTEM="1",
        GIT_AUTHOR_NAME="bench",
        GIT_AUTHOR_EMAIL="bench@example.com",
        GIT_COMMITTER_NAME="bench",
        GIT_COMMITTER_EMAIL="bench@example.com",
    )
    return env


def timed(action: Callable[[], object]) -> float:
    start = time.perf_counter()
    action()
    return (time.perf_counter() - start) * 1000


def start_daemon(root: Path) -> tuple[subprocess.Popen[bytes], int]:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = int(sock.getsockname()[1])
    proc = subprocess.Popen(
        ["git", "daemon", "--reuseaddr", f"--base-path={root}", "--export-all", "--enable=receive-pack",
         "--listen=127.0.0.1", f"--port={port}", str(root)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
    )  # fmt: skip
    for _ in range(200):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return proc, port
        except OSError:
            time.sleep(0.05)
    raise RuntimeError("git daemon did not start")


def clone(base: Path, bare: Path, name: str, url: str) -> Path:
    work = base / name
    # --no-local: a path clone would hard-link every object, hiding what a CI clone must fetch.
    git(base, "clone", "-q", "--no-local", "--single-branch", "-b", "main", str(bare), str(work))
    git(work, "remote", "set-url", "origin", url)
    return work


def measure(
    base: Path, bare: Path, url: str, label: str, ids: list[str], rows: list[tuple[str, str]]
) -> None:
    work = clone(base, bare, f"clone-{label}", url)
    counter = iter(range(10**6, 10**7))
    with GitBranchStore(work) as store:
        rows.append((f"{label}: first sync (fetch all history)", f"{timed(store.sync):.0f} ms"))

        def run(batch: list[str]) -> None:
            store.append([make_line(eval_id, next(counter)) for eval_id in batch])
            store.sync()

        def timed_run(batch: list[str]) -> float:
            return timed(lambda: run(batch))

        one = [timed_run([eval_id]) for eval_id in ids[:10]]
        rows.append((f"{label}: append+push 1 line (median of 10)", f"{statistics.median(one):.0f} ms"))
        hundred = [timed_run(ids[k * 100 : (k + 1) * 100]) for k in range(3)]
        rows.append((f"{label}: append+push 100 ids (median of 3)", f"{statistics.median(hundred):.0f} ms"))
        rows.append((f"{label}: append+push all {len(ids)} ids", f"{timed_run(ids):.0f} ms"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--ids", type=int, default=1000)
    parser.add_argument("--lines-per-id", type=int, default=100)
    args = parser.parse_args()
    ids = [f"group-{i % 20:02d}/eval-{i:04d}" for i in range(args.ids)]
    rows: list[tuple[str, str]] = []
    with tempfile.TemporaryDirectory(prefix="trialbook-bench-") as tmp:
        base = Path(tmp)
        served = base / "served"
        served.mkdir()
        bare = served / "origin.git"
        git(base, "init", "--bare", "-q", "-b", "main", str(bare))
        seed = base / "seed"
        git(base, "init", "-q", "-b", "main", str(seed))
        (seed / "README.md").write_text("bench\n")
        git(seed, "add", "README.md")
        git(seed, "commit", "-q", "-m", "seed")
        git(seed, "remote", "add", "origin", str(bare))
        git(seed, "push", "-q", "origin", "main")
        lines = [make_line(eval_id, n) for n in range(args.lines_per_id) for eval_id in ids]
        with GitBranchStore(seed) as store:
            rows.append(
                (
                    f"seed: append {len(lines):,} lines in one commit",
                    f"{timed(lambda: store.append(lines)):.0f} ms",
                )
            )
            rows.append(("seed: first push", f"{timed(store.sync):.0f} ms"))
            latest = timed(lambda: [store.latest(eval_id, "copilot") for eval_id in ids])
            rows.append(
                (f"latest() for all {len(ids)} ids", f"{latest:.0f} ms ({latest / len(ids):.2f} ms each)")
            )
            rows.append(
                (f"read() for all {len(ids)} ids", f"{timed(lambda: [store.read(i) for i in ids]):.0f} ms")
            )
            rows.append(("ids()", f"{timed(store.ids):.0f} ms"))
        measure(base, bare, str(bare), "path remote", ids, rows)
        daemon, port = start_daemon(served)
        try:
            measure(base, bare, f"git://127.0.0.1:{port}/origin.git", "git daemon", ids, rows)
        finally:
            os.killpg(daemon.pid, signal.SIGTERM)
            daemon.wait(timeout=10)
    width = max(len(name) for name, _ in rows)
    print(f"{'measurement'.ljust(width)}  time")
    print(f"{'-' * width}  ----")
    for name, value in rows:
        print(f"{name.ljust(width)}  {value}")


if __name__ == "__main__":
    main()
