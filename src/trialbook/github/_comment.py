"""The one sticky PR comment: found by its hidden marker and its author, edited in place, never posted twice.

Every push to a labelled PR re-runs the evals; a new comment each time would bury the discussion, so the
comment carries an HTML marker that GitHub does not render and later runs edit that comment instead.
Only a comment the token's own identity wrote counts: anyone can paste the marker into a comment, and
such a comment is left alone (a new one is made beside it). The comment names the commit it reflects
(``<!-- trialbook:head=SHA -->``); a run for a commit that is no longer the PR's head never replaces the
results of the newer head, and what it posts is marked outdated.
A comment is a convenience for reviewers, not the result itself: when it cannot be posted (a fork's
read-only token, a missing permission, an API outage) the run goes on and the result says why.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Literal

from ..report.markdown import STICKY_MARKER
from ._http import GitHubApi, GitHubApiError

__all__ = ["ACTIONS_BOT", "CommentResult", "find_sticky_comment", "token_login", "upsert_sticky_comment"]

CommentAction = Literal["created", "updated", "unchanged", "not-posted", "superseded"]

ACTIONS_BOT = "github-actions[bot]"
"""Who writes comments made with the workflow's ``GITHUB_TOKEN``.

An installation token cannot ask who it is (``GET /user`` answers 403 "Resource not accessible by
integration"), and the workflow token is the usual one, so that is the fallback identity.
"""

_HEAD = re.compile(r"<!-- trialbook:head=([0-9a-f]{7,64}) -->")


@dataclass(frozen=True, kw_only=True)
class CommentResult:
    """What happened to the sticky comment.

    Attributes:
        posted: the PR now shows the new body.
        action: ``created``, ``updated``, ``unchanged`` (same body already there) or ``not-posted``.
        comment_id: the comment's id, when there is one.
        url: the comment's web address, when there is one.
        reason: why it was not posted, in words a workflow author can act on.
    """

    posted: bool
    action: CommentAction
    comment_id: int | None = None
    url: str | None = None
    reason: str | None = None


def _explain(error: GitHubApiError) -> str:
    if error.status == 401:
        return f"the token was rejected ({error}); check the action's github-token input."
    if error.status == 403:
        return (
            f"the token may not write PR comments ({error}). Pull requests from forks get a read-only "
            "token, so the results are in the job summary and the artifact only; for same-repository PRs "
            "grant `pull-requests: write` to the job."
        )
    if error.status == 404:
        return (
            f"the pull request was not found ({error}); check the repository and that the token can see it."
        )
    return f"the GitHub API failed ({error}); the job summary and the artifact still have the results."


def token_login(api: GitHubApi) -> str:
    """The login the token's comments carry: ``GET /user`` for user tokens, else :data:`ACTIONS_BOT`."""
    try:
        response = api.request("GET", "/user")
    except GitHubApiError:
        return ACTIONS_BOT
    login = response.body.get("login") if isinstance(response.body, dict) else None
    return login if isinstance(login, str) and login else ACTIONS_BOT


def _author(comment: dict[str, Any]) -> str | None:
    user = comment.get("user")
    login = user.get("login") if isinstance(user, dict) else None
    return login if isinstance(login, str) else None


def find_sticky_comment(
    api: GitHubApi, repository: str, pr_number: int, *, marker: str = STICKY_MARKER, author: str | None = None
) -> dict[str, Any] | None:
    """The first comment on the PR whose body holds ``marker`` (written by ``author``), on any page.

    With ``author``, a comment by anyone else is passed over even when it carries the marker.
    """
    path = f"/repos/{repository}/issues/{pr_number}/comments?per_page=100"
    for comment in api.paginate(path):
        if not isinstance(comment, dict) or marker not in str(comment.get("body") or ""):
            continue
        if author is None or _author(comment) == author:
            return comment
    return None


def _pr_head(api: GitHubApi, repository: str, pr_number: int) -> str | None:
    """The PR's head commit now, or ``None`` when the API cannot say (the check is then skipped)."""
    try:
        response = api.request("GET", f"/repos/{repository}/pulls/{pr_number}")
    except GitHubApiError:
        return None
    head = response.body.get("head") if isinstance(response.body, dict) else None
    sha = head.get("sha") if isinstance(head, dict) else None
    return sha if isinstance(sha, str) and sha else None


def head_of(body: str) -> str | None:
    """The commit a trialbook comment says it reflects (its ``trialbook:head`` marker)."""
    found = _HEAD.search(body)
    return found.group(1) if found else None


def _outdated(text: str, marker: str, head: str, current: str) -> str:
    banner = (
        f"> [!NOTE]\n> Outdated: these results are for {head[:7]}; the pull request's head is now "
        f"{current[:7]}, and a run for it replaces this comment.\n"
    )
    first, _, rest = text.partition("\n")
    return f"{first}\n{banner}{rest}" if first == marker else f"{banner}{text}"


def upsert_sticky_comment(
    api: GitHubApi,
    repository: str,
    pr_number: int,
    body: str,
    *,
    marker: str = STICKY_MARKER,
    author: str | None = None,
    head_sha: str | None = None,
) -> CommentResult:
    """Create the sticky comment, or edit it in place when an earlier run already made one.

    Args:
        api: client holding the token.
        repository: ``owner/name``.
        pr_number: the pull request's number.
        body: Markdown to show, secrets already masked; the marker is added in front if missing.
        marker: the hidden text that identifies trialbook's comment (one per ``--comment-header``).
        author: the login the token's comments carry; found with :func:`token_login` when not given.
        head_sha: the PR head commit these results are for. When the PR's head has moved on, a comment
            that already shows the new head is left alone (``superseded``); otherwise the body is
            posted marked outdated.

    Returns:
        The outcome. API failures are returned (``posted=False`` with a reason), never raised, so a PR
        comment can never fail an eval run.
    """
    text = body if marker in body else f"{marker}\n{body}"
    try:
        login = author or token_login(api)
        existing = find_sticky_comment(api, repository, pr_number, marker=marker, author=login)
        current = _pr_head(api, repository, pr_number) if head_sha else None
        if head_sha and current and current != head_sha:
            shown = head_of(str(existing.get("body") or "")) if existing else None
            if existing is not None and shown == current:
                return CommentResult(
                    posted=False,
                    action="superseded",
                    comment_id=existing.get("id"),
                    url=existing.get("html_url"),
                    reason=f"the pull request's head moved on to {current[:7]}, whose results the comment "
                    "already shows; these results are for an older commit",
                )
            text = _outdated(text, marker, head_sha, current)
        if existing is None:
            response = api.request("POST", f"/repos/{repository}/issues/{pr_number}/comments", {"body": text})
            action: CommentAction = "created"
        elif existing.get("body") == text:
            return CommentResult(
                posted=True, action="unchanged", comment_id=existing.get("id"), url=existing.get("html_url")
            )
        else:
            comment_id = existing.get("id")
            response = api.request(
                "PATCH", f"/repos/{repository}/issues/comments/{comment_id}", {"body": text}
            )
            action = "updated"
    except GitHubApiError as error:
        return CommentResult(posted=False, action="not-posted", reason=_explain(error))
    made = response.body if isinstance(response.body, dict) else {}
    return CommentResult(posted=True, action=action, comment_id=made.get("id"), url=made.get("html_url"))
