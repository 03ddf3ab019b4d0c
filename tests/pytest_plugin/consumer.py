"""trialbook as another project gets it: the built wheel in a fresh venv with only its runtime dependencies.

The venv is cached per wheel hash (and per extra package), so the suite pays for ``uv pip install`` only
when the package changed. Versions are constrained to ``uv.lock`` so the consumer sees what CI locks.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CACHE = Path(os.environ.get("TRIALBOOK_TEST_VENV_CACHE", Path.home() / ".cache" / "trialbook-test-venvs"))


def _uv(*args: str, cwd: Path = ROOT) -> str:
    env = {**os.environ, "UV_NO_PROGRESS": "1"}
    env.pop("VIRTUAL_ENV", None)
    done = subprocess.run(["uv", *args], cwd=cwd, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"uv {' '.join(args)} failed:\n{done.stdout}\n{done.stderr}")
    return done.stdout


def build_wheel(out: Path) -> Path:
    """Build trialbook's wheel from this source tree into ``out``."""
    _uv("build", "--wheel", "--out-dir", str(out), "--quiet")
    (wheel,) = out.glob("trialbook-*.whl")
    return wheel


def consumer_venv(wheel: Path, *extra: str) -> Path:
    """A venv with ``wheel`` and ``extra`` installed (nothing else), built once per wheel hash.

    ``extra`` may name the wheel itself by its ``file:`` URI (``trialbook[pytest] @ file:///...``).
    """
    constraints = _uv("export", "--frozen", "--all-groups", "--no-emit-project", "--no-hashes", "--quiet")
    named = " ".join(extra).replace(wheel.as_uri(), "{wheel}")  # the key must not depend on a temp path
    key = hashlib.sha256(wheel.read_bytes() + constraints.encode() + named.encode()).hexdigest()
    venv = CACHE / key[:24]
    python = venv / "bin" / "python"
    CACHE.mkdir(parents=True, exist_ok=True)
    with open(CACHE / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if (venv / ".complete").exists():
            return venv
        shutil.rmtree(venv, ignore_errors=True)
        (CACHE / f"{key[:24]}.constraints.txt").write_text(constraints)
        _uv("venv", "--quiet", "--python", "3.11", str(venv))
        _uv(
            "pip",
            "install",
            "--quiet",
            "--python",
            str(python),
            "-c",
            str(CACHE / f"{key[:24]}.constraints.txt"),
            str(wheel),
            *extra,
        )
        (venv / ".complete").write_text(wheel.name)
    return venv


def run_pytest(venv: Path, project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """Run ``pytest`` of ``venv`` in ``project`` with a clean environment (no source tree on the path)."""
    env = {
        "PATH": f"{venv / 'bin'}:{os.environ.get('PATH', os.defpath)}",
        "HOME": str(project / ".home"),
    }
    return subprocess.run(
        [str(venv / "bin" / "python"), "-m", "pytest", "-p", "no:cacheprovider", *args],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
