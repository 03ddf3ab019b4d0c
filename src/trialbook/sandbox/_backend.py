"""Isolation backends behind one protocol, registered by name; the runner and agents know only the protocol.

``none`` is no backend: the trial's processes run as the runner's user (``AgentTask.isolation`` is
``None``). Every other name in :data:`ISOLATION_BACKENDS` makes the backend for a run's settings; ``auto``
takes the first of them that can run here (``runner/_isolation``). A container backend is one more entry.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Protocol

from ..evidence import OutsideWrite, RefusedConnection
from ._covers import ShimCover
from ._isolation import Isolation

__all__ = ["ISOLATIONS", "ISOLATION_BACKENDS", "NETWORKS", "BackendFactory", "IsolationBackend"]

NETWORKS = ("host", "model", "none")


class IsolationBackend(Protocol):
    """One trial's isolation: how its commands start, and what it saw them do."""

    @property
    def root(self) -> Path:
        """The trial's own folder, the one place on the host the backend keeps the trial's state."""

    @property
    def network(self) -> str:
        """``host``, ``model`` or ``none`` (docs/isolation.md#network)."""

    def problem(self) -> str | None:
        """Why it cannot run on this machine with this network, with the fix; ``None`` when it can."""

    def in_trial(self, root: Path, shims: tuple[ShimCover, ...]) -> IsolationBackend:
        """The backend for the trial whose folder is ``root`` and whose shims are ``shims``."""

    def for_agent(
        self, expose: Sequence[Path], endpoints: Sequence[str]
    ) -> AbstractAsyncContextManager[IsolationBackend]:
        """While the agent runs: its installation shown read-only and its model ``endpoints`` reachable."""

    def wrap(self, argv: Sequence[str], cwd: Path, env: Mapping[str, str]) -> list[str]:
        """The command line to start instead of ``argv`` (run with ``env`` in ``cwd``) inside the trial."""

    def outside_writes(self) -> tuple[OutsideWrite, ...] | None:
        """What the trial wrote outside its project folder, once its processes ended; ``None``: unwatched."""

    def network_refused(self) -> tuple[RefusedConnection, ...] | None:
        """The connections its network refused; ``None`` when nothing watched."""


class BackendFactory(Protocol):
    """Makes a backend for a run: the host's places to hide and the network policy."""

    def __call__(self, *, hide: tuple[Path, ...], network: str) -> IsolationBackend:
        """The backend, not yet bound to a trial's folder (see :meth:`IsolationBackend.in_trial`)."""


ISOLATION_BACKENDS: dict[str, BackendFactory] = {"bwrap": Isolation}
"""The backends by name, in the order ``auto`` tries them."""

ISOLATIONS = ("auto", "none", *ISOLATION_BACKENDS)
