"""The one sticky PR comment: found by its hidden marker, edited in place, never posted twice.

Every push to a labelled PR re-runs the evals; a new comment each time would bury the discussion, so the
comment carries an HTML marker that GitHub does not render and later runs edit that comment instead.
A comment is a convenience for reviewers, not the result itself: when it cannot be posted (a fork's
read-only token, a missing permission, an API outage) the run goes on and the result says why.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from ..report.markdown import STICKY_MARKER
from ._http import GitHubApi, GitHubApiError

__all__ = ["CommentResult", "find_sticky_comment", "upsert_sticky_comment"]

CommentAction = Literal["created", "updated", "unchanged", "not-posted"]


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


def find_sticky_comment(
    api: GitHubApi, repository: str, pr_number: int, *, marker: str = STICKY_MARKER
) -> dict[str, Any] | None:
    """The first comment on the PR whose body contains ``marker``, reading every page of comments."""
    path = f"/repos/{repository}/issues/{pr_number}/comments?per_page=100"
    for comment in api.paginate(path):
        if isinstance(comment, dict) and marker in str(comment.get("body") or ""):
            return comment
    return None


def upsert_sticky_comment(
    api: GitHubApi, repository: str, pr_number: int, body: str, *, marker: str = STICKY_MARKER
) -> CommentResult:
    """Create the sticky comment, or edit it in place when an earlier run already made one.

    Args:
        api: client holding the token.
        repository: ``owner/name``.
        pr_number: the pull request's number.
        body: Markdown to show, secrets already masked; the marker is added in front if missing.
        marker: the hidden text that identifies trialbook's comment.

    Returns:
        The outcome. API failures are returned (``posted=False`` with a reason), never raised, so a PR
        comment can never fail an eval run.
    """
    text = body if marker in body else f"{marker}\n{body}"
    try:
        existing = find_sticky_comment(api, repository, pr_number, marker=marker)
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
