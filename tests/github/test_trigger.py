from pathlib import Path

import pytest

from trialbook.errors import RefusedRunError, UsageError
from trialbook.github import ActionsEnv, TriggerPlan, decide_trigger, truthy_input

from ._actions import actions_environ


def env_for(tmp_path: Path, fixture: str, **overrides: str) -> ActionsEnv:
    return ActionsEnv.from_environ(actions_environ(tmp_path, fixture, **overrides))


def test_labelled_pull_request_runs_changed_evals(tmp_path: Path) -> None:
    plan = decide_trigger(env_for(tmp_path, "pull_request_labeled"))
    assert plan == TriggerPlan(
        run=True,
        reason="PR #42 has the `run-evals` label: running evals whose prompt changed against origin/main.",
        changed=True,
        base="origin/main",
        force=False,
        push_history=True,
        comment=True,
    )


def test_push_to_labelled_pull_request_runs(tmp_path: Path) -> None:
    plan = decide_trigger(env_for(tmp_path, "pull_request_synchronize"))
    assert (plan.run, plan.changed, plan.base, plan.force) == (True, True, "origin/main", False)


def test_pull_request_without_label_skips(tmp_path: Path) -> None:
    plan = decide_trigger(env_for(tmp_path, "pull_request_unlabeled_pr"))
    assert plan.run is False
    assert plan.reason == "PR #42 has no `run-evals` label, so no evals run; add the label to run them."


def test_other_label_added_skips(tmp_path: Path) -> None:
    plan = decide_trigger(env_for(tmp_path, "pull_request_labeled_other"))
    assert plan.run is False
    assert "`docs` was added to PR #42, not `run-evals`" in plan.reason


def test_custom_label(tmp_path: Path) -> None:
    plan = decide_trigger(env_for(tmp_path, "pull_request_labeled_other"), label="docs")
    assert plan.run is True
    assert "`docs` label" in plan.reason


def test_pull_request_falls_back_to_base_sha(tmp_path: Path) -> None:
    plan = decide_trigger(env_for(tmp_path, "pull_request_labeled", GITHUB_BASE_REF=""))
    assert plan.base == "1" * 40


def test_pull_request_base_and_changed_overrides(tmp_path: Path) -> None:
    env = env_for(tmp_path, "pull_request_labeled")
    assert decide_trigger(env, base="origin/release").base == "origin/release"
    everything = decide_trigger(env, changed=False)
    assert (everything.run, everything.changed) == (True, False)
    assert "running all selected evals" in everything.reason
    forced = decide_trigger(env, force=True)
    assert (forced.force, forced.changed) == (True, True)


def test_pull_request_without_any_base_is_an_error(tmp_path: Path) -> None:
    env = env_for(tmp_path, "pull_request_labeled", GITHUB_BASE_REF="")
    stripped = ActionsEnv(
        event_name=env.event_name,
        event={**env.event, "pull_request": {**env.event["pull_request"], "base": {}}},
        repository=env.repository,
        run_id=env.run_id,
    )
    with pytest.raises(UsageError, match="set the action's `base` input"):
        decide_trigger(stripped)


def test_schedule_runs_moved_cache_keys(tmp_path: Path) -> None:
    plan = decide_trigger(env_for(tmp_path, "schedule"))
    assert plan == TriggerPlan(
        run=True,
        reason="scheduled run: every eval whose cache key moved since its last recorded result.",
        changed=False,
        base=None,
        force=False,
        push_history=True,
        comment=False,
    )


def test_push_is_like_schedule(tmp_path: Path) -> None:
    plan = decide_trigger(env_for(tmp_path, "push"))
    assert (plan.run, plan.changed, plan.force) == (True, False, False)
    assert plan.reason.startswith("push run: every eval whose cache key moved")


@pytest.mark.parametrize(
    ("fixture", "force"),
    [
        ("workflow_dispatch_force_string", True),
        ("workflow_dispatch_force_bool", True),
        ("workflow_dispatch_no_force", False),
    ],
)
def test_dispatch_honours_force(tmp_path: Path, fixture: str, force: bool) -> None:
    plan = decide_trigger(env_for(tmp_path, fixture))
    assert (plan.run, plan.force, plan.changed) == (True, force, False)
    if force:
        assert plan.reason == "manual run: forced re-run of every selected eval."


def test_explicit_force_overrides_dispatch_input(tmp_path: Path) -> None:
    assert decide_trigger(env_for(tmp_path, "workflow_dispatch_force_string"), force=False).force is False
    assert decide_trigger(env_for(tmp_path, "schedule"), force=True).force is True


def test_changed_outside_pull_requests_needs_base(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="also set `base`"):
        decide_trigger(env_for(tmp_path, "schedule"), changed=True)
    plan = decide_trigger(env_for(tmp_path, "schedule"), base="origin/main")
    assert (plan.changed, plan.base) == (True, "origin/main")
    assert plan.reason.endswith("limited to prompts changed against origin/main.")


def test_pull_request_target_is_refused(tmp_path: Path) -> None:
    env = env_for(tmp_path, "pull_request_labeled", GITHUB_EVENT_NAME="pull_request_target")
    with pytest.raises(RefusedRunError, match="pull_request_target"):
        decide_trigger(env)


@pytest.mark.parametrize(
    ("value", "expected"), [(True, True), (False, False), ("true", True), ("FALSE", False), ("", False)]
)
def test_truthy_input(value: object, expected: bool) -> None:
    assert truthy_input(value, name="force") is expected


def test_truthy_input_rejects_typos() -> None:
    with pytest.raises(UsageError, match="input force: expected true or false, got 'ture'"):
        truthy_input("ture", name="force")


def test_skipped_pull_request_neither_pushes_nor_comments(tmp_path: Path) -> None:
    plan = decide_trigger(env_for(tmp_path, "pull_request_unlabeled_pr"), push_history=True, comment=True)
    assert (plan.run, plan.push_history, plan.comment) == (False, False, False)


def test_push_and_comment_overrides(tmp_path: Path) -> None:
    pr = env_for(tmp_path, "pull_request_labeled")
    quiet = decide_trigger(pr, comment=False, push_history=True)
    assert (quiet.comment, quiet.push_history) == (False, True)
    nightly = decide_trigger(env_for(tmp_path, "schedule"), comment=True, push_history=False)
    assert (nightly.comment, nightly.push_history) == (False, False)
