"""Shared helpers for the history tests: the git CLI with an isolated config, and line factories."""

from __future__ import annotations

import hashlib
import os
import subprocess
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from trialbook.history import HistoryLine, format_started_at

T0 = datetime(2025, 1, 1, 12, 0, 0, tzinfo=UTC)


def git_env(home: Path) -> dict[str, str]:
    """An environment where the git CLI reads no user or system config and has an identity."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(
        HOME=str(home),
        XDG_CONFIG_HOME=str(home / ".config"),
        GIT_CONFIG_NOSYSTEM="1",
        GIT_AUTHOR_NAME="Test User",
        GIT_AUTHOR_EMAIL="user@example.com",
        GIT_COMMITTER_NAME="Test User",
        GIT_COMMITTER_EMAIL="user@example.com",
        GIT_TERMINAL_PROMPT="0",
    )
    return env


def git(cwd: Path, *args: str, check: bool = True) -> str:
    """Run the plain git CLI in ``cwd`` and return its stdout."""
    home = _home_for(cwd)
    done = subprocess.run(
        ["git", *args], cwd=cwd, env=git_env(home), capture_output=True, text=True, check=False
    )
    if check and done.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} failed ({done.returncode}): {done.stderr}")
    return done.stdout


def _home_for(cwd: Path) -> Path:
    # Every fixture lives under tmp_path, whose "home" folder holds no git config at all.
    for parent in [cwd, *cwd.parents]:
        if (parent / "home").is_dir():
            return parent / "home"
    return cwd


def line(eval_id: str = "demo", agent: str = "literal", *, minutes: int = 0, **overrides: Any) -> HistoryLine:
    """A valid history line; ``minutes`` shifts ``started_at`` from a fixed origin."""
    fields: dict[str, Any] = {
        "id": eval_id,
        "agent": agent,
        "agent_version": "1.0.0",
        "model": None,
        "prompt_sha256": hashlib.sha256(eval_id.encode()).hexdigest(),
        "cache_key": "sha256:" + "0" * 64,
        "trials": 3,
        "passed": 3,
        "pass_rate": 1.0,
        "threshold": 0.67,
        "verdict": "pass",
        "cost_usd": None,
        "duration_s": 1.5,
        "started_at": format_started_at(T0 + timedelta(minutes=minutes)),
        "commit": None,
        "trialbook_version": "0.1.0",
        "ci_run": None,
    }
    fields.update(overrides)
    return HistoryLine(**fields)


def snapshot(work: Path) -> dict[str, object]:
    """Everything about a checkout that history writes must leave alone."""
    git_dir = work / ".git"
    return {
        "head": git(work, "rev-parse", "HEAD"),
        "symbolic_head": git(work, "symbolic-ref", "HEAD"),
        "index": hashlib.sha256((git_dir / "index").read_bytes()).hexdigest(),
        "status": git(work, "status", "--porcelain", "--untracked-files=all"),
        "files": sorted(
            (str(p.relative_to(work)), p.read_bytes())
            for p in work.rglob("*")
            if p.is_file() and ".git" not in p.relative_to(work).parts
        ),
    }
