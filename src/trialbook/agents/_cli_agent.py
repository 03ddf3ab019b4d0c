"""The part of an agent-CLI adapter that does not depend on which CLI it drives.

Claude Code and Codex read the same options, find and version their binary the same way, and run a
trial the same way up to the event stream: one process, its stdout lines masked and saved with its
stderr. Each adapter subclasses ``CliAgent`` and keeps only its own command line, isolation and parsing.
"""

from __future__ import annotations

import contextlib
import re
import shutil
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from .._util.fsutil import atomic_write_text
from ..evidence import AgentResult, StopReason, Turn
from ..masking import Masker
from ..sandbox import install_root
from ._cli_run import CliRun, run_cli
from ._cli_support import Options, find_binary, masker_for, probe_version
from ._npm_install import VERSION, installed_binary
from ._protocol import AgentSpec, AgentTask

__all__ = ["CliAgent", "LoggedRun", "failed_result", "stopped_outcome", "uncorrelated"]


@dataclass(frozen=True)
class LoggedRun:
    """One finished CLI run with its stdout lines already masked, and the masker used for the rest."""

    run: CliRun
    lines: tuple[str, ...]
    masker: Masker


class CliAgent:
    """Options, binary, version and the trial process shared by the adapters of npm agent CLIs.

    A subclass sets the class variables and reads its own options in ``_read_options``; that hook runs
    right after ``model`` so every option is still checked in the order the adapter lists it.
    """

    NAME: ClassVar[str]
    """The agent's name in eval files and evidence."""
    COMMAND: ClassVar[str]
    """The binary looked up on PATH; also the stem of the saved ``.jsonl`` and ``.stderr.log`` files."""
    PACKAGE: ClassVar[str]
    """The npm package to install when the binary is missing."""
    OPTIONS: ClassVar[tuple[str, ...]]
    """Every option the agent accepts."""
    VERSION_PATTERN: ClassVar[str]
    """Matches ``COMMAND --version`` output; its first group is the version."""
    SUPPORTS_ISOLATION: ClassVar[bool] = True
    """The CLI starts through ``run_cli`` with the task's isolation (docs/isolation.md)."""
    DEFAULT_NETWORK: ClassVar[str] = "host"
    """Under isolation, unless the eval says otherwise: what the CLI reaches besides its model is unknown."""

    def __init__(self, spec: AgentSpec) -> None:
        options = Options(spec, self.OPTIONS)
        self._model = options.string("model")
        self._read_options(options)
        self._audit_requests = options.flag("audit_requests")
        self._args = options.strings("args")
        self._binary_option = options.string("binary")
        self._version_option = options.string("version")
        if self._version_option is not None:
            if self._binary_option is not None:
                options.fail("version", "give either version (installed from npm) or binary, not both")
            if not re.fullmatch(VERSION, self._version_option):
                options.fail("version", "expected an exact release such as 2.1.197, or latest")
        self._env = options.env()

    def _read_options(self, options: Options) -> None:
        """Read the options only this agent has; none by default."""

    @property
    def name(self) -> str:
        """The agent's name (``NAME``)."""
        return self.NAME

    @property
    def model(self) -> str | None:
        """The ``model`` option as the CLI takes it (a name or an alias), ``None`` for its default."""
        return self._model

    def _binary(self) -> tuple[Path | None, str | None]:
        if self._version_option is not None:
            binary, _, problem = installed_binary(self.PACKAGE, self._version_option, self.COMMAND)
            return binary, problem
        return find_binary(self._binary_option, self.COMMAND, self.PACKAGE)

    def version(self) -> str | None:
        """``COMMAND --version``, memoised per binary file."""
        binary, _ = self._binary()
        if binary is None:
            return None
        return probe_version(binary, ["--version"], self.VERSION_PATTERN, {})

    async def _run_logged(
        self,
        task: AgentTask,
        argv: Sequence[str],
        env: Mapping[str, str],
        watch: Callable[[str], str | None],
        endpoint: str,
    ) -> LoggedRun:
        """Run one trial's process and save its masked stdout and stderr in the trial's output folder.

        ``endpoint`` is the URL the CLI sends its model requests to (the audit proxy's, when one runs):
        under ``network: model`` the only place it can reach.
        """
        # The run's masker, plus credentials this adapter found in the runner's environment itself.
        masker = masker_for(env, task.masker)
        isolation = task.isolation
        async with contextlib.AsyncExitStack() as stack:
            if isolation is not None:
                # The CLI's own installation stays visible (read-only) where a hidden place holds it.
                installed = tuple(install_root(Path(part)) for part in argv[:1]) + _node_roots()
                isolation = await stack.enter_async_context(isolation.for_agent(installed, (endpoint,)))
            run = await run_cli(
                argv, cwd=task.workdir, env=env, timeout_s=task.timeout_s, watch=watch,
                capture=task.streams.using(masker), name=self.COMMAND, isolation=isolation,
            )  # fmt: skip
        # Masked as JSON, value by value: masking the line's text could cut a JSON string short.
        lines = tuple(masker.json_line(line) for line in run.lines)
        out = task.output_dir
        atomic_write_text(out / f"{self.COMMAND}.jsonl", "".join(f"{line}\n" for line in lines))
        atomic_write_text(out / f"{self.COMMAND}.stderr.log", masker.text(run.stderr))
        return LoggedRun(run, lines, masker)

    async def aclose(self) -> None:
        """Nothing is shared across trials."""


def failed_result(name: str, error: str, task: AgentTask) -> AgentResult:
    """The evidence of a trial whose agent never started: only the prompt is known."""
    return AgentResult(
        agent_name=name,
        agent_version=None,
        success=False,
        error=error,
        stop_reason="execution_error",
        turns=(Turn("user", task.prompt),),
        working_directory=str(task.workdir),
    )


def stopped_outcome(name: str, run: CliRun, task: AgentTask) -> tuple[StopReason, str] | None:
    """How a run ended when trialbook stopped it (an early stop or the deadline), else ``None``.

    Both win over whatever the stream says: a run stopped early or killed at its deadline did not
    finish on its own, even when the CLI printed a result in the grace period after SIGTERM.
    """
    if run.aborted is not None:
        return "execution_error", f"{name}: {run.aborted}"
    if run.timed_out:
        return "timeout", f"{name} did not finish within {task.timeout_s:g} s; its processes were killed"
    return None


def uncorrelated(
    name: str, problems: Sequence[str], outcome: tuple[StopReason, str | None]
) -> tuple[StopReason, str | None]:
    """Fail a trial whose event stream did not correlate (a result for a call never made, and so on).

    The evidence of such a run cannot be trusted, so it is an error even when the agent says it finished;
    an error already found (a timeout, a failed turn) is kept, being the likelier cause.
    """
    if problems and outcome[1] is None:
        return "execution_error", f"{name}: the event stream did not correlate: {problems[0]}"
    return outcome


def _node_roots() -> tuple[Path, ...]:
    """Where the ``node`` the npm CLIs start with is installed (nvm keeps it under the home folder)."""
    node = shutil.which("node")
    return (install_root(Path(node)).parent,) if node is not None else ()
