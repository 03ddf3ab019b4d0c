"""The pytest examples in examples/README.md and docs/testing.md run as written, on the real agent CLIs.

They are what a user copies first, and they show ``trialbook.testing``'s fixtures in use; a renamed helper
or a changed fixture would otherwise leave the examples quietly broken. Only ``/path/to/copilot`` is
replaced; the CLIs are put on ``PATH`` under their usual names, as a user would have them.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from tests.clis import CACHE, ensure_cli

ROOT = Path(__file__).resolve().parents[2]
PAGES = {"examples": ROOT / "examples" / "README.md", "testing": ROOT / "docs" / "testing.md"}
TOKENS = ("COPILOT_GITHUB_TOKEN", "GH_TOKEN", "GITHUB_TOKEN")
CLIS = {"copilot": "@github/copilot", "claude": "@anthropic-ai/claude-code", "codex": "@openai/codex"}


def examples(page: Path) -> list[str]:
    """The page's Python blocks that define a test."""
    blocks = re.findall(r"```python\n(.*?)```", page.read_text(), re.S)
    return [block for block in blocks if "async def test_" in block]


def test_the_examples_use_trialbook_testing() -> None:
    for name, page in PAGES.items():
        found = examples(page)
        assert found, f"{name}: no test examples"
        assert all("from trialbook.testing import" in block for block in found), name
        assert {"loopback_model", "loopback_api"} <= set(re.findall(r"loopback_\w+", "".join(found))), name


@pytest.mark.real_cli
@pytest.mark.parametrize("name", sorted(PAGES))
def test_the_documented_examples_pass_as_written(
    name: str, pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    found = examples(PAGES[name])
    source = "\n\n".join(found)
    assert source.count('cli_path="/path/to/copilot"') == 1
    source = source.replace("/path/to/copilot", "copilot")  # resolved on PATH below, by the CLI's name
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for command, package in CLIS.items():
        (bin_dir / command).symlink_to(ensure_cli(package))
    copilot = str(bin_dir / "copilot")
    source = source.replace('cli_path="copilot"', f"cli_path={copilot!r}")
    # The Copilot CLI unpacks its runtime under $XDG_CACHE_HOME/trialbook/copilot: reuse the tests' one.
    (CACHE / "copilot-pkg").mkdir(parents=True, exist_ok=True)
    (tmp_path / "xdg" / "trialbook").mkdir(parents=True)
    (tmp_path / "xdg" / "trialbook" / "copilot").symlink_to(CACHE / "copilot-pkg")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ.get('PATH', os.defpath)}")
    for variable in (*TOKENS, "ANTHROPIC_API_KEY", "OPENAI_API_KEY"):  # only the loopback model is reachable
        monkeypatch.delenv(variable, raising=False)
    pytester.makepyfile(**{f"test_{name}": source})
    pytester.makeini("[pytest]\nasyncio_mode = strict\nasyncio_default_fixture_loop_scope = function\n")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--trialbook-unsafe-local")
    result.assert_outcomes(passed=len(re.findall(r"async def test_", source)))
