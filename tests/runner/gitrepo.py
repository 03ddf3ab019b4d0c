"""Real git repositories for runner tests: a work tree with an ``origin`` bare remote."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path


def git(cwd: Path, *args: str) -> str:
    """Run the plain git CLI with no user or system config; return stdout, failing loudly."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(
        GIT_CONFIG_NOSYSTEM="1",
        GIT_CONFIG_GLOBAL=os.devnull,
        GIT_AUTHOR_NAME="Test User",
        GIT_AUTHOR_EMAIL="user@example.com",
        GIT_COMMITTER_NAME="Test User",
        GIT_COMMITTER_EMAIL="user@example.com",
    )
    done = subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True, check=False)
    assert done.returncode == 0, f"git {' '.join(args)}: {done.stderr}"
    return done.stdout


def make_repo(root: Path) -> tuple[Path, Path]:
    """``(work, origin)``: a repository with one commit on main, pushed to a bare ``origin``."""
    root.mkdir(parents=True, exist_ok=True)
    origin = root / "origin.git"
    work = root / "work"
    git(root, "init", "--bare", "-b", "main", str(origin))
    work.mkdir()
    git(work, "init", "-b", "main")
    git(work, "remote", "add", "origin", str(origin))
    return work, origin


def commit_all(work: Path, message: str) -> str:
    """Commit everything in the work tree and push main; return the commit id."""
    git(work, "add", "-A")
    git(work, "commit", "-q", "-m", message)
    git(work, "push", "-q", "origin", "main")
    git(work, "fetch", "-q", "origin")
    return git(work, "rev-parse", "HEAD").strip()


def checked_out_state(work: Path) -> tuple[str, str, str, bytes, list[str]]:
    """Everything a user sees of their checkout: HEAD, its symbolic name, status, index bytes, files."""
    files = sorted(str(p.relative_to(work)) for p in work.rglob("*") if ".git" not in p.parts)
    return (
        git(work, "rev-parse", "HEAD"),
        git(work, "symbolic-ref", "HEAD"),
        git(work, "status", "--porcelain", "--untracked-files=all"),
        (work / ".git" / "index").read_bytes(),
        files,
    )
