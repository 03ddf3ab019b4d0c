"""A finished trial as assertions see it: the sandbox's call log, files and a shell, nothing outside it."""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping, Sequence
from pathlib import Path, PurePosixPath

from .._util.blocking import run_blocking
from ..evidence import AgentResult, Call, CommandOutcome
from ._capture import OutputCapture
from ._shims import bash_path
from .process import ProcessOutcome, run_process

__all__ = ["SandboxTrial", "run_command"]


def run_command(
    command: str,
    *,
    cwd: Path,
    env: Mapping[str, str],
    timeout_s: float,
    capture: OutputCapture | None = None,
) -> CommandOutcome:
    """Run ``command`` with ``bash -c`` and wait; on timeout its whole process group is killed.

    Its output (stdout and stderr together) is masked and cut like an agent's, recorded in ``capture``
    as ``check-1``, ``check-2``, … in the order commands ran.
    """
    capture = capture if capture is not None else OutputCapture()
    argv = [bash_path(), "-c", command]
    name = capture.name_for("check")
    running = run_process(
        argv, cwd=cwd, env=env, timeout_s=timeout_s, merge_stderr=True, capture=capture, name=name
    )
    outcome: ProcessOutcome = run_blocking(running)
    return CommandOutcome(
        exit_code=outcome.returncode,
        output=outcome.stdout.decode("utf-8", errors="replace"),
        timed_out=outcome.timed_out,
    )


_READ_FLAGS = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | getattr(os, "O_NOFOLLOW", 0)
"""How checks open a file: never waiting on a FIFO, never following a link in the last component."""


def _read_regular(path: str) -> bytes | None:
    """The bytes of the regular file at ``path``; ``None`` for anything else or when it cannot be read.

    One descriptor, one ``fstat`` and the reads: no buffered file object around them. The caller
    walked or resolved ``path`` to a file that is no symlink, so a last component swapped for one since
    fails to open and reads as missing.
    """
    try:
        fd = os.open(path, _READ_FLAGS)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        chunks = []
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
        return b"".join(chunks)
    except OSError:
        return None
    finally:
        os.close(fd)


class SandboxTrial:
    """The sandbox's implementation of :class:`trialbook.assertions.FinishedTrial`.

    Paths given to :meth:`read_text` and :meth:`exists` are relative to the workdir. Absolute paths and
    ``..`` are refused with ``ValueError`` (an eval that names them is wrong); a symlink that leads out of
    the workdir reads as missing, so an agent cannot make a check look at the runner's files.
    """

    def __init__(
        self,
        *,
        workdir: Path,
        env: Mapping[str, str],
        result: AgentResult,
        calls: Sequence[Call],
        call_log_problems: Sequence[str] = (),
        capture: OutputCapture | None = None,
    ) -> None:
        self._workdir = workdir
        self._env = dict(env)
        self._result = result
        self._calls = tuple(calls)
        self.call_log_problems = tuple(call_log_problems)
        self._capture = capture
        self._real: Path | None = None

    @property
    def calls(self) -> Sequence[Call]:
        """Every shimmed call of this trial, in the order they started."""
        return self._calls

    @property
    def workdir(self) -> Path:
        """The sandbox folder the agent worked in."""
        return self._workdir

    @property
    def result(self) -> AgentResult:
        """The agent's evidence for this trial."""
        return self._result

    def _inside(self, path: str) -> tuple[str, os.stat_result | None] | None:
        """The real path to open for ``path`` and, when known, its ``lstat``; ``None`` when there is none.

        ``None`` stands for missing and for leading outside alike. The common case costs one ``lstat`` per
        component: when none is a symlink the path cannot leave the workdir (``..`` is refused), and a
        missing one means nothing under it exists. Only a path through a symlink is resolved, and
        compared with the workdir's real path, its own last name unfollowed (see :meth:`_root`).
        """
        rel = PurePosixPath(path)
        if rel.is_absolute() or ".." in rel.parts:
            raise ValueError(f"path {path!r} must be relative to the sandbox workdir, without '..'")
        current = os.fspath(self._workdir)
        for part in ("", *rel.parts):  # "": the workdir itself, which the agent could have replaced
            if part:
                current = f"{current}/{part}"
            try:
                info = os.lstat(current)
            except (FileNotFoundError, NotADirectoryError):
                return None
            except OSError:
                break
            if stat.S_ISLNK(info.st_mode):
                break
        else:
            return current, info
        root = self._root()
        resolved = Path(root, rel).resolve()
        if resolved != root and root not in resolved.parents:
            return None
        return os.fspath(resolved), None

    def _root(self) -> Path:
        """The workdir's real path, resolved once: its folder resolved, its own name not followed.

        A workdir the agent swapped for a symlink (it can write to the sandbox folder) then leads
        outside, wherever the link points.
        """
        if self._real is None:
            self._real = self._workdir.parent.resolve() / self._workdir.name
        return self._real

    def read_text(self, path: str) -> str | None:
        """The text of ``path`` relative to the workdir, or ``None`` when it is not a readable file.

        Only a regular file is read: a FIFO, socket or device left in the workdir reads as missing and
        is never waited on (``O_NONBLOCK``). Line endings read as a Python text file reads them.
        """
        found = self._inside(path)
        if found is None:
            return None
        target, info = found
        if info is not None and not stat.S_ISREG(info.st_mode):
            return None
        data = _read_regular(target)
        if data is None:
            return None
        text = data.decode("utf-8", errors="replace")
        return text.replace("\r\n", "\n").replace("\r", "\n") if "\r" in text else text

    def exists(self, path: str) -> bool:
        """Whether ``path`` relative to the workdir exists (a symlink leading outside does not count)."""
        found = self._inside(path)
        if found is None:
            return False
        target, info = found
        return info is not None or os.path.exists(target)

    def run(self, command: str, timeout_s: float) -> CommandOutcome:
        """Run a shell command in the workdir with the trial's environment (shims first on ``PATH``)."""
        return run_command(
            command, cwd=self._workdir, env=self._env, timeout_s=timeout_s, capture=self._capture
        )
