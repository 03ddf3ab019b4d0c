"""Installing trialbook into another project must not change that project's pytest runs.

The wheel is built from this tree and installed into fresh venvs (see :mod:`tests.pytest_plugin.consumer`):
one with only trialbook's runtime dependencies, one that adds pytest-xdist. A plain project then runs
there without xdist, with ``-p no:xdist`` and with ``-n 2``.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from tests.pytest_plugin.consumer import ROOT, build_wheel, consumer_venv, run_pytest

PLAIN = """
import sys

def test_adds():
    assert 1 + 1 == 2

def test_loads_nothing_of_trialbook_beyond_the_plugin():
    loaded = sorted(m for m in sys.modules if m.startswith(("copilot", "trialbook", "pygit2", "yaml")))
    assert loaded == ["trialbook", "trialbook.pytest_plugin", "trialbook.pytest_plugin._fixtures",
                      "trialbook.pytest_plugin._keys"], loaded
"""

USES_FIXTURE = """
import pytest
from trialbook.agents import AgentSpec

@pytest.mark.asyncio
async def test_runs_an_agent(agent_eval, tmp_path):
    result = await agent_eval(AgentSpec("shout", {"script": "echo hi > hi.txt"}), "say hi", workdir=tmp_path)
    assert result.success and (tmp_path / "hi.txt").exists()
"""


_TOML = re.search(r"```toml\n(.*?)```", (ROOT / "docs" / "pytest-plugin.md").read_text(), re.S)
assert _TOML is not None, "docs/pytest-plugin.md shows the pytest configuration"
DOCUMENTED_SETUP = "\n" + _TOML[1]
"""The pytest configuration docs/pytest-plugin.md tells users to add, read from the page itself."""


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_wheel(tmp_path_factory.mktemp("wheel"))


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_plain.py").write_text(PLAIN)
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "someone-elses-project"\nversion = "1"\n')
    return tmp_path


def trialbook_lines(done: subprocess.CompletedProcess[str]) -> list[str]:
    """Output lines that mention trialbook, apart from pytest's own list of installed plugins."""
    lines = (done.stdout + done.stderr).splitlines()
    return [line for line in lines if "trialbook" in line.lower() and not line.startswith("plugins:")]


def assert_untouched(done: subprocess.CompletedProcess[str], passed: int = 2) -> None:
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"{passed} passed" in done.stdout
    assert trialbook_lines(done) == []
    # The plugin was loaded (so the run proves something): pytest lists it among the plugins.
    assert any(line.startswith("plugins:") and "trialbook" in line for line in done.stdout.splitlines())


@pytest.mark.parametrize("args", [(), ("-p", "no:xdist")], ids=["plain", "no-xdist-flag"])
def test_a_project_without_xdist_runs_as_before(wheel: Path, project: Path, args: tuple[str, ...]) -> None:
    venv = consumer_venv(wheel)
    assert not (venv / "bin" / "xdist").exists()
    assert_untouched(run_pytest(venv, project, *args))


@pytest.mark.parametrize("args", [("-n", "2"), ("-p", "no:xdist")], ids=["n2", "no-xdist-flag"])
def test_a_project_with_xdist_runs_as_before(wheel: Path, project: Path, args: tuple[str, ...]) -> None:
    venv = consumer_venv(wheel, "pytest-xdist")
    assert_untouched(run_pytest(venv, project, *args))


def test_a_fixture_without_pytest_asyncio_says_what_to_install(wheel: Path, project: Path) -> None:
    venv = consumer_venv(wheel)
    (project / "tests" / "test_plain.py").write_text("def test_x(agent_eval):\n    pass\n")
    done = run_pytest(venv, project)
    assert done.returncode == 1
    assert (
        "agent_eval is an async fixture and needs pytest-asyncio: pip install 'trialbook[pytest]'"
        in done.stdout
    )


@pytest.mark.parametrize("extra", [(), ("pytest-xdist",)], ids=["without-xdist", "with-xdist"])
def test_the_installed_plugin_records_evidence_when_asked(
    wheel: Path, project: Path, extra: tuple[str, ...]
) -> None:
    venv = consumer_venv(wheel, f"trialbook[pytest] @ {wheel.as_uri()}", *extra)
    (project / "tests" / "test_plain.py").unlink()
    (project / "tests" / "test_agent.py").write_text(USES_FIXTURE)
    (project / "pyproject.toml").write_text((project / "pyproject.toml").read_text() + DOCUMENTED_SETUP)
    out = project / "evidence.json"
    args = ("-n", "2") if extra else ()
    done = run_pytest(venv, project, *args, "--trialbook-unsafe-local", f"--trialbook-evidence={out}")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "PytestDeprecationWarning" not in done.stdout + done.stderr, "the documented setup is whole"
    assert "asyncio_default_fixture_loop_scope=function" in done.stdout, "pytest-asyncio read it"
    assert trialbook_lines(done) == [f"trialbook: evidence written to {out}"]
    check = subprocess.run(
        [
            str(venv / "bin" / "python"),
            "-c",
            f"from trialbook.evidence import load_suite as l; "
            f"print([t.outcome for t in l({str(out)!r}).tests])",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    assert check.stdout.strip() == "['passed']"
