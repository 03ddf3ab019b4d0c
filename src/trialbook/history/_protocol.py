"""What every history store offers, what a sync reports, and the errors a store raises."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Literal, Protocol, runtime_checkable

from trialbook.errors import ExitCode, TrialbookError

from ._line import HistoryLine

__all__ = ["HistoryAuthError", "HistoryError", "HistoryPushError", "HistoryStore", "SyncAction", "SyncReport"]

SyncAction = Literal[
    "local-only", "nothing", "up-to-date", "fast-forwarded", "pushed", "merged-and-pushed", "not-pushed"
]


@dataclass(frozen=True, kw_only=True)
class SyncReport:
    """What ``sync()`` did.

    Attributes:
        action: ``local-only`` (a store without a remote), ``nothing`` (no history anywhere yet),
            ``up-to-date``, ``fast-forwarded`` (took the remote's lines), ``pushed``,
            ``merged-and-pushed`` (the remote had moved; lines were united first), or ``not-pushed``
            (the local branch holds lines the remote lacks and pushing is off).
        attempts: fetch/push rounds used; more than 1 means other writers were pushing at once.
        merges: union-merge commits made.
        tip: the branch tip after the sync (hex), ``None`` for a store without commits.
    """

    action: SyncAction
    attempts: int = 0
    merges: int = 0
    tip: str | None = None


class HistoryError(TrialbookError):
    """History could not be stored or shared. The run's own verdicts stay valid."""

    exit_code = ExitCode.FAILED


class HistoryPushError(HistoryError):
    """Pushing the history branch kept failing; the lines stay committed on the local branch."""


class HistoryFetchError(HistoryError):
    """The history branch could not be fetched (the remote was unreachable, too slow, or refused)."""


class HistoryAuthError(HistoryError):
    """The remote refused the credentials trialbook had (or it had none)."""


@runtime_checkable
class HistoryStore(Protocol):
    """Append-only storage of history lines, one file per eval id."""

    def append(self, lines: Sequence[HistoryLine]) -> None:
        """Store ``lines`` after the existing ones; never rewrites or drops a stored line."""
        ...

    def read(self, eval_id: str) -> list[HistoryLine]:
        """Every valid line of ``eval_id`` in file order; corrupt lines are reported and skipped."""
        ...

    def latest(
        self,
        eval_id: str,
        agent: str,
        *,
        cache_key: str | None = None,
        verdicts: Collection[str] | None = None,
    ) -> HistoryLine | None:
        """The line of ``agent`` for ``eval_id`` with the greatest ``started_at``.

        With ``cache_key`` (and ``verdicts``), the newest line carrying that key (and one of those
        verdicts): the content-addressed cache lookup, whichever ref recorded the line.
        """
        ...

    def ids(self) -> list[str]:
        """Every eval id that has a history file, sorted."""
        ...

    def sync(self) -> SyncReport:
        """Share lines with the remote (fetch, union-merge, push); a no-op for local stores."""
        ...

    def close(self) -> None:
        """Release what the store holds (temporary refs, open repositories)."""
        ...

    @property
    def problems(self) -> list[str]:
        """Corrupt lines met while reading, each naming ``file:line``; for the run's summary."""
        ...
