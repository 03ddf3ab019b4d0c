from __future__ import annotations

import tempfile
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from trialbook.cli import cli

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text).lstrip("\n"))
    return path


Invoke = Callable[..., Result]


@pytest.fixture
def invoke(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Invoke:
    """Run the CLI in tmp_path as CI would (CI=true), unless env says otherwise."""
    monkeypatch.chdir(tmp_path)

    def run(*args: str, env: dict[str, str | None] | None = None) -> Result:
        environment: dict[str, str | None] = {"CI": "true", **(env or {})}
        return CliRunner().invoke(cli, list(args), env=environment, catch_exceptions=False)

    return run


@pytest.fixture
def scratch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The temp folder trials make their sandboxes in (the system's, here the test's own), empty at first."""
    folder = tmp_path / "tmp"
    folder.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    return folder
