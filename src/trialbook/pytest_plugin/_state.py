"""What the plugin remembers during a pytest session, and how a test's record is finalized.

A test's outcome and properties are fixed only after its teardown report: fixture cleanup may still fail
(or record properties), and a test whose setup or teardown failed is an ``error`` even if its body passed.
Executions are attached by the fixtures under the test's node id.

Each finished test is encoded at once (:func:`finish_test`), so a value the evidence cannot hold is
reported against the test that recorded it, and the rest of its record is still kept.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import cast

import pytest

from .. import __version__
from ..evidence import (
    EvidenceError,
    ExecutionRecord,
    JsonObject,
    JsonValue,
    Outcome,
    SuiteMetadata,
    SuiteReport,
    TestReport,
    dump_test,
)
from ._keys import STATE

__all__ = ["STATE", "FinishedTest", "PluginState", "TestProgress", "finish_test", "property_encodes"]


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


@dataclass(frozen=True)
class FinishedTest:
    """A finalized test, its schema-4.0 JSON, and why part of it could not be kept (``None`` if all was)."""

    test: TestReport
    data: JsonObject
    problem: str | None = None


def _encodes(test: TestReport) -> bool:
    try:
        dump_test(test)
    except EvidenceError:
        return False
    return True


def property_encodes(name: object, value: object) -> bool:
    """Whether one ``record_property`` value can be saved as it is."""
    return _encodes(TestReport(id="", outcome="passed", properties={str(name): cast(JsonValue, value)}))


def finish_test(test: TestReport) -> FinishedTest:
    """Encode one test; a value that cannot be saved turns the test into an ``error`` that says why.

    The properties and executions that do encode are kept, so one bad value loses only itself.
    """
    try:
        return FinishedTest(test, dump_test(test))
    except EvidenceError as exc:
        problem = (
            f"{test.id}: part of this test's record cannot be saved, so it is recorded as an error: {exc}"
        )
    properties = {
        name: value
        for name, value in test.properties.items()
        if _encodes(TestReport(id=test.id, outcome=test.outcome, properties={name: value}))
    }
    executions = tuple(
        execution
        for execution in test.executions
        if _encodes(TestReport(id=test.id, outcome=test.outcome, executions=(execution,)))
    )
    kept = TestReport(
        id=test.id,
        outcome="error",
        duration_s=test.duration_s,
        assertion_errors=(*test.assertion_errors, problem),
        properties=properties,
        executions=executions,
    )
    return FinishedTest(kept, dump_test(kept), problem)


@dataclass
class PluginState:
    """Kept in ``config.stash``: the evidence path, finished tests and tests in progress."""

    evidence_path: str | None
    started_at: str = field(default_factory=lambda: datetime.now(UTC).isoformat())
    tests: list[TestReport] = field(default_factory=list)
    running: dict[str, TestProgress] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)

    def progress(self, nodeid: str) -> TestProgress:
        return self.running.setdefault(nodeid, TestProgress())

    def add(self, finished: FinishedTest) -> None:
        """Keep a finished test (from this process or an xdist worker) and any problem saving it."""
        self.tests.append(finished.test)
        if finished.problem is not None:
            self.problems.append(finished.problem)

    def record(self, report: pytest.TestReport) -> FinishedTest | None:
        """Fold one phase report in; the teardown report finalizes the test and returns it."""
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
            return self._finish(report, test)
        return None

    def _finish(self, report: pytest.TestReport, test: TestProgress) -> FinishedTest:
        del self.running[report.nodeid]
        properties: dict[str, JsonValue] = {}
        for name, value in report.user_properties:
            # Kept as given, never stringified: the codec refuses a value JSON cannot hold.
            properties[str(name)] = cast(JsonValue, value)
        finished = finish_test(
            TestReport(
                id=report.nodeid,
                outcome=test.outcome or "error",
                duration_s=test.duration_s,
                assertion_errors=tuple(test.errors),
                properties=properties,
                executions=tuple(test.executions),
            )
        )
        self.add(finished)
        return finished

    def crashed(self, nodeid: str, message: str) -> None:
        """An xdist worker died inside this test: it is an ``error`` saying so, with what arrived of it."""
        seen = nodeid in self.running
        test = self.running.pop(nodeid, TestProgress())
        self.add(
            finish_test(
                TestReport(
                    id=nodeid,
                    outcome="error",
                    duration_s=test.duration_s if seen else None,
                    assertion_errors=(*test.errors, message),
                    properties={},
                    executions=tuple(test.executions),
                )
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
