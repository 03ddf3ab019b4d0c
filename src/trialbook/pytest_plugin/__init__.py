"""trialbook's pytest plugin: agent fixtures and a schema-4.0 evidence file for the whole session.

Registered through the ``pytest11`` entry point. Without ``--trialbook-evidence`` it only provides the
fixtures. Under pytest-xdist each worker finalizes its own tests and sends them to the controller, which
alone writes the file, atomically; a failed write makes pytest exit non-zero.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ..evidence import EvidenceError, save_suite, suite_from_json, suite_to_json
from ._fixtures import agent_eval, copilot_eval
from ._state import STATE, PluginState

__all__ = ["agent_eval", "copilot_eval"]

_WORKER_KEY = "trialbook_tests"
_FAILED_WRITE = pytest.StashKey[str]()


def pytest_addoption(parser: pytest.Parser) -> None:
    """Add ``--trialbook-evidence PATH``."""
    group = parser.getgroup("trialbook")
    group.addoption(
        "--trialbook-evidence",
        metavar="PATH",
        default=None,
        help="write the session's schema-4.0 evidence (outcomes, properties, agent executions) to PATH",
    )
    group.addoption(
        "--trialbook-unsafe-local",
        action="store_true",
        default=False,
        help="let copilot_eval and agent_eval run agents outside CI (CI=true allows them anyway)",
    )


def pytest_configure(config: pytest.Config) -> None:
    """Keep the plugin's state in ``config.stash`` and start recording test outcomes."""
    state = PluginState(evidence_path=config.getoption("trialbook_evidence"))
    config.stash[STATE] = state
    config.pluginmanager.register(_Recorder(config, state), "trialbook-recorder")


def _is_worker(config: pytest.Config) -> bool:
    return hasattr(config, "workerinput")


class _Recorder:
    """Hooks bound to one config, so nested sessions (pytester) never share records."""

    def __init__(self, config: pytest.Config, state: PluginState) -> None:
        self.config = config
        self.state = state

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        """Fold each phase report of a test run in this process into its record."""
        if getattr(report, "node", None) is not None:
            return  # relayed from an xdist worker, which keeps (and sends) its own records
        self.state.record(report)

    def pytest_testnodedown(self, node: object, error: object) -> None:
        """Controller side of xdist: take the tests a worker finalized."""
        output = getattr(node, "workeroutput", None)
        payload = output.get(_WORKER_KEY) if isinstance(output, dict) else None
        if payload is not None:
            self.state.tests.extend(suite_from_json(json.loads(payload)).tests)

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        """Workers send their tests; the controller (or a plain run) writes the evidence file."""
        if _is_worker(self.config):
            workeroutput = self.config.workeroutput  # type: ignore[attr-defined]
            workeroutput[_WORKER_KEY] = json.dumps(suite_to_json(self.state.suite()))
            return
        if self.state.evidence_path is None:
            return
        try:
            Path(self.state.evidence_path).parent.mkdir(parents=True, exist_ok=True)
            save_suite(self.state.suite(), self.state.evidence_path)
        except (EvidenceError, OSError) as exc:
            path = self.state.evidence_path
            self.config.stash[_FAILED_WRITE] = f"trialbook: could not write evidence to {path}: {exc}"
            if session.exitstatus == pytest.ExitCode.OK:
                session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, config: pytest.Config) -> None:
    """Say where the evidence went, or loudly that it did not."""
    failure = config.stash.get(_FAILED_WRITE, None)
    state = config.stash.get(STATE, None)
    if failure is not None:
        terminalreporter.write_line(failure, red=True, bold=True)
    elif state is not None and state.evidence_path is not None and not _is_worker(config):
        terminalreporter.write_line(f"trialbook: evidence written to {state.evidence_path}")
