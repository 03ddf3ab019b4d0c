from collections.abc import Iterator

import pytest

from trialbook.github import GitHubApi, GitHubApiError, upsert_sticky_comment
from trialbook.report.markdown import STICKY_MARKER

from ._fake_api import FakeGitHub, serve

TOKEN = "ghs_secretTOKENvalue123"


@pytest.fixture
def fake() -> Iterator[FakeGitHub]:
    with serve(FakeGitHub()) as server:
        yield server


def client(fake: FakeGitHub, sleeps: list[float] | None = None, retries: int = 3) -> GitHubApi:
    waits = sleeps if sleeps is not None else []
    return GitHubApi(TOKEN, api_url=fake.url, retries=retries, backoff_s=0.5, sleep=waits.append)


def test_first_run_creates_the_comment(fake: FakeGitHub) -> None:
    result = upsert_sticky_comment(client(fake), "acme/prompts", 42, "## results\n")
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
    first = upsert_sticky_comment(api, "acme/prompts", 42, f"{STICKY_MARKER}\nrun 1\n")
    second = upsert_sticky_comment(api, "acme/prompts", 42, f"{STICKY_MARKER}\nrun 2\n")
    assert (second.action, second.comment_id) == ("updated", first.comment_id)
    assert [c["body"] for c in fake.comments[42]] == [f"{STICKY_MARKER}\nrun 2\n"]
    assert [r.method for r in fake.requests] == ["GET", "POST", "GET", "PATCH"]
    assert fake.requests[-1].path == f"/repos/acme/prompts/issues/comments/{first.comment_id}"
    assert fake.requests[-1].body == {"body": f"{STICKY_MARKER}\nrun 2\n"}
    third = upsert_sticky_comment(api, "acme/prompts", 42, f"{STICKY_MARKER}\nrun 2\n")
    assert (third.posted, third.action) == (True, "unchanged")
    assert [r.method for r in fake.requests][-1] == "GET"


def test_marker_found_on_a_later_page(fake: FakeGitHub) -> None:
    for i in range(5):
        fake.add_comment(42, f"review comment {i}")
    sticky = fake.add_comment(42, f"{STICKY_MARKER}\nold results", user="github-actions[bot]")
    fake.add_comment(42, "a later remark")
    result = upsert_sticky_comment(client(fake), "acme/prompts", 42, "new results")
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
    result = upsert_sticky_comment(client(fake), "acme/prompts", 42, "results")
    assert result.action == "created"
    assert [r.method for r in fake.requests] == ["GET", "GET", "POST"]


def test_fork_read_only_token_is_reported_not_raised(fake: FakeGitHub) -> None:
    fake.scripted.append((403, {"message": "Resource not accessible by integration", "status": "403"}, {}))
    result = upsert_sticky_comment(client(fake), "acme/prompts", 7, "results")
    assert (result.posted, result.action) == (False, "not-posted")
    assert result.reason is not None
    assert "HTTP 403: Resource not accessible by integration" in result.reason
    assert "forks get a read-only token" in result.reason
    assert TOKEN not in result.reason
    assert len(fake.requests) == 1


def test_unauthorized_and_not_found(fake: FakeGitHub) -> None:
    fake.scripted.append((401, {"message": "Bad credentials"}, {}))
    result = upsert_sticky_comment(client(fake), "acme/prompts", 42, "results")
    assert result.reason is not None
    assert "token was rejected" in result.reason
    missing = upsert_sticky_comment(client(fake), "acme/nope", 42, "results")
    assert missing.reason is not None
    assert "HTTP 404" in missing.reason
    assert "pull request was not found" in missing.reason


def test_server_errors_are_retried_with_backoff(fake: FakeGitHub) -> None:
    fake.scripted += [(502, {"message": "Bad Gateway"}, {}), (503, {"message": "busy"}, {})]
    sleeps: list[float] = []
    result = upsert_sticky_comment(client(fake, sleeps), "acme/prompts", 42, "results")
    assert (result.posted, result.action) == (True, "created")
    assert sleeps == [0.5, 1.0]
    assert [r.method for r in fake.requests] == ["GET", "GET", "GET", "POST"]


def test_secondary_rate_limit_honours_retry_after(fake: FakeGitHub) -> None:
    fake.scripted.append((403, {"message": "You have exceeded a secondary rate limit"}, {"Retry-After": "7"}))
    sleeps: list[float] = []
    result = upsert_sticky_comment(client(fake, sleeps), "acme/prompts", 42, "results")
    assert result.action == "created"
    assert sleeps == [7.0]


def test_retries_are_bounded(fake: FakeGitHub) -> None:
    fake.scripted += [(500, {"message": "boom"}, {})] * 5
    sleeps: list[float] = []
    result = upsert_sticky_comment(client(fake, sleeps, retries=2), "acme/prompts", 42, "results")
    assert result.posted is False
    assert result.reason is not None
    assert "HTTP 500: boom" in result.reason
    assert sleeps == [0.5, 1.0]
    assert len(fake.requests) == 3


def test_connection_refused_is_an_error_not_a_crash() -> None:
    with serve(FakeGitHub()) as gone:
        url = gone.url
    api = GitHubApi(TOKEN, api_url=url, retries=1, sleep=lambda _: None)
    result = upsert_sticky_comment(api, "acme/prompts", 42, "results")
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
