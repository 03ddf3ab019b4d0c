"""An isolation backend is one entry in the registry: the runner runs trials under it without knowing it."""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import AsyncIterator, Mapping, Sequence
from pathlib import Path

import pytest

from tests.runner.local import run_local, write_script_eval
from trialbook.errors import RefusedRunError
from trialbook.evidence import OutsideWrite, RefusedConnection
from trialbook.runner import RunReport
from trialbook.sandbox import ISOLATION_BACKENDS
from trialbook.sandbox._covers import ShimCover

FAKE_WRITE = OutsideWrite(path="/etc/fake", size=1, removed=False)


@dataclasses.dataclass(frozen=True)
class EnvBackend:
    """Starts the trial's commands with ``FOO=1`` and reports one write outside that no one made."""

    hide: tuple[Path, ...]
    network: str
    root: Path = Path("/")
    refuse: str | None = None

    def problem(self) -> str | None:
        return self.refuse

    def in_trial(self, root: Path, shims: tuple[ShimCover, ...]) -> EnvBackend:
        return dataclasses.replace(self, root=root)

    @contextlib.asynccontextmanager
    async def for_agent(self, expose: Sequence[Path], endpoints: Sequence[str]) -> AsyncIterator[EnvBackend]:
        yield self

    def wrap(self, argv: Sequence[str], cwd: Path, env: Mapping[str, str]) -> list[str]:
        assert self.root in cwd.parents  # bound to the trial's own folder before anything starts
        return ["env", "FOO=1", *argv]

    def outside_writes(self) -> tuple[OutsideWrite, ...] | None:
        return (FAKE_WRITE,)

    def network_refused(self) -> tuple[RefusedConnection, ...] | None:
        return None


def _run(tmp_path: Path, isolation: str) -> RunReport:
    path = write_script_eval(
        tmp_path / "evals" / "foo.eval.yaml",
        'printf "%s" "$FOO" > foo.txt',
        trials=1,
        checks="  - file_contains: {path: foo.txt, pattern: '1'}\n",
    )
    return run_local(path, tmp_path / "results", isolation=isolation)


def test_a_registered_backend_runs_the_trials_and_its_record_is_the_evidence(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(ISOLATION_BACKENDS, "fake", EnvBackend)
    [result] = _run(tmp_path, "fake").results
    [outcome] = result.outcomes
    assert result.entry.isolation == "fake" and result.entry.network == "none"  # a script agent's default
    assert outcome.passed, outcome.assertions
    assert outcome.result.outside_writes == (FAKE_WRITE,)


def test_a_backend_that_cannot_run_here_refuses_by_name_and_auto_takes_the_next(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*, hide: tuple[Path, ...], network: str) -> EnvBackend:
        return EnvBackend(hide, network, refuse="the fake cannot run here: install nothing")

    monkeypatch.delitem(ISOLATION_BACKENDS, "bwrap")  # auto tries them in order: broken first
    monkeypatch.setitem(ISOLATION_BACKENDS, "broken", broken)
    monkeypatch.setitem(ISOLATION_BACKENDS, "fake", EnvBackend)
    with pytest.raises(RefusedRunError, match="--isolation broken: the fake cannot run here"):
        _run(tmp_path, "broken")
    [result] = _run(tmp_path, "auto").results
    assert result.entry.isolation == "fake" and result.outcomes[0].passed
