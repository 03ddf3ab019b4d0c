from __future__ import annotations

import subprocess
import sys
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


def refused_by_validate(root: Path) -> str:
    """What ``trialbook validate evals`` in ``root`` printed as a user runs it: exit 2, no traceback."""
    trialbook = str(Path(sys.executable).with_name("trialbook"))
    done = subprocess.run(
        [trialbook, "validate", "evals"], cwd=root, capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    return done.stdout + done.stderr
