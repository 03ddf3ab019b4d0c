"""Publishing a pull request's results from a ``workflow_run`` workflow, for pull requests from forks.

A fork's pull request runs with a read-only token, so its run cannot comment. The ``workflow_run``
workflow that GitHub starts when that run completes has a write token, downloads the run's results
artifact and publishes it. The artifact is untrusted: the fork's code ran in that job (a pull request
can even change the workflow file it runs), so everything in it is data an attacker may have written.
The publisher therefore

- reads only ``ci.json``, strictly (see :mod:`._state`), and runs nothing from the artifact;
- never records the artifact's history lines: a forged line carrying a real cache key would make later
  runs report an eval as passed without running it;
- finds the pull request from the event payload GitHub wrote (the triggering run's head repository,
  branch and commit) through the API, never from the artifact, and comments only on an open pull
  request whose head is still that commit and that carries the run label.
"""

from __future__ import annotations

import re
import urllib.parse
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ._env import ActionsEnv
from ._http import GitHubApi, GitHubApiError

__all__ = ["PullRequestTarget", "find_triggering_pull_request"]

_SHA = re.compile(r"[0-9a-f]{40}")
_REPOSITORY = re.compile(r"[\w.-]+/[\w.-]+")


@dataclass(frozen=True)
class PullRequestTarget:
    """The pull request to comment on and the head commit the results are for, or why there is none."""

    number: int | None
    reason: str
    head: str | None = None


def _dict(value: object) -> Mapping[str, Any]:
    return value if isinstance(value, dict) else {}


def _matches(pr: Mapping[str, Any], head_sha: str, head_repo: str) -> bool:
    head = _dict(pr.get("head"))
    return head.get("sha") == head_sha and _dict(head.get("repo")).get("full_name") == head_repo


def find_triggering_pull_request(api: GitHubApi, env: ActionsEnv, label: str) -> PullRequestTarget:
    """The open pull request whose run completed, found from the trusted ``workflow_run`` payload.

    ``workflow_run.pull_requests`` is empty for forks, so the pull requests of the triggering run's head
    branch are listed and the one whose head repository and commit match is taken.
    """
    run = _dict(env.event.get("workflow_run"))
    if run.get("event") != "pull_request":
        return PullRequestTarget(None, f"the run that made these results was a {run.get('event')!r} run")
    head_sha, head_branch = run.get("head_sha"), run.get("head_branch")
    head_repo = _dict(run.get("head_repository")).get("full_name")
    if not (
        isinstance(head_sha, str)
        and _SHA.fullmatch(head_sha)
        and isinstance(head_branch, str)
        and head_branch
        and isinstance(head_repo, str)
        and _REPOSITORY.fullmatch(head_repo)
    ):
        return PullRequestTarget(None, "the workflow_run payload names no head commit, branch and repository")
    owner = head_repo.partition("/")[0]
    query = urllib.parse.urlencode({"state": "open", "head": f"{owner}:{head_branch}", "per_page": "100"})
    try:
        candidates = [
            pr
            for pr in api.paginate(f"/repos/{env.repository}/pulls?{query}")
            if isinstance(pr, dict) and _matches(pr, head_sha, head_repo)
        ]
    except GitHubApiError as error:
        return PullRequestTarget(None, f"the pull request could not be looked up ({error})")
    if not candidates:
        return PullRequestTarget(
            None,
            f"no open pull request has head {head_repo}@{head_sha[:12]} any more (closed or pushed again)",
        )
    pr = candidates[0]
    number = pr.get("number")
    labels = [_dict(item).get("name") for item in pr.get("labels") or [] if isinstance(item, dict)]
    if not isinstance(number, int):
        return PullRequestTarget(None, "the API answered a pull request without a number")
    if label not in labels:
        return PullRequestTarget(None, f"PR #{number} does not carry the `{label}` label")
    return PullRequestTarget(number, f"PR #{number} ({head_repo}@{head_sha[:12]})", head_sha)


def comment_target(env: ActionsEnv, token: str | None, label: str) -> PullRequestTarget:
    """Which pull request this publish step may comment on, or why it comments on none.

    A pull request event names its own; a fork's token cannot write, so its own run leaves the comment
    to the ``workflow_run`` publisher (see docs/github-action.md); a ``workflow_run`` event looks the
    pull request up (:func:`find_triggering_pull_request`).
    """
    if env.event_name == "workflow_run":
        if not token:
            return PullRequestTarget(None, "no github-token was given")
        return find_triggering_pull_request(GitHubApi(token, api_url=env.api_url), env, label)
    if env.pr_number is None:
        return PullRequestTarget(None, "this is not a pull request")
    if env.from_fork:
        return PullRequestTarget(
            None,
            "this pull request comes from a fork, whose token is read-only; a workflow_run publish "
            "workflow posts the comment (docs/github-action.md, Pull requests from forks)",
        )
    return PullRequestTarget(env.pr_number, f"PR #{env.pr_number}", env.pr_head_sha or env.sha)
