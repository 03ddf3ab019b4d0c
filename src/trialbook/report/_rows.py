"""What a reviewer sees per eval × agent, as plain data the Markdown renderers turn into tables.

The runner and the history store know far more than a reviewer needs; these records hold only what the
job summary and the PR comment show, so the renderers stay pure and can be tested with golden strings.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..scoring.flaky import Stability, against_window
from ..scoring.stats import DEFAULT_ALPHA, RegressionTest, regression_test

__all__ = ["BaseResult", "ListedEval", "ReviewRow", "cached_note"]


@dataclass(frozen=True, kw_only=True)
class BaseResult:
    """The base ref's last recorded result for one eval × agent, read from history.

    Attributes:
        passed: trials that passed in that run.
        trials: trials that ran in that run.
        verdict: that run's verdict (``pass``, ``fail``, ``error`` or ``incomplete``).
        commit: the commit it was recorded for, when history has it.
    """

    passed: int
    trials: int
    verdict: str
    commit: str | None = None


@dataclass(frozen=True, kw_only=True)
class ReviewRow:
    """One eval × agent that ran in this job.

    Attributes:
        eval_id: the eval's id.
        agent: the agent's name.
        passed: trials that passed.
        trials: trials that ran (unstarted trials are not counted).
        verdict: ``pass``, ``fail``, ``error`` or ``incomplete``.
        base: the base ref's last result, or ``None`` when history has none (a new eval or agent).
        cost_usd: total cost of the trials, ``None`` when any agent could not report it.
        duration_s: wall time of the trials, ``None`` when unknown.
        alpha: significance level of the regression flag.
        failures: what went wrong, one line per failed check or agent error, prefixed by the trial.
        history: how this eval × agent behaved over recent base-branch runs, when history has them.
        note: what else a reader should know (trials saved by stopping early, assertions that held
            on an untouched sandbox), or ``""``.
        remarks: longer notes listed below the table, e.g. a shim no trial called.
        cached: reported from a history line with the same cache key instead of running; its counts,
            verdict and failures are that run's, ``note`` says which run, and this job spent nothing on it.
        judged: the eval has ``judge`` checks, so ``judge_cost_usd`` is reported.
        judge_cost_usd: what its judges cost, apart from ``cost_usd``; ``None`` when unknown.
        isolation: which isolation its trials ran under, as ``report.isolation.isolation_label`` words
            it (``bwrap (network: none)``); ``None`` when not known (a cached row, an older record).
        outside: one line per trial that had connections refused or wrote outside its sandbox
            (``trial 2: network refused (1): 127.0.0.1:4242``), bounded, masked like the evidence.
    """

    eval_id: str
    agent: str
    passed: int
    trials: int
    verdict: str
    base: BaseResult | None
    cost_usd: float | None
    duration_s: float | None
    alpha: float = DEFAULT_ALPHA
    failures: tuple[str, ...] = ()
    history: Stability | None = None
    note: str = ""
    remarks: tuple[str, ...] = ()
    cached: bool = False
    judged: bool = False
    judge_cost_usd: float | None = None
    isolation: str | None = None
    outside: tuple[str, ...] = ()

    @property
    def compared_with_window(self) -> bool:
        """Whether the regression test uses the window of base runs (flaky evals) rather than the last."""
        return self.history is not None and self.history.flakiness == "flaky" and self.history.trials > 0

    @property
    def regression(self) -> RegressionTest | None:
        """The comparison with the base, or ``None`` when there is nothing to compare with.

        A flaky eval is compared with all its recent base-branch trials: its last run alone is one
        draw of a noisy rate, so a drop from it says little.
        """
        if self.history is not None and self.compared_with_window:
            return against_window(self.history, self.passed, self.trials, alpha=self.alpha)
        if self.base is None or self.base.trials == 0 or self.trials == 0:
            return None
        return regression_test(self.base.passed, self.base.trials, self.passed, self.trials, alpha=self.alpha)

    @property
    def within_usual_range(self) -> bool:
        """A failure of a known-flaky eval that the window's own rate explains (not a regression)."""
        test = self.regression
        return (
            self.verdict != "pass" and self.compared_with_window and test is not None and not test.regressed
        )


@dataclass(frozen=True, kw_only=True)
class ListedEval:
    """An eval × agent that did not run in this job, with the reason (cached, skipped, not started).

    Attributes:
        eval_id: the eval's id.
        agent: the agent's name, or ``None`` when the reason applies to every agent of the eval.
        reason: one short line, e.g. ``cache key unchanged since abc1234 (pass 3/3)``.
    """

    eval_id: str
    agent: str | None
    reason: str


def cached_note(started_at: object, commit: object, ref: object) -> str:
    """Which run a cached verdict comes from: ``cached: recorded 2026-11-30T03:17:05Z @ 9c1e2f3 by refs/…``.

    Every report says it the same way (the run's summary, ``trialbook report``, annotations); values a
    hand-edited line holds in the wrong type are left out rather than shown.
    """
    started = started_at if isinstance(started_at, str) and started_at else "an earlier run"
    where = f" @ {commit[:7]}" if isinstance(commit, str) and commit else ""
    by = f" by {ref}" if isinstance(ref, str) and ref else ""
    return f"cached: recorded {started}{where}{by}"
