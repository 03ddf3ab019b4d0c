"""The action installs trialbook from its own folder without a build: agents, plugin and launcher work."""

from __future__ import annotations

import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_source_install_registers_every_agent_and_the_launcher_runs(tmp_path: Path) -> None:
    # A venv that sees this test environment's packages (trialbook's dependencies) but not trialbook.
    target = tmp_path / "venv"
    venv.EnvBuilder(with_pip=False, system_site_packages=False).create(target)
    python = target / "bin/python"
    deps = [p for p in sys.path if p.endswith("site-packages")]
    site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
        capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip
    (Path(site) / "deps.pth").write_text("\n".join(deps) + "\n")
    subprocess.run([str(python), str(ROOT / "scripts/action/install_trialbook.py"), str(ROOT)], check=True)
    listed = subprocess.run(
        [str(python), "-c",
         "from importlib.metadata import entry_points, version; "
         "print(version('trialbook'), sorted(e.name for e in entry_points(group='trialbook.agents')))"],
        capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip
    assert listed == "0.1.0 ['claude-code', 'codex', 'copilot', 'literal', 'noop']"
    agents = subprocess.run(
        [str(target / "bin/trialbook"), "agents"], capture_output=True, text=True, check=False, cwd=tmp_path
    )
    assert agents.returncode == 0, agents.stderr
    assert "literal" in agents.stdout
    # Nothing was built or copied: the code that runs is the action folder's own.
    assert (Path(site) / "trialbook-action.pth").read_text().strip() == str(ROOT / "src")
    assert not list(Path(site).glob("trialbook/*"))
