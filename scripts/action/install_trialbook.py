"""Install trialbook from the action's own folder into a venv without building anything.

Run with the venv's Python: ``python install_trialbook.py ACTION_PATH``. Building a wheel would fetch a
build backend that no hash pins; trialbook is pure Python, so what an installer would leave is written
directly instead: a ``.pth`` naming the action's ``src`` folder, the ``dist-info`` whose
``entry_points.txt`` registers the built-in agents and the pytest plugin (from ``pyproject.toml``, the
one place they are declared), and the ``trialbook`` launcher. Every byte that runs is the pinned
action's.
"""

from __future__ import annotations

import re
import sys
import sysconfig
import tomllib
from pathlib import Path


def install(action: Path) -> Path:
    """Install from ``action`` into the running interpreter's environment; returns the dist-info folder."""
    project = tomllib.loads((action / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    found = re.search(r'^__version__ = "([^"]+)"$', (action / "src/trialbook/__init__.py").read_text(), re.M)
    if found is None:
        raise SystemExit(f"{action}/src/trialbook/__init__.py: no __version__ line")
    version = found.group(1)
    site = Path(sysconfig.get_path("purelib"))
    (site / "trialbook-action.pth").write_text(f"{(action / 'src').resolve()}\n", encoding="utf-8")
    info = site / f"trialbook-{version}.dist-info"
    info.mkdir(exist_ok=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: trialbook\nVersion: {version}\n")
    groups = dict(project.get("entry-points", {}))
    groups["console_scripts"] = project.get("scripts", {})
    lines = []
    for group, points in groups.items():
        lines += [f"[{group}]", *(f"{name} = {target}" for name, target in points.items()), ""]
    (info / "entry_points.txt").write_text("\n".join(lines), encoding="utf-8")
    (info / "INSTALLER").write_text("trialbook-action\n")
    launcher = Path(sysconfig.get_path("scripts")) / "trialbook"
    launcher.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m trialbook "$@"\n')
    launcher.chmod(0o755)
    return info


if __name__ == "__main__":
    install(Path(sys.argv[1]))
