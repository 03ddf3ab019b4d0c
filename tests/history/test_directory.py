"""DirectoryStore: <dir>/<id>.jsonl appended with O_APPEND + flock by many processes."""

from __future__ import annotations

import json
import logging
import subprocess
import sys
from pathlib import Path

import pytest

from trialbook.history import DirectoryStore

from .helpers import line


def test_round_trip_layout_and_ids(tmp_path: Path) -> None:
    store = DirectoryStore(tmp_path / "hist")
    written = [line("setup/neon", minutes=1), line("a b"), line("setup/neon", "copilot", minutes=2)]
    store.append(written)
    assert (tmp_path / "hist" / "setup" / "neon.jsonl").read_text().splitlines() == [
        written[0].to_json_line(),
        written[2].to_json_line(),
    ]
    assert (tmp_path / "hist" / "a%20b.jsonl").is_file()
    assert store.read("setup/neon") == [written[0], written[2]]
    assert store.ids() == ["a b", "setup/neon"]
    assert store.sync().action == "local-only"
    assert DirectoryStore(tmp_path / "none").ids() == []
    assert DirectoryStore(tmp_path / "none").read("x") == []


def test_latest_is_by_started_at_per_agent(tmp_path: Path) -> None:
    store = DirectoryStore(tmp_path)
    newest = line("x", "copilot", minutes=50)
    store.append([line("x", "copilot", minutes=5), newest, line("x", "copilot", minutes=7)])
    store.append([line("x", "literal", minutes=99)])
    assert store.latest("x", "copilot") == newest
    assert store.latest("x", "codex") is None
    assert store.latest("nope", "copilot") is None


def test_latest_reads_hand_written_lines_in_any_key_order(tmp_path: Path) -> None:
    store = DirectoryStore(tmp_path)
    spaced = line("x", "copilot", minutes=9)
    reordered = json.dumps(dict(reversed(list(spaced.to_json().items()))))
    store.append([line("x", "copilot", minutes=1)])
    with (tmp_path / "x.jsonl").open("a") as handle:
        handle.write(reordered + "\n")
    assert store.latest("x", "copilot") == spaced


def test_bad_lines_are_skipped_with_a_warning(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    store = DirectoryStore(tmp_path)
    good = line("x")
    (tmp_path / "x.jsonl").write_text(
        good.to_json_line() + "\n{broken\n" + line("other").to_json_line() + "\n\n"
    )
    later = line("x", minutes=3)
    with caplog.at_level(logging.DEBUG, logger="trialbook.history"):
        store.append([later])
        assert store.read("x") == [good, later]
        assert store.read("x") == [good, later]
        store.latest("x", good.agent)
    path = tmp_path / "x.jsonl"
    assert f"{path}:2: not valid JSON" in caplog.text
    # Read three times, reported once: front ends print the store's problems, and logging stays quiet
    # (below WARNING) so nothing is printed twice.
    assert [p.split(": ", 1)[0] for p in store.problems] == [f"{path}:2", f"{path}:3"]
    assert all(record.levelno < logging.WARNING for record in caplog.records)
    assert "{broken" in path.read_text()  # reported, never deleted


def test_a_file_without_final_newline_gets_one_before_the_append(tmp_path: Path) -> None:
    store = DirectoryStore(tmp_path)
    first, second = line("x"), line("x", minutes=1)
    (tmp_path / "x.jsonl").write_text(first.to_json_line())
    store.append([second])
    assert store.read("x") == [first, second]


def test_processes_appending_at_once_keep_whole_lines(tmp_path: Path) -> None:
    code = (
        "import sys\n"
        "from pathlib import Path\n"
        "from trialbook.history import DirectoryStore\n"
        "from tests.history.helpers import line\n"
        "store = DirectoryStore(Path(sys.argv[1]))\n"
        "pad = {'pad': 'z' * 5000}\n"
        "for i in range(50):\n"
        "    store.append([line('x', f'p{sys.argv[2]}', minutes=i, extra=pad) for _ in 'abc'])\n"
    )
    root = Path(__file__).parents[2]
    procs = [
        subprocess.Popen([sys.executable, "-c", code, str(tmp_path), str(n)], cwd=root) for n in range(4)
    ]
    assert [proc.wait(timeout=300) for proc in procs] == [0, 0, 0, 0]
    store = DirectoryStore(tmp_path)
    assert len(store.read("x")) == 4 * 50 * 3
    assert store.problems == []
