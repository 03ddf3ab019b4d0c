"""docs/tutorial.md runs as written in a fresh folder: install, a literal eval, the viewer, history, and
Claude Code (the real CLI) against the local model that `trialbook model serve` starts.

The page's files (fences titled with a path) are written, and its shell blocks run in order in one bash
script with ``set -e``. Two things stand in for what a test cannot do: the install line's git URL is
replaced by trialbook's wheel built from this tree (the release does not exist yet), and after a line
that starts a server in the background the script waits until its port answers, as a user waits for
the second terminal.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from tests.clis import ensure_cli
from tests.pytest_plugin.consumer import build_wheel, consumer_venv
from trialbook import __version__

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "tutorial.md"
FENCE = re.compile(r"^(`{3,})(\w+)(?: title=\"([^\"]+)\")?\n(.*?)^\1$", re.M | re.S)
INSTALL = f'pip install "trialbook[pytest] @ git+https://github.com/OWNER/trialbook@v{__version__}"'


def blocks() -> list[tuple[str, str | None, str]]:
    """Every fenced block of the page: language, title (a file's path) and text, in order."""
    return [(m[2], m[3], m[4]) for m in FENCE.finditer(PAGE.read_text(encoding="utf-8"))]


def _script(found: list[tuple[str, str | None, str]], wheel_venv: Path) -> str:
    lines = ["set -euo pipefail", "trap 'kill $(jobs -p) 2>/dev/null || true' EXIT"]
    for language, title, text in found:
        if title is not None:  # written where the page shows it, not before
            lines += [
                f'mkdir -p "$(dirname {title})"',
                f"cat > {title} <<'END_OF_PAGE_FILE'",
                text + "END_OF_PAGE_FILE",
            ]
            continue
        if language != "bash":
            continue
        for line in text.splitlines():
            if line == "python3 -m venv .venv":
                line = f"ln -s {wheel_venv} .venv"  # the venv the wheel was installed into, below
            elif line == INSTALL:
                line = "true  # installed from the wheel built from this tree"
            lines.append(line)
            if (port := re.search(r"--port (\d+) &$", line)) is not None:
                lines.append(
                    f"for _ in $(seq 600); do (exec 3<>/dev/tcp/127.0.0.1/{port[1]}) 2>/dev/null && break; "
                    "sleep 0.1; done"
                )
    return "\n".join(lines) + "\n"


def test_the_page_installs_a_pinned_release_with_the_pytest_extra() -> None:
    commands = [text for language, title, text in blocks() if language == "bash" and title is None]
    assert INSTALL in commands[0].splitlines()
    assert commands[0].splitlines()[:2] == ["python3 -m venv .venv", ". .venv/bin/activate"]


@pytest.mark.real_cli
def test_the_tutorial_runs_as_written(tmp_path: Path) -> None:
    wheel = build_wheel(tmp_path / "wheel")
    venv = consumer_venv(wheel, f"trialbook[pytest] @ {wheel.as_uri()}")
    project = tmp_path / "my-project"
    project.mkdir()
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "claude").symlink_to(ensure_cli("@anthropic-ai/claude-code"))
    (project / "tutorial.sh").write_text(_script(blocks(), venv))
    env = {
        "PATH": f"{bin_dir}:/usr/local/bin:/usr/bin:/bin",
        "HOME": str(tmp_path / "home"),
        "LANG": "C.UTF-8",
    }
    done = subprocess.run(
        ["bash", "tutorial.sh"],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    output = done.stdout + done.stderr
    assert done.returncode == 0, output
    assert f"trialbook {__version__}" in output
    runs = sorted(p for p in (project / ".trialbook/runs").iterdir() if p.is_dir() and not p.is_symlink())
    manifests = [json.loads((run / "manifest.json").read_text()) for run in runs]
    actions = [[(p["id"], p["agent"], p["action"], p["verdict"]) for p in m["pairs"]] for m in manifests]
    assert sorted(actions) == [  # run folders made in the same second have no order of their own
        [("agent", "claude-code", "run", "pass")],
        [("setup", "literal", "cached", "pass")],
        [("setup", "literal", "run", "pass")],
    ]
    assert (project / "report.html").stat().st_size > 0
    assert "warning" not in output
