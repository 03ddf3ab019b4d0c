"""The import-linter contracts in pyproject.toml hold, and a wrong import breaks them.

Run on a copy of the package, so the attacks never touch the checkout: the copy as it is must pass,
a lower layer importing a higher one must fail the layers contract, and a module reading another
package's private module must fail the private-modules contract.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
LINT = Path(sys.executable).parent / "lint-imports"


def _lint(tmp_path: Path, inject: tuple[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    copy = tmp_path / "src"
    shutil.copytree(
        ROOT / "src" / "trialbook", copy / "trialbook", ignore=shutil.ignore_patterns("__pycache__")
    )
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    if inject is not None:
        module, line = inject
        target = copy / "trialbook" / module
        target.write_text(target.read_text() + f"\n{line}  # noqa\n")
    env = {**os.environ, "PYTHONPATH": str(copy), "COLUMNS": "200"}
    return subprocess.run(
        [str(LINT), "--config", str(tmp_path / "pyproject.toml"), "--no-cache"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )


def test_the_package_keeps_both_contracts(tmp_path: Path) -> None:
    done = _lint(tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "2 kept, 0 broken" in done.stdout


@pytest.mark.parametrize(
    ("module", "line", "broken", "named"),
    [
        (
            "evidence/_values.py",
            "from ..runner import run as _run",
            "Layers: each package imports only the layers below it BROKEN",
            "trialbook.evidence is not allowed to import trialbook.runner",
        ),
        (
            "runner/_ledger.py",
            "from ..sandbox._shims import ShimMode as _ShimMode",
            "A package's private modules are its own BROKEN",
            "trialbook.runner._ledger -> trialbook.sandbox._shims",
        ),
    ],
)
def test_a_wrong_import_breaks_a_contract(
    tmp_path: Path, module: str, line: str, broken: str, named: str
) -> None:
    done = _lint(tmp_path, (module, line))
    assert done.returncode == 1, done.stdout + done.stderr
    assert broken in done.stdout
    assert named in done.stdout
