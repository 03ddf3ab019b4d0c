"""What the plugin remembers during a pytest session, and how a test's record is finalized.

A test's outcome and properties are fixed only after its teardown report: fixture cleanup may still fail
(or record properties), and a test whose setup or teardown failed is an ``error`` even if its body passed.
Executions are attached by the fixtures under the test's node id.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import cast

import pytest

from .. import __version__
from ..evidence import ExecutionRecord, JsonValue, Outcome, SuiteMetadata, SuiteReport, TestReport

__all__ = ["STATE", "PluginState", "TestProgress"]


@dataclass
class TestProgress:
    """One test's phases so far."""

    __test__ = False

    outcome: Outcome | None = None
    duration_s: float = 0.0
    errors: list[str] = field(default_factory=list)
    executions: list[ExecutionRecord] = field(default_factory=list)


def _message(report: pytest.TestReport) -> str:
    crash = getattr(report.longrepr, "reprcrash", None)
    if crash is not None:
        return f"{report.when}: {crash.message}"
    return (
        f"{report.when}: {report.longreprtext.strip().splitlines()[-1] if report.longreprtext else 'failed'}"
    )


@dataclass
class PluginState:
    """Kept in ``config.stash``: the evidence path, finished tests and tests in progress."""

    evidence_path: str | None
    started_at: str = field(default_factory=lambda: datetime.now(UTC).isoformat())
    tests: list[TestReport] = field(default_factory=list)
    running: dict[str, TestProgress] = field(default_factory=dict)

    def progress(self, nodeid: str) -> TestProgress:
        return self.running.setdefault(nodeid, TestProgress())

    def record(self, report: pytest.TestReport) -> None:
        """Fold one phase report in; the teardown report finalizes the test."""
        test = self.progress(report.nodeid)
        test.duration_s += report.duration
        xfail = hasattr(report, "wasxfail")
        if report.when == "setup":
            if report.failed:
                test.outcome = "error"
                test.errors.append(_message(report))
            elif report.skipped:
                test.outcome = "xfailed" if xfail else "skipped"
        elif report.when == "call":
            if report.passed:
                test.outcome = "xpassed" if xfail else "passed"
            elif report.failed:
                test.outcome = "failed"
                test.errors.append(_message(report))
            else:
                test.outcome = "xfailed" if xfail else "skipped"
        elif report.when == "teardown":
            if report.failed:
                test.outcome = "error"
                test.errors.append(_message(report))
            self._finish(report, test)

    def _finish(self, report: pytest.TestReport, test: TestProgress) -> None:
        del self.running[report.nodeid]
        properties: dict[str, JsonValue] = {}
        for name, value in report.user_properties:
            # Kept as given, never stringified: the codec refuses a value JSON cannot hold.
            properties[str(name)] = cast(JsonValue, value)
        self.tests.append(
            TestReport(
                id=report.nodeid,
                outcome=test.outcome or "error",
                duration_s=test.duration_s,
                assertion_errors=tuple(test.errors),
                properties=properties,
                executions=tuple(test.executions),
            )
        )

    def suite(self) -> SuiteReport:
        """The whole session as a schema-4.0 suite, tests in the order they finished."""
        finished = datetime.now(UTC)
        started = datetime.fromisoformat(self.started_at)
        return SuiteReport(
            metadata=SuiteMetadata(
                producer="trialbook pytest plugin",
                trialbook_version=__version__,
                started_at=self.started_at,
                finished_at=finished.isoformat(),
                duration_s=(finished - started).total_seconds(),
                git_commit=os.environ.get("GITHUB_SHA") or None,
                ci_run_url=_ci_run_url(),
            ),
            tests=tuple(self.tests),
        )


def _ci_run_url() -> str | None:
    server, repo, run = (
        os.environ.get(k) for k in ("GITHUB_SERVER_URL", "GITHUB_REPOSITORY", "GITHUB_RUN_ID")
    )
    return f"{server}/{repo}/actions/runs/{run}" if server and repo and run else None


STATE = pytest.StashKey[PluginState]()
