from collections.abc import Iterator
from typing import Any

import pytest

from trialbook.github import GitHubApi, GitHubApiError, upsert_sticky_comment
from trialbook.github._comment import ACTIONS_BOT, CommentResult
from trialbook.report.markdown import STICKY_MARKER, render_pr_comment, sticky_marker

from ._fake_api import FakeGitHub, serve

TOKEN = "ghs_secretTOKENvalue123"


@pytest.fixture
def fake() -> Iterator[FakeGitHub]:
    with serve(FakeGitHub()) as server:
        yield server


def client(fake: FakeGitHub, sleeps: list[float] | None = None, retries: int = 3) -> GitHubApi:
    waits = sleeps if sleeps is not None else []
    return GitHubApi(TOKEN, api_url=fake.url, retries=retries, backoff_s=0.5, sleep=waits.append)


def upsert(api: GitHubApi, repository: str, pr: int, body: str, **kwargs: Any) -> CommentResult:
    """The comment calls alone: the token's identity is given, so no ``GET /user`` comes first."""
    return upsert_sticky_comment(api, repository, pr, body, **{"author": ACTIONS_BOT, **kwargs})


def test_first_run_creates_the_comment(fake: FakeGitHub) -> None:
    result = upsert(client(fake), "acme/prompts", 42, "## results\n")
    assert (result.posted, result.action, result.reason) == (True, "created", None)
    assert result.url == f"https://github.com/acme/prompts/pull/42#issuecomment-{result.comment_id}"
    assert [c["body"] for c in fake.comments[42]] == [f"{STICKY_MARKER}\n## results\n"]
    get, post = fake.requests
    assert (get.method, get.path) == ("GET", "/repos/acme/prompts/issues/42/comments?per_page=100")
    assert (post.method, post.path) == ("POST", "/repos/acme/prompts/issues/42/comments")
    for request in fake.requests:
        assert request.headers["authorization"] == f"Bearer {TOKEN}"
        assert request.headers["accept"] == "application/vnd.github+json"
        assert request.headers["x-github-api-version"] == "2022-11-28"
        assert request.headers["user-agent"].startswith("trialbook/")


def test_second_run_updates_in_place(fake: FakeGitHub) -> None:
    api = client(fake)
    first = upsert(api, "acme/prompts", 42, f"{STICKY_MARKER}\nrun 1\n")
    second = upsert(api, "acme/prompts", 42, f"{STICKY_MARKER}\nrun 2\n")
    assert (second.action, second.comment_id) == ("updated", first.comment_id)
    assert [c["body"] for c in fake.comments[42]] == [f"{STICKY_MARKER}\nrun 2\n"]
    assert [r.method for r in fake.requests] == ["GET", "POST", "GET", "PATCH"]
    assert fake.requests[-1].path == f"/repos/acme/prompts/issues/comments/{first.comment_id}"
    assert fake.requests[-1].body == {"body": f"{STICKY_MARKER}\nrun 2\n"}
    third = upsert(api, "acme/prompts", 42, f"{STICKY_MARKER}\nrun 2\n")
    assert (third.posted, third.action) == (True, "unchanged")
    assert [r.method for r in fake.requests][-1] == "GET"


def test_marker_found_on_a_later_page(fake: FakeGitHub) -> None:
    for i in range(5):
        fake.add_comment(42, f"review comment {i}")
    sticky = fake.add_comment(42, f"{STICKY_MARKER}\nold results", user="github-actions[bot]")
    fake.add_comment(42, "a later remark")
    result = upsert(client(fake), "acme/prompts", 42, "new results")
    assert (result.action, result.comment_id) == ("updated", sticky["id"])
    gets = [r.path for r in fake.requests if r.method == "GET"]
    assert gets == [
        "/repos/acme/prompts/issues/42/comments?per_page=100",
        "/repos/acme/prompts/issues/42/comments?per_page=100&page=2",
        "/repos/acme/prompts/issues/42/comments?per_page=100&page=3",
    ]
    assert len(fake.comments[42]) == 7
    assert sticky["body"] == f"{STICKY_MARKER}\nnew results"


def test_no_marker_on_any_page_creates_one(fake: FakeGitHub) -> None:
    for i in range(3):
        fake.add_comment(42, f"review comment {i}")
    result = upsert(client(fake), "acme/prompts", 42, "results")
    assert result.action == "created"
    assert [r.method for r in fake.requests] == ["GET", "GET", "POST"]


def test_fork_read_only_token_is_reported_not_raised(fake: FakeGitHub) -> None:
    fake.scripted.append((403, {"message": "Resource not accessible by integration", "status": "403"}, {}))
    result = upsert(client(fake), "acme/prompts", 7, "results")
    assert (result.posted, result.action) == (False, "not-posted")
    assert result.reason is not None
    assert "HTTP 403: Resource not accessible by integration" in result.reason
    assert "forks get a read-only token" in result.reason
    assert TOKEN not in result.reason
    assert len(fake.requests) == 1


def test_unauthorized_and_not_found(fake: FakeGitHub) -> None:
    fake.scripted.append((401, {"message": "Bad credentials"}, {}))
    result = upsert(client(fake), "acme/prompts", 42, "results")
    assert result.reason is not None
    assert "token was rejected" in result.reason
    missing = upsert(client(fake), "acme/nope", 42, "results")
    assert missing.reason is not None
    assert "HTTP 404" in missing.reason
    assert "pull request was not found" in missing.reason


def test_server_errors_are_retried_with_backoff(fake: FakeGitHub) -> None:
    fake.scripted += [(502, {"message": "Bad Gateway"}, {}), (503, {"message": "busy"}, {})]
    sleeps: list[float] = []
    result = upsert(client(fake, sleeps), "acme/prompts", 42, "results")
    assert (result.posted, result.action) == (True, "created")
    assert sleeps == [0.5, 1.0]
    assert [r.method for r in fake.requests] == ["GET", "GET", "GET", "POST"]


def test_secondary_rate_limit_honours_retry_after(fake: FakeGitHub) -> None:
    fake.scripted.append((403, {"message": "You have exceeded a secondary rate limit"}, {"Retry-After": "7"}))
    sleeps: list[float] = []
    result = upsert(client(fake, sleeps), "acme/prompts", 42, "results")
    assert result.action == "created"
    assert sleeps == [7.0]


def test_retries_are_bounded(fake: FakeGitHub) -> None:
    fake.scripted += [(500, {"message": "boom"}, {})] * 5
    sleeps: list[float] = []
    result = upsert(client(fake, sleeps, retries=2), "acme/prompts", 42, "results")
    assert result.posted is False
    assert result.reason is not None
    assert "HTTP 500: boom" in result.reason
    assert sleeps == [0.5, 1.0]
    assert len(fake.requests) == 3


def test_connection_refused_is_an_error_not_a_crash() -> None:
    with serve(FakeGitHub()) as gone:
        url = gone.url
    api = GitHubApi(TOKEN, api_url=url, retries=1, sleep=lambda _: None)
    result = upsert(api, "acme/prompts", 42, "results")
    assert result.posted is False
    assert result.reason is not None
    assert "no response" in result.reason


def test_token_only_goes_to_the_api_host(fake: FakeGitHub) -> None:
    with pytest.raises(GitHubApiError, match="refusing to send the token"):
        client(fake).request("GET", "https://elsewhere.invalid/steal")
    assert fake.requests == []
    with pytest.raises(ValueError, match="use https"):
        GitHubApi(TOKEN, api_url="http://api.example.com")
    assert TOKEN not in repr(client(fake))


def test_the_workflow_token_is_the_actions_bot_and_finds_its_own_comment(fake: FakeGitHub) -> None:
    ours = fake.add_comment(42, f"{STICKY_MARKER}\nold", user=ACTIONS_BOT)
    result = upsert_sticky_comment(client(fake), "acme/prompts", 42, "new")
    assert (result.action, result.comment_id) == ("updated", ours["id"])
    assert [(r.method, r.path.split("?")[0]) for r in fake.requests][:1] == [("GET", "/user")]


def test_a_user_token_is_who_get_user_says(fake: FakeGitHub) -> None:
    fake.login = "octo-maintainer"
    bots = fake.add_comment(42, f"{STICKY_MARKER}\nposted by the workflow token", user=ACTIONS_BOT)
    mine = fake.add_comment(42, f"{STICKY_MARKER}\nposted with this token", user="octo-maintainer")
    result = upsert_sticky_comment(client(fake), "acme/prompts", 42, "new")
    assert (result.action, result.comment_id) == ("updated", mine["id"])
    assert bots["body"] == f"{STICKY_MARKER}\nposted by the workflow token"


def test_a_foreign_comment_carrying_the_marker_is_left_alone(fake: FakeGitHub) -> None:
    planted = f"{STICKY_MARKER}\nlooks like trialbook's, says all passed"
    foreign = fake.add_comment(42, planted, user="mallory")
    first = upsert_sticky_comment(client(fake), "acme/prompts", 42, "real results 1")
    second = upsert_sticky_comment(client(fake), "acme/prompts", 42, "real results 2")
    assert (first.action, second.action) == ("created", "updated")
    assert first.comment_id == second.comment_id != foreign["id"]
    assert foreign["body"] == planted
    assert [c["body"] for c in fake.comments[42]] == [planted, f"{STICKY_MARKER}\nreal results 2"]
    assert all(r.path != f"/repos/acme/prompts/issues/comments/{foreign['id']}" for r in fake.requests)


OLD, NEW = "a" * 40, "b" * 40


def test_results_for_an_old_head_never_replace_the_new_heads(fake: FakeGitHub) -> None:
    fake.heads[42] = NEW
    shown = fake.add_comment(
        42, f"{STICKY_MARKER}\n<!-- trialbook:head={NEW} -->\nnew head's results", ACTIONS_BOT
    )
    late = upsert_sticky_comment(client(fake), "acme/prompts", 42, "old head's results", head_sha=OLD)
    assert (late.posted, late.action, late.comment_id) == (False, "superseded", shown["id"])
    assert late.reason is not None and "bbbbbbb" in late.reason
    assert shown["body"].endswith("new head's results")
    assert [r.method for r in fake.requests] == ["GET", "GET", "GET"]


def test_results_for_an_old_head_are_posted_marked_outdated_when_nothing_newer_is_shown(
    fake: FakeGitHub,
) -> None:
    fake.heads[42] = NEW
    result = upsert_sticky_comment(
        client(fake),
        "acme/prompts",
        42,
        f"{STICKY_MARKER}\n<!-- trialbook:head={OLD} -->\nresults",
        head_sha=OLD,
    )
    assert result.action == "created"
    (comment,) = fake.comments[42]
    assert comment["body"].startswith(
        f"{STICKY_MARKER}\n> [!NOTE]\n> Outdated: these results are for aaaaaaa;"
    )
    assert "head is now bbbbbbb" in comment["body"]
    fresh = upsert_sticky_comment(
        client(fake), "acme/prompts", 42, f"{STICKY_MARKER}\n<!-- trialbook:head={NEW} -->\nnew", head_sha=NEW
    )
    assert fresh.action == "updated" and "Outdated" not in comment["body"]


def test_two_headers_keep_two_comments_and_a_bad_header_is_refused(fake: FakeGitHub) -> None:
    for header in ("nightly", "pr-evals", "nightly"):
        marker = sticky_marker(header)
        upsert_sticky_comment(client(fake), "acme/prompts", 42, f"results of {header}", marker=marker)
    bodies = sorted(c["body"] for c in fake.comments[42])
    assert bodies == [
        "<!-- trialbook:sticky:nightly -->\nresults of nightly",
        "<!-- trialbook:sticky:pr-evals -->\nresults of pr-evals",
    ]
    for bad in ("", " lead", "a-->b", "x" * 65, "new\nline", "<b>"):
        with pytest.raises(ValueError, match="comment header"):
            sticky_marker(bad)


def test_the_comment_names_its_commit_and_time() -> None:
    body = render_pr_comment(
        [], head_sha="0123456789abcdef0123456789abcdef01234567", updated_at="2026-12-01 12:00 UTC"
    )
    assert body.splitlines()[:2] == [
        STICKY_MARKER,
        "<!-- trialbook:head=0123456789abcdef0123456789abcdef01234567 -->",
    ]
    assert "Results for commit 0123456 · updated 2026-12-01 12:00 UTC" in body
