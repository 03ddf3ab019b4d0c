"""Recording a session's tests into the evidence file, in one process or across pytest-xdist workers.

Under xdist each worker finalizes a test at its teardown report and attaches the encoded record to that
report, which xdist relays to the controller at once. The controller therefore holds every finished test
as it finishes: a worker that dies loses only the test it was running, which the controller records as an
``error`` from xdist's crash report. Only the controller (or a plain session) writes the file.

No hook here is an xdist hook, so nothing breaks when xdist is absent or blocked (``-p no:xdist``); the
relay is registered only in a worker, which exists only when xdist runs.
"""

from __future__ import annotations

import contextlib
import json
from pathlib import Path

import pytest

from .._util.fsutil import abandoned_temp_files
from ..evidence import EvidenceError, load_test, save_suite
from ._keys import STATE
from ._state import FinishedTest, PluginState, property_encodes

__all__ = ["register"]

_PAYLOAD = "trialbook_test"
_PROBLEM = "trialbook_problem"
_CRASH_PHASE = "???"  # the ``when`` of the report xdist makes for a test whose worker died


def register(config: pytest.Config, evidence_path: str) -> None:
    """Keep the plugin's state in ``config.stash`` and register the hooks for this process's role."""
    state = PluginState(evidence_path=evidence_path)
    config.stash[STATE] = state
    if hasattr(config, "workerinput"):
        config.pluginmanager.register(_WorkerRelay(state), "trialbook-worker-relay")
    else:
        config.pluginmanager.register(_Recorder(config, state), "trialbook-recorder")


class _WorkerRelay:
    """In an xdist worker: finalize each test and ride its record on the teardown report to the controller."""

    def __init__(self, state: PluginState) -> None:
        self.state = state

    @pytest.hookimpl(tryfirst=True)  # before xdist serializes the report and sends it
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        """Fold the phase in; at teardown attach the encoded test (and any problem saving it).

        A property value that JSON cannot hold would also break xdist's own transport of the report, so
        the report that travels carries its ``repr`` instead; the evidence records the test as an error.
        """
        finished = self.state.record(report)
        report.user_properties = [
            (name, value if property_encodes(name, value) else repr(value))
            for name, value in report.user_properties
        ]
        if finished is not None:
            setattr(report, _PAYLOAD, json.dumps(finished.data))
            setattr(report, _PROBLEM, finished.problem)


class _Recorder:
    """In a plain session or the xdist controller: collect finished tests and write the evidence file.

    Hooks are bound to one config, so nested sessions (pytester) never share records.
    """

    def __init__(self, config: pytest.Config, state: PluginState) -> None:
        self.config = config
        self.state = state
        self.write_error: str | None = None

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        """Fold a local phase report in, or take a worker's finished test the moment it arrives."""
        if getattr(report, "node", None) is None:
            self.state.record(report)
            return
        payload = getattr(report, _PAYLOAD, None)
        if isinstance(payload, str):
            self._take(report.nodeid, payload, getattr(report, _PROBLEM, None))
        elif report.when == _CRASH_PHASE:
            self.state.crashed(report.nodeid, report.longreprtext or "the xdist worker crashed")
        else:  # an earlier phase of a worker's test: kept so a crash can still say what arrived
            self.state.record(report)

    def _take(self, nodeid: str, payload: str, problem: object) -> None:
        self.state.running.pop(nodeid, None)
        try:
            test = load_test(json.loads(payload), f"tests[{nodeid!r}]")
        except (EvidenceError, ValueError) as exc:
            self.state.crashed(nodeid, f"{nodeid}: the worker's record could not be read: {exc}")
            self.state.problems.append(f"{nodeid}: the worker's record could not be read: {exc}")
            return
        self.state.add(FinishedTest(test, {}, problem if isinstance(problem, str) else None))

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        """Write the evidence file; a record that could not be saved, or a failed write, fails the run."""
        path = Path(self.state.evidence_path or "")
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            for abandoned in abandoned_temp_files(path.parent):  # a killed session's, writing here
                with contextlib.suppress(OSError):
                    abandoned.unlink()
            save_suite(self.state.suite(), path)
        except (EvidenceError, OSError) as exc:
            self.write_error = f"trialbook: could not write evidence to {path}: {exc}"
        if (self.write_error or self.state.problems) and session.exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED

    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        """Say where the evidence went, or loudly what did not get there."""
        for problem in self.state.problems:
            terminalreporter.write_line(f"trialbook: {problem}", red=True, bold=True)
        if self.write_error is not None:
            terminalreporter.write_line(self.write_error, red=True, bold=True)
        else:
            terminalreporter.write_line(f"trialbook: evidence written to {self.state.evidence_path}")
