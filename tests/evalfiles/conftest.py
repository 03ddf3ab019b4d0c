from pathlib import Path

import pytest


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project folder that is also the current folder, so problems name files as users type them."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "evals").mkdir()
    return tmp_path
