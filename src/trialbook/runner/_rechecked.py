"""A recorded trial as checks see it again: the rebuilt sandbox, the call log and the result read back.

Every read goes through :class:`RecheckedTrial`, which refuses what the record cannot answer exactly
as the original trial would have: a file kept masked or past a limit, a path ``sandbox.exclude`` left
out of the record, a result or call log a secret was masked in, and any command (``succeeds``), whose
needs beyond the workdir (tools installed elsewhere, the agent's home) were never recorded. A refused
check makes the trial ``not_rescorable`` with the reason, never a pass or a fail.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path, PurePosixPath
from typing import NoReturn

from ..assertions import Assertion, Call, CommandOutcome, JudgeAsker, check_one, unfinished
from ..evidence import AgentResult, AssertionRecord
from ..sandbox import Rebuilt, SandboxTrial, TemplateFilter

__all__ = ["NotRescorable", "RecheckedTrial", "recheck"]

COMMAND_REASON = (
    "it runs a command, and what a command needs beyond the recorded workdir (tools installed elsewhere, "
    "the agent's home folder) is not recorded"
)


class NotRescorable(Exception):
    """A check asked the recorded trial for something it cannot answer exactly."""


class RecheckedTrial:
    """:class:`trialbook.assertions.FinishedTrial` over a rebuilt sandbox and a read-back record.

    ``refused`` lists every refusal in order, also one a check caught and swallowed itself.
    """

    def __init__(
        self,
        inner: SandboxTrial,
        rebuilt: Rebuilt,
        keep: TemplateFilter,
        *,
        result_masked: bool,
        calls_masked: bool,
    ) -> None:
        self._inner = inner
        self._rebuilt = rebuilt
        self._keep = keep
        self._result_masked = result_masked
        self._calls_masked = calls_masked
        self.refused: list[str] = []

    def _refuse(self, why: str) -> NoReturn:
        self.refused.append(why)
        raise NotRescorable(why)

    @property
    def calls(self) -> Sequence[Call]:
        """The recorded calls, unless a secret was masked in them."""
        if self._calls_masked:
            self._refuse("the call log held a secret and is kept masked")
        return self._inner.calls

    @property
    def workdir(self) -> Path:
        """The rebuilt workdir, when every path of it is as the agent left it."""
        if not self._rebuilt.complete:
            why = (*self._rebuilt.problems, *self._rebuilt.missing.values())[0]
            self._refuse(f"the check reads the sandbox folder itself, and not all of it is recorded: {why}")
        return self._inner.workdir

    @property
    def result(self) -> AgentResult:
        """The recorded result, unless a secret was masked in it."""
        if self._result_masked:
            self._refuse("the agent's result held a secret and is kept masked")
        return self._inner.result

    def _known(self, path: str) -> None:
        """Refuse ``path`` unless the record says exactly what the agent left there."""
        if self._rebuilt.problems:
            self._refuse(f"{path}: {self._rebuilt.problems[0]}")
        parts = [part for part in PurePosixPath(path).parts if part not in (".", "/")]
        if not parts or ".." in parts or PurePosixPath(path).is_absolute():
            return  # not a path inside the workdir: the check fails on it as it did in the trial
        rel = "/".join(parts)
        if not self._keep.kept(rel, is_dir=False) or not self._keep.kept(rel, is_dir=True):
            self._refuse(f"{path} is left out of the record (sandbox.exclude, .git, .trialbook)")
        root = os.path.realpath(self._inner.workdir)
        resolved = os.path.relpath(os.path.realpath(os.path.join(root, rel)), root)
        for candidate in {rel, resolved}:
            for missing, why in self._rebuilt.missing.items():
                if candidate == missing or candidate.startswith(missing + "/"):
                    self._refuse(f"{path}: {missing}: {why}")

    def read_text(self, path: str) -> str | None:
        """The rebuilt file's text, when the record holds it exactly."""
        self._known(path)
        return self._inner.read_text(path)

    def exists(self, path: str) -> bool:
        """Whether the path exists in the rebuilt sandbox, when the record says so exactly."""
        self._known(path)
        return self._inner.exists(path)

    def run(self, command: str, timeout_s: float) -> CommandOutcome:
        """Refused: see :data:`COMMAND_REASON`."""
        self._refuse(COMMAND_REASON)


def recheck(
    assertions: Sequence[Assertion], trial: RecheckedTrial, judges: JudgeAsker | None = None
) -> tuple[tuple[AssertionRecord, ...], tuple[str, ...]]:
    """Every assertion's record over ``trial``, and why the trial is not re-scorable (empty: it is).

    A check that raises for any other reason fails with the error, as it would have in the trial.
    ``judge`` checks ask ``judges`` again (answers to an unchanged input come from the cache).
    """
    records: list[AssertionRecord] = []
    reasons: list[str] = []
    for assertion in assertions:
        before = len(trial.refused)
        try:
            record = check_one(assertion, trial, judges)
        except NotRescorable:
            record = None
        except Exception as exc:
            record = unfinished(assertion, "the check could not run", f"{type(exc).__name__}: {exc}")
        if len(trial.refused) > before:
            reasons.append(f"{assertion.label}: {trial.refused[before]}")
        elif record is not None:
            records.append(record)
    return tuple(records), tuple(reasons)
