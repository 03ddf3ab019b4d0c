"""Shared pieces for the Copilot tests: the pinned CLI, a warm runtime cache and a tiny sandbox."""

from __future__ import annotations

import os
import stat
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import pytest_asyncio

from tests.clis import CACHE, ensure_cli
from trialbook.agents import AgentTask
from trialbook.agents.copilot import ServerPool


@pytest.fixture(scope="session")
def copilot_cli() -> str:
    return str(ensure_cli("@github/copilot"))


@pytest.fixture(scope="session")
def pkg_cache() -> str:
    # The CLI unpacks ~230 MB on first start; one cache shared by every test (and test session) keeps
    # isolated HOMEs cheap. COPILOT_PKG_CACHE_HOME is the variable the CLI reads for it.
    path = CACHE / "copilot-pkg"
    path.mkdir(parents=True, exist_ok=True)
    return str(path)


@dataclass
class MiniSandbox:
    """A workdir, an isolated HOME and a shim folder first on PATH whose shims append to calls.log."""

    root: Path

    @property
    def workdir(self) -> Path:
        return self.root / "work"

    @property
    def home(self) -> Path:
        return self.root / "home"

    @property
    def log(self) -> Path:
        return self.root / "calls.log"

    def shim(self, name: str) -> None:
        shims = self.root / "shims"
        shims.mkdir(exist_ok=True)
        script = shims / name
        script.write_text(f'#!/bin/sh\necho "{name} $*" >> "{self.log}"\n')
        script.chmod(script.stat().st_mode | stat.S_IEXEC)

    def env(self, pkg_cache: str) -> dict[str, str]:
        return {
            "PATH": f"{self.root / 'shims'}:/usr/bin:/bin",
            "HOME": str(self.home),
            "COPILOT_PKG_CACHE_HOME": pkg_cache,
        }

    def task(self, prompt: str, pkg_cache: str, timeout_s: float | None = 60) -> AgentTask:
        return AgentTask(
            prompt=prompt,
            workdir=self.workdir,
            home=self.home,
            env=self.env(pkg_cache),
            output_dir=self.root / "out",
            timeout_s=timeout_s,
        )


def make_sandbox(root: Path) -> MiniSandbox:
    box = MiniSandbox(root)
    for path in (box.workdir, box.home, root / "shims", root / "out"):
        path.mkdir(parents=True, exist_ok=True)
    return box


@pytest.fixture
def sandbox(tmp_path: Path) -> MiniSandbox:
    return make_sandbox(tmp_path)


@pytest.fixture(scope="module")
def shared_box(tmp_path_factory: pytest.TempPathFactory) -> MiniSandbox:
    """One sandbox environment per module, so its tests can share one CLI server."""
    return make_sandbox(tmp_path_factory.mktemp("copilot-shared"))


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def shared_pool() -> AsyncIterator[ServerPool]:
    pool = ServerPool(max_idle=2)
    yield pool
    await pool.aclose()


@pytest.fixture
def no_tokens(monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    for name in ("COPILOT_GITHUB_TOKEN", "GH_TOKEN", "GITHUB_TOKEN", "COPILOT_CLI_PATH"):
        monkeypatch.delenv(name, raising=False)
    return dict(os.environ)
