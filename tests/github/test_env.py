from pathlib import Path

import pytest

from trialbook.errors import UsageError
from trialbook.github import ActionsEnv

from ._actions import actions_environ


def test_pull_request_environment(tmp_path: Path) -> None:
    env = ActionsEnv.from_environ(actions_environ(tmp_path, "pull_request_labeled"))
    assert env.event_name == "pull_request"
    assert env.repository == "acme/prompts"
    assert (env.owner, env.name) == ("acme", "prompts")
    assert env.run_id == "123456789"
    assert env.run_attempt == 2
    assert env.api_url == "https://api.github.com"
    assert env.job == "evals"
    assert env.base_ref == "main"
    assert env.head_ref == "guide-update"
    assert env.pr_number == 42
    assert env.pr_base_sha == "1" * 40
    assert env.pr_labels == ("docs", "run-evals")
    assert env.action == "labeled"
    assert env.added_label == "run-evals"
    assert env.from_fork is False
    assert env.inputs == {}
    assert env.run_url == "https://github.com/acme/prompts/actions/runs/123456789"
    assert env.output_path == tmp_path / "runner" / "output"
    assert env.summary_path == tmp_path / "runner" / "summary.md"


def test_added_label_only_on_labeled(tmp_path: Path) -> None:
    env = ActionsEnv.from_environ(actions_environ(tmp_path, "pull_request_synchronize"))
    assert env.action == "synchronize"
    assert env.added_label is None
    assert env.pr_labels == ("run-evals",)


def test_fork_pull_request(tmp_path: Path) -> None:
    env = ActionsEnv.from_environ(actions_environ(tmp_path, "pull_request_fork"))
    assert env.from_fork is True
    assert env.pr_number == 7


def test_dispatch_inputs_and_defaults(tmp_path: Path) -> None:
    environ = actions_environ(tmp_path, "workflow_dispatch_force_string")
    for name in ("GITHUB_API_URL", "GITHUB_SERVER_URL", "GITHUB_RUN_ATTEMPT", "GITHUB_BASE_REF"):
        del environ[name]
    env = ActionsEnv.from_environ(environ)
    assert env.inputs == {"force": "true"}
    assert env.api_url == "https://api.github.com"
    assert env.server_url == "https://github.com"
    assert env.run_attempt == 1
    assert env.base_ref is None
    assert env.pr_number is None
    assert env.pr_labels == ()


def test_enterprise_api_url(tmp_path: Path) -> None:
    environ = actions_environ(
        tmp_path,
        "schedule",
        GITHUB_API_URL="https://ghe.example.com/api/v3/",
        GITHUB_SERVER_URL="https://ghe.example.com",
    )
    env = ActionsEnv.from_environ(environ)
    assert env.api_url == "https://ghe.example.com/api/v3"
    assert env.run_url == "https://ghe.example.com/acme/prompts/actions/runs/123456789"


def test_missing_event_path_says_what_to_do(tmp_path: Path) -> None:
    environ = actions_environ(tmp_path, "schedule")
    del environ["GITHUB_EVENT_PATH"]
    with pytest.raises(UsageError, match=r"GITHUB_EVENT_PATH is not set.*trialbook eval"):
        ActionsEnv.from_environ(environ)


def test_unreadable_event_path(tmp_path: Path) -> None:
    missing = tmp_path / "nope.json"
    environ = actions_environ(tmp_path, "schedule", GITHUB_EVENT_PATH=str(missing))
    with pytest.raises(UsageError, match=rf"GITHUB_EVENT_PATH={missing}: cannot read the event payload"):
        ActionsEnv.from_environ(environ)


def test_event_payload_not_json(tmp_path: Path) -> None:
    bad = tmp_path / "event.json"
    bad.write_text('{\n  "action": \n}')
    environ = actions_environ(tmp_path, "schedule", GITHUB_EVENT_PATH=str(bad))
    with pytest.raises(UsageError, match=r"line 3: the event payload is not JSON"):
        ActionsEnv.from_environ(environ)


def test_event_payload_not_an_object(tmp_path: Path) -> None:
    bad = tmp_path / "event.json"
    bad.write_text("[]")
    environ = actions_environ(tmp_path, "schedule", GITHUB_EVENT_PATH=str(bad))
    with pytest.raises(UsageError, match="must be a JSON object"):
        ActionsEnv.from_environ(environ)


def test_bad_repository(tmp_path: Path) -> None:
    environ = actions_environ(tmp_path, "schedule", GITHUB_REPOSITORY="justaname")
    with pytest.raises(UsageError, match="expected owner/name"):
        ActionsEnv.from_environ(environ)
