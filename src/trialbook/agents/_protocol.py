"""The contract between the runner and an agent adapter.

An adapter is created once per run for one agent entry of an eval (name plus options), may be asked to
run many trials concurrently, and is closed at the end so shared resources (a CLI server) go away.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol, runtime_checkable

from ..evidence import AgentResult, DeclaredInput, JsonValue
from ..masking import Masker
from ..sandbox import IsolationBackend, OutputCapture

__all__ = ["Agent", "AgentFactory", "AgentSpec", "AgentTask", "Availability"]


@dataclass(frozen=True)
class Availability:
    """Whether an agent can run here; ``reason`` says what is missing and how to fix it."""

    ok: bool
    reason: str | None = None


@dataclass(frozen=True)
class AgentSpec:
    """An agent as an eval file names it: ``literal`` or ``{name: copilot, model: ..., env: {...}}``.

    ``options`` holds every key but ``name``, values as written (after ``{{ secrets.X }}`` rendering,
    which happens at run time, not here). ``source`` names where it was written, for error messages.
    """

    name: str
    options: Mapping[str, JsonValue] = field(default_factory=dict)
    source: str = "<command line>"


@dataclass(frozen=True, kw_only=True)
class AgentTask:
    """One trial handed to an adapter.

    ``env`` is the complete environment the agent's processes get: the sandbox's (shims first on PATH,
    isolated HOME, declared secrets) plus the agent entry's ``env``. Adapters add only the variables of
    the runner's own environment that they document (credentials, endpoints) and nothing else.
    ``output_dir`` is this trial's transcript folder: adapters write the agent's output there, masked with
    ``masker`` as it is written (the run's masker, holding every secret of the run), so a run stopped
    mid-trial leaves nothing unmasked in it. ``inputs`` are the eval's instruction files and skills, already
    placed in ``workdir``: an adapter that audits its requests decides from them which reached the model
    (``AgentResult.instructions_loaded``); one that cannot leaves that to the runner, which records ``null``.
    ``capture`` bounds and masks the streams an adapter reads (pass :attr:`streams` to
    :func:`~trialbook.sandbox.process.run_process`); what it had to cut becomes ``output_truncated``.
    """

    prompt: str
    workdir: Path
    home: Path
    env: Mapping[str, str]
    output_dir: Path
    timeout_s: float | None = None
    max_cost_usd: float | None = None
    eval_id: str = ""
    trial: int = 1
    masker: Masker = field(default_factory=Masker)
    inputs: tuple[DeclaredInput, ...] = ()
    capture: OutputCapture | None = None
    isolation: IsolationBackend | None = None
    """Where set, every process the adapter starts for the trial runs inside it (pass it to
    :func:`~trialbook.sandbox.process.run_process`); ``None``: as the runner's user, as before."""

    @property
    def streams(self) -> OutputCapture:
        """``capture``, or (for a task built without one) the default limit with this task's masker."""
        return self.capture if self.capture is not None else OutputCapture(masker=self.masker)


@runtime_checkable
class Agent(Protocol):
    """What every adapter provides. Fields an agent cannot report stay ``None`` in its results."""

    @property
    def name(self) -> str:
        """The agent's name as eval files write it."""
        ...

    @property
    def model(self) -> str | None:
        """The model asked for, or ``None`` for the agent's default; part of the cache key."""
        ...

    def available(self) -> Availability:
        """Check cheaply, before any trial, that the agent can run (binary found, credentials present)."""
        ...

    def version(self) -> str | None:
        """The agent's version, memoised; part of the cache key so an upgrade re-runs evals."""
        ...

    async def run(self, task: AgentTask) -> AgentResult:
        """Run one trial. Must return a result (with ``success=False``) rather than raise for agent failures.

        The runner enforces ``task.timeout_s`` too: on cancellation an adapter must stop every process it
        started before re-raising.
        """
        ...

    async def aclose(self) -> None:
        """Release what the adapter shares across trials. Called once, after the last trial."""
        ...


class AgentFactory(Protocol):
    """Builds an adapter from an eval file's agent entry, raising ``ConfigError`` for bad options."""

    def __call__(self, spec: AgentSpec) -> Agent: ...
