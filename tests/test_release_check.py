"""scripts/check_release.py: the version, the changelog and the docs' pins must agree."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _copy(tmp_path: Path) -> Path:
    for name in ("src/trialbook/__init__.py", "CHANGELOG.md", "README.md"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / name, tmp_path / name)
    shutil.copytree(ROOT / "docs", tmp_path / "docs")
    return tmp_path


def _check(root: Path, *tag: str) -> subprocess.CompletedProcess[str]:
    script = ROOT / "scripts/check_release.py"
    return subprocess.run(
        [sys.executable, str(script), *tag, str(root)], capture_output=True, text=True, check=False
    )


def test_this_checkout_agrees() -> None:
    done = _check(ROOT)
    assert done.returncode == 0, done.stdout


def test_a_docs_pin_of_another_version_and_a_changelog_without_its_section_are_found(tmp_path: Path) -> None:
    root = _copy(tmp_path)
    init = root / "src/trialbook/__init__.py"
    init.write_text(init.read_text().replace('__version__ = "0.1.0"', '__version__ = "0.2.0"'))
    changelog = root / "CHANGELOG.md"
    changelog.write_text(changelog.read_text().replace("## Unreleased", "## 0.1.0 (2026-12-01)", 1))
    done = _check(root)
    assert done.returncode == 1
    lines = done.stdout.splitlines()
    assert "CHANGELOG.md: the first section is 0.1.0; expected Unreleased or 0.2.0" in lines
    assert any(line.startswith("docs/github-action.md:") and "pins v0.1.0" in line for line in lines)


def test_a_release_tag_must_name_the_version_and_have_its_changelog_section(tmp_path: Path) -> None:
    root = _copy(tmp_path)
    unreleased = _check(root, "--tag", "v0.1.0")
    assert unreleased.returncode == 1
    assert "CHANGELOG.md: no ## 0.1.0 section for the release" in unreleased.stdout
    changelog = root / "CHANGELOG.md"
    changelog.write_text(changelog.read_text().replace("## Unreleased", "## 0.1.0 (2026-12-05)", 1))
    assert _check(root, "--tag", "v0.1.0").returncode == 0
    other = _check(root, "--tag", "v0.1.1")
    assert other.returncode == 1
    assert "the tag v0.1.1 does not name the version 0.1.0 (expected v0.1.0)" in other.stdout
