"""A second label arriving while evals run: the workflow's own `if` and `concurrency`, evaluated per event.

GitHub cancels a running job when another job joins its concurrency group with `cancel-in-progress`. A
job whose `if` is false never joins a group, and a workflow-level group would be joined before any `if`.
So for every pair of events (the one that started the running job, the one arriving mid-run) this
evaluates, with the workflow file itself, which jobs the second event starts and in which groups.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from ._actions import DATA
from ._expressions import evaluate, interpolate
from .test_action_docs import documented_workflows

WORKFLOW = Path(__file__).resolve().parents[2] / ".github/workflows/evals.yml"


def _context(event_name: str, payload: dict[str, Any]) -> dict[str, Any]:
    pr = payload.get("pull_request")
    ref = f"refs/pull/{pr['number']}/merge" if pr else "refs/heads/main"
    return {"github": {"event_name": event_name, "event": payload, "ref": ref}, "inputs": {}}


def _started(
    event_name: str, payload: dict[str, Any], workflow_text: str | None = None
) -> dict[str, tuple[str, bool]]:
    """job id → (concurrency group, cancel-in-progress) for every job this event starts.

    A matrix job starts once per value of its one matrix key, as ``job[value]``.
    """
    workflow = yaml.safe_load(workflow_text if workflow_text is not None else WORKFLOW.read_text())
    assert "concurrency" not in workflow, "a workflow-level group is joined before any job's `if`"
    context = _context(event_name, payload)
    started: dict[str, tuple[str, bool]] = {}
    for name, job in workflow["jobs"].items():
        condition = job.get("if", "success()")
        if not evaluate(condition.replace("${{", "").replace("}}", ""), context):
            continue
        matrix = job.get("strategy", {}).get("matrix", {})
        instances = {name: context}
        if matrix:
            ((key, values),) = matrix.items()
            instances = {f"{name}[{value}]": {**context, "matrix": {key: value}} for value in values}
        for instance, scope in instances.items():
            group = interpolate(job["concurrency"]["group"], scope)
            started[instance] = (group, bool(job["concurrency"]["cancel-in-progress"]))
    return started


def _labeled(name: str) -> dict[str, Any]:
    payload: dict[str, Any] = copy.deepcopy(json.loads((DATA / "pull_request_labeled.json").read_text()))
    payload["label"] = {"name": name}
    labels = [label["name"] for label in payload["pull_request"]["labels"]]
    if name not in labels:
        payload["pull_request"]["labels"].append({"name": name})
    return payload


def _cancelled_by(first: dict[str, tuple[str, bool]], second: dict[str, tuple[str, bool]]) -> set[str]:
    """Jobs of the first event that a job of the second event cancels by joining their group."""
    groups = {group for group, cancel in second.values() if cancel}
    return {name for name, (group, _) in first.items() if group in groups}


def test_the_run_label_starts_the_pr_job_in_its_pull_requests_group() -> None:
    started = _started("pull_request", _labeled("run-evals"))
    assert started == {"evals-pr": ("evals-pr-42", True)}


@pytest.mark.parametrize("other", ["needs-review", "docs", "Run-Evals-Later"])
def test_another_label_mid_run_starts_nothing_so_nothing_is_cancelled(other: str) -> None:
    running = _started("pull_request", _labeled("run-evals"))
    arriving = _started("pull_request", _labeled(other))
    assert arriving == {}
    assert _cancelled_by(running, arriving) == set()


def test_a_new_push_supersedes_the_older_heads_run_and_only_that() -> None:
    running = _started("pull_request", _labeled("run-evals"))
    push = json.loads((DATA / "pull_request_synchronize.json").read_text())
    arriving = _started("pull_request", push)
    assert _cancelled_by(running, arriving) == {"evals-pr"}


def test_a_nightly_never_cancels_a_pr_run_and_a_second_nightly_waits() -> None:
    running = _started("pull_request", _labeled("run-evals"))
    nightly = _started("schedule", {"schedule": "17 3 * * *"})
    assert nightly == {
        "evals": ("evals-refs/heads/main", False),
        "publish": ("evals-publish-refs/heads/main", False),  # waits for the run, never cancels one
    }
    assert _cancelled_by(running, nightly) == set()
    assert _cancelled_by(nightly, nightly) == set()  # queued behind the running one, not cancelling it


def test_the_evaluator_reads_the_expressions_it_is_used_for() -> None:
    context = {"github": {"event": {"pull_request": {"labels": [{"name": "a"}, {"name": "B"}]}}}}
    assert evaluate("contains(github.event.pull_request.labels.*.name, 'b')", context) is True
    assert evaluate("github.event.action != 'labeled' || 'x' == 'X'", context) is True
    assert evaluate("github.event.missing && 'y'", context) is None
    with pytest.raises(ValueError, match="not supported"):
        evaluate("startsWith(github.ref, 'refs/')", context)


def test_the_run_label_added_again_restarts_the_run_in_the_same_group() -> None:
    running = _started("pull_request", _labeled("run-evals"))
    again = _started("pull_request", _labeled("run-evals"))
    assert again == running and _cancelled_by(running, again) == {"evals-pr"}


def test_the_docs_complete_workflow_keeps_a_pr_run_through_another_label_and_the_nightly() -> None:
    """The same events against docs/github-action.md's workflow: shards, their publish job, the PR job."""
    documented = documented_workflows()["evals.yml"]
    running = _started("pull_request", _labeled("run-evals"), documented)
    assert running == {"pull-request": ("evals-pr-42", True)}
    for other in ("needs-review", "docs"):
        assert _started("pull_request", _labeled(other), documented) == {}
    push = json.loads((DATA / "pull_request_synchronize.json").read_text())
    assert _cancelled_by(running, _started("pull_request", push, documented)) == {"pull-request"}
    nightly = _started("schedule", {"schedule": "17 3 * * *"}, documented)
    assert nightly == {
        "shards[1]": ("evals-refs/heads/main-shard-1", False),
        "shards[2]": ("evals-refs/heads/main-shard-2", False),
        "shards[3]": ("evals-refs/heads/main-shard-3", False),
        "publish": ("evals-publish-refs/heads/main", False),
    }  # a group per shard: one group for all would run them one after another
    assert _cancelled_by(running, nightly) == set()
    assert _cancelled_by(nightly, nightly) == set()
