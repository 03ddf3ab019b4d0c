import socket
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path

import pytest

from tests.sandbox.procs import open_cgroup_scope
from trialbook.sandbox import Sandbox, ShimConfig, create_sandbox
from trialbook.sandbox.supervisor import TrialScope, supervisor

MakeSandbox = Callable[..., Sandbox]


@pytest.fixture
def make_sandbox(tmp_path: Path) -> Iterator[MakeSandbox]:
    """Create sandboxes under ``tmp_path/trials`` and close whatever the test left open."""
    made: list[Sandbox] = []

    def make(
        *,
        shims: Sequence[ShimConfig] = (),
        template: Path | None = None,
        secrets: Mapping[str, str] | None = None,
        extra_env: Mapping[str, str] | None = None,
        base_path: str | None = None,
        exclude: Sequence[str] = (),
    ) -> Sandbox:
        sandbox = create_sandbox(
            root=tmp_path / "trials",
            template=template,
            shims=shims,
            secrets=secrets or {},
            extra_env=extra_env or {},
            base_path=base_path,
            exclude=exclude,
        )
        made.append(sandbox)
        return sandbox

    yield make
    for sandbox in made:
        sandbox.close()


@pytest.fixture(params=["cgroup", "marker"])
def scope(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[TrialScope]:
    """A trial scope under each Linux mechanism: its own cgroup, and the marker sweep alone."""
    monkeypatch.setenv("TRIALBOOK_CGROUP", "on" if request.param == "cgroup" else "off")
    opened = supervisor().open_trial()
    assert opened.mechanism == request.param
    yield opened
    opened.close()


@pytest.fixture
def holder(monkeypatch: pytest.MonkeyPatch) -> Iterator[TrialScope]:
    """A cgroup trial open beside the ones under test, as in a run of several: the folder of groups stays."""
    monkeypatch.setenv("TRIALBOOK_CGROUP", "on")
    scope = open_cgroup_scope()
    yield scope
    scope.close()


@pytest.fixture
def listening() -> Iterator[int]:
    """A loopback port of the host that accepts connections: what an isolated agent must not reach."""
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(8)
        yield server.getsockname()[1]
