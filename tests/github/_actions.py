"""A simulated GitHub Actions step environment built from the payload fixtures in ``data/``."""

from __future__ import annotations

import shutil
from pathlib import Path

DATA = Path(__file__).parent / "data"

EVENT_NAMES = {
    "pull_request_labeled": "pull_request",
    "pull_request_labeled_other": "pull_request",
    "pull_request_synchronize": "pull_request",
    "pull_request_unlabeled_pr": "pull_request",
    "pull_request_fork": "pull_request",
    "schedule": "schedule",
    "workflow_dispatch_force_string": "workflow_dispatch",
    "workflow_dispatch_force_bool": "workflow_dispatch",
    "workflow_dispatch_no_force": "workflow_dispatch",
    "push": "push",
    "workflow_run_fork": "workflow_run",
}


def actions_environ(tmp_path: Path, fixture: str, **overrides: str) -> dict[str, str]:
    """Variables the runner sets for one step, with the fixture as the event payload.

    The step files (outputs, summary) are created empty in ``tmp_path/runner`` like the runner does.
    """
    runner = tmp_path / "runner"
    runner.mkdir(exist_ok=True)
    event_path = runner / "event.json"
    shutil.copyfile(DATA / f"{fixture}.json", event_path)
    (runner / "output").touch()
    (runner / "summary.md").touch()
    event_name = EVENT_NAMES[fixture]
    environ = {
        "CI": "true",
        "GITHUB_ACTIONS": "true",
        "GITHUB_EVENT_NAME": event_name,
        "GITHUB_EVENT_PATH": str(event_path),
        "GITHUB_REPOSITORY": "acme/prompts",
        "GITHUB_RUN_ID": "123456789",
        "GITHUB_RUN_ATTEMPT": "2",
        "GITHUB_SERVER_URL": "https://github.com",
        "GITHUB_API_URL": "https://api.github.com",
        "GITHUB_JOB": "evals",
        "GITHUB_REF": "refs/pull/42/merge" if event_name == "pull_request" else "refs/heads/main",
        "GITHUB_SHA": "3333333333333333333333333333333333333333",
        "GITHUB_BASE_REF": "main" if event_name == "pull_request" else "",
        "GITHUB_HEAD_REF": "guide-update" if event_name == "pull_request" else "",
        "GITHUB_WORKSPACE": str(tmp_path / "workspace"),
        "GITHUB_OUTPUT": str(runner / "output"),
        "GITHUB_STEP_SUMMARY": str(runner / "summary.md"),
    }
    environ.update(overrides)
    return environ
