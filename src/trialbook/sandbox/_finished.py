"""A finished trial as assertions see it: the sandbox's call log, files and a shell, nothing outside it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path, PurePosixPath

from .._blocking import run_blocking
from ..assertions._trial import Call, CommandOutcome
from ..evidence import AgentResult
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

    def _inside(self, path: str) -> Path | None:
        rel = PurePosixPath(path)
        if rel.is_absolute() or ".." in rel.parts:
            raise ValueError(f"path {path!r} must be relative to the sandbox workdir, without '..'")
        candidate = self._workdir / rel
        root = self._workdir.resolve()
        resolved = candidate.resolve()
        if resolved != root and root not in resolved.parents:
            return None
        return candidate

    def read_text(self, path: str) -> str | None:
        """The text of ``path`` relative to the workdir, or ``None`` when it is not a readable file."""
        target = self._inside(path)
        if target is None:
            return None
        try:
            return target.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return None

    def exists(self, path: str) -> bool:
        """Whether ``path`` relative to the workdir exists (a symlink leading outside does not count)."""
        target = self._inside(path)
        return target is not None and target.exists()

    def run(self, command: str, timeout_s: float) -> CommandOutcome:
        """Run a shell command in the workdir with the trial's environment (shims first on ``PATH``)."""
        return run_command(
            command, cwd=self._workdir, env=self._env, timeout_s=timeout_s, capture=self._capture
        )
