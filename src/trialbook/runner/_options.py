"""Everything a run can be asked to do, as one value the front ends build."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["RunOptions"]


def _environ() -> dict[str, str]:
    return dict(os.environ)


@dataclass(frozen=True, kw_only=True)
class RunOptions:
    """The options of ``trialbook eval`` (and ``ci``), with the documented defaults."""

    paths: tuple[Path, ...] = (Path("evals"),)
    agents: tuple[str, ...] = ()
    trials: int | None = None
    adaptive: bool = False
    concurrency: int = 4
    budget_usd: float | None = None
    budget_strict: bool = False
    force: bool = False
    changed: bool = False
    base: str = "origin/main"
    history_dir: Path | None = None
    history_branch: str | None = None
    push: bool = False
    record_history: bool = True
    """``False``: read history from the local branch or folder only (no fetch) and record nothing; the
    caller records the lines itself, as the action's publish step does."""
    github_token: str | None = None
    git_connect_timeout_s: float | None = None
    """Seconds to connect to the history remote; ``None``: ``TRIALBOOK_GIT_CONNECT_TIMEOUT`` or 10."""
    git_timeout_s: float | None = None
    """Seconds to wait for each answer of the history remote; ``None``: ``TRIALBOOK_GIT_TIMEOUT`` or 30."""
    results_dir: Path | None = None
    """One folder for this run's results (CI); ``None`` keeps each run under ``runs_dir``."""
    runs_dir: Path = Path(".trialbook/runs")
    keep_runs: int = 20
    junit: Path | None = None
    summary: Path | None = None
    filters: tuple[str, ...] = ()
    last_failed: bool = False
    shard: tuple[int, int] | None = None
    dry_run: bool = False
    unsafe_local: bool = False
    strict_agents: bool = False
    """Refuse the run when an agent cannot run here, instead of ending its pairs as errors."""
    isolation: str | None = None
    """``--isolation``: overrides every eval's ``sandbox.isolation`` (one of ``sandbox.ISOLATIONS``)."""
    keep_sandboxes: bool = False
    rescore_from: tuple[Path, ...] = ()
    """More run or results folders (downloaded artifacts, say) whose recorded trials the cache may
    re-check, searched before the results folder and the kept runs."""
    rescore_run: Path | None = None
    """A kept run folder whose recorded trials are checked again with the current assertions
    (``trialbook rescore``): no agent runs, and a pair that cannot be re-checked is not run either."""
    repo: Path = Path()
    environ: Mapping[str, str] = field(default_factory=_environ)

    @property
    def owned_folder(self) -> Path:
        """The folder this run writes into and must own: ``results_dir``, or the kept-runs folder."""
        return self.results_dir if self.results_dir is not None else self.runs_dir

    @property
    def owned_label(self) -> str:
        """How messages name :attr:`owned_folder`: the option that gave it, or what it is."""
        return "--results-dir" if self.results_dir is not None else "the runs folder"

    @property
    def in_ci(self) -> bool:
        """Whether the environment says this is CI (``CI=true``)."""
        return self.environ.get("CI", "").lower() == "true"
