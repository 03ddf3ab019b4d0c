"""History in a plain folder: ``<root>/<id>.jsonl``, for local use and for CI setups that keep files.

Appends use ``O_APPEND`` plus an exclusive ``flock`` and write a whole batch with one ``write`` call, so
several processes appending to the same file interleave whole batches, never half lines. A line already
in the file (the same bytes: lines carry a unique ``run_id``) is not written again, so recording one
run's lines twice, as a re-run publish job does, keeps them once. Atomic
replace (temp file + rename) is deliberately not used: two writers replacing the same file would drop
each other's lines, which append-only history must never do.
"""

from __future__ import annotations

import fcntl
import os
from collections import defaultdict
from collections.abc import Collection, Sequence
from pathlib import Path

from ._line import HistoryLine
from ._paths import SUFFIX, id_to_parts, parts_to_id
from ._protocol import SyncReport
from ._read import latest_line, parse_history

__all__ = ["DirectoryStore"]


class DirectoryStore:
    """History lines as JSONL files under ``root`` (created on first append)."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self._problems: list[str] = []

    @property
    def problems(self) -> list[str]:
        """Corrupt lines met while reading, each naming ``file:line``."""
        return list(self._problems)

    def path_for(self, eval_id: str) -> Path:
        """The file holding ``eval_id``'s lines."""
        return self.root.joinpath(*id_to_parts(eval_id))

    def append(self, lines: Sequence[HistoryLine]) -> None:
        """Append each id's lines that its file lacks with one locked write, then fsync."""
        batches: dict[str, list[bytes]] = defaultdict(list)
        for line in lines:
            batches[line.id].append(line.to_json_line().encode())
        for eval_id, texts in batches.items():
            _append_file(self.path_for(eval_id), texts)

    def read(self, eval_id: str) -> list[HistoryLine]:
        """Every valid line of ``eval_id``, in file order."""
        path = self.path_for(eval_id)
        data = _read_bytes(path)
        return parse_history(data, str(path), eval_id, self._problems) if data else []

    def latest(
        self,
        eval_id: str,
        agent: str,
        *,
        cache_key: str | None = None,
        verdicts: Collection[str] | None = None,
    ) -> HistoryLine | None:
        """The newest line of ``agent`` (with ``cache_key`` and one of ``verdicts``, when given)."""
        path = self.path_for(eval_id)
        data = _read_bytes(path)
        if not data:
            return None
        return latest_line(
            data, str(path), eval_id, agent, self._problems, cache_key=cache_key, verdicts=verdicts
        )

    def ids(self) -> list[str]:
        """Every id with a history file under ``root``."""
        if not self.root.is_dir():
            return []
        found: list[str] = []
        for path in self.root.rglob(f"*{SUFFIX}"):
            if path.is_file():
                eval_id = parts_to_id(path.relative_to(self.root).parts)
                if eval_id is not None:
                    found.append(eval_id)
        return sorted(found)

    def sync(self) -> SyncReport:
        """Nothing to share: the folder is the store."""
        return SyncReport(action="local-only")

    def close(self) -> None:
        """Nothing is held open between calls."""


def _read_bytes(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return b""


def _append_file(path: Path, lines: list[bytes]) -> None:
    created = not path.exists()
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        size = os.fstat(fd).st_size
        present = _read_all(fd, size)
        known = set(present.split(b"\n"))
        new = list(dict.fromkeys(line for line in lines if line not in known))
        if not new:
            return
        payload = b"\n".join(new) + b"\n"
        if size and not present.endswith(b"\n"):
            # A file cut short (or edited by hand) must not glue our first line onto its last one.
            payload = b"\n" + payload
        view = memoryview(payload)
        while view:
            view = view[os.write(fd, view) :]
        os.fsync(fd)
    finally:
        os.close(fd)  # closing also drops the flock
    if created:
        _fsync_dir(path.parent)


def _read_all(fd: int, size: int) -> bytes:
    chunks, offset = [], 0
    while offset < size:
        chunk = os.pread(fd, size - offset, offset)
        if not chunk:
            break
        chunks.append(chunk)
        offset += len(chunk)
    return b"".join(chunks)


def _fsync_dir(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
