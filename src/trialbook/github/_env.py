"""The GitHub Actions environment of one job step, read once from the variables and the event payload.

Everything `trialbook ci` decides depends on which event started the run and what its payload says
(labels, base branch, dispatch inputs). Reading it into one frozen record keeps the decisions pure and
lets tests build any event from a JSON fixture and a dict.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import UsageError

__all__ = ["DEFAULT_API_URL", "DEFAULT_SERVER_URL", "ActionsEnv"]

DEFAULT_API_URL = "https://api.github.com"
DEFAULT_SERVER_URL = "https://github.com"

_OUTSIDE_ACTIONS = (
    "`trialbook ci` reads the GitHub Actions environment; outside Actions, run `trialbook eval` instead "
    "(or set the variable to simulate a run)."
)


def _require(environ: Mapping[str, str], name: str) -> str:
    value = environ.get(name, "")
    if not value:
        raise UsageError(f"{name} is not set. {_OUTSIDE_ACTIONS}")
    return value


def _load_event(path_text: str) -> dict[str, Any]:
    path = Path(path_text)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise UsageError(
            f"GITHUB_EVENT_PATH={path_text}: cannot read the event payload ({exc.strerror or exc}). "
            "Point it at the JSON file the runner wrote for this event."
        ) from None
    try:
        payload = json.loads(text)
    except json.JSONDecodeError as exc:
        raise UsageError(
            f"GITHUB_EVENT_PATH={path_text}: line {exc.lineno}: the event payload is not JSON ({exc.msg})."
        ) from None
    if not isinstance(payload, dict):
        raise UsageError(f"GITHUB_EVENT_PATH={path_text}: the event payload must be a JSON object.")
    return payload


def _dict(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _int(value: str | int | None) -> int | None:
    if isinstance(value, int):
        return value
    return int(value) if value and value.isdigit() else None


@dataclass(frozen=True, kw_only=True)
class ActionsEnv:
    """What one Actions step knows about its run.

    Attributes:
        event_name: ``GITHUB_EVENT_NAME`` (``pull_request``, ``schedule``, ``workflow_dispatch``, …).
        event: the event payload from ``GITHUB_EVENT_PATH``.
        repository: ``owner/name``.
        run_id: ``GITHUB_RUN_ID``.
        run_attempt: ``GITHUB_RUN_ATTEMPT`` (1 when the runner did not say).
        server_url: web address of the GitHub instance.
        api_url: REST API root (``GITHUB_API_URL``; GitHub Enterprise Server has its own).
        job: ``GITHUB_JOB``, the job's id in the workflow.
        ref: ``GITHUB_REF``.
        sha: ``GITHUB_SHA``.
        base_ref: ``GITHUB_BASE_REF``, the PR's target branch; ``None`` outside pull requests.
        head_ref: ``GITHUB_HEAD_REF``, the PR's source branch; ``None`` outside pull requests.
        workspace: ``GITHUB_WORKSPACE``, the checkout annotations' file paths are relative to.
        output_path: ``GITHUB_OUTPUT``, the step outputs file.
        summary_path: ``GITHUB_STEP_SUMMARY``, the job summary file.
    """

    event_name: str
    event: Mapping[str, Any] = field(repr=False)
    repository: str
    run_id: str
    run_attempt: int = 1
    server_url: str = DEFAULT_SERVER_URL
    api_url: str = DEFAULT_API_URL
    job: str | None = None
    ref: str | None = None
    sha: str | None = None
    base_ref: str | None = None
    head_ref: str | None = None
    workspace: Path | None = None
    output_path: Path | None = None
    summary_path: Path | None = None

    @classmethod
    def from_environ(cls, environ: Mapping[str, str]) -> ActionsEnv:
        """Read the environment of a step (pass ``os.environ``).

        Raises:
            UsageError: a required variable is missing, or the event payload is missing or unreadable.
        """
        event_name = _require(environ, "GITHUB_EVENT_NAME")
        event = _load_event(_require(environ, "GITHUB_EVENT_PATH"))
        repository = _require(environ, "GITHUB_REPOSITORY")
        owner, _, name = repository.partition("/")
        if not owner or not name or "/" in name:
            raise UsageError(f"GITHUB_REPOSITORY={repository!r}: expected owner/name.")

        def opt(name: str) -> str | None:
            return environ.get(name) or None

        def opt_path(name: str) -> Path | None:
            value = opt(name)
            return Path(value) if value else None

        return cls(
            event_name=event_name,
            event=event,
            repository=repository,
            run_id=_require(environ, "GITHUB_RUN_ID"),
            run_attempt=_int(environ.get("GITHUB_RUN_ATTEMPT")) or 1,
            server_url=(opt("GITHUB_SERVER_URL") or DEFAULT_SERVER_URL).rstrip("/"),
            api_url=(opt("GITHUB_API_URL") or DEFAULT_API_URL).rstrip("/"),
            job=opt("GITHUB_JOB"),
            ref=opt("GITHUB_REF"),
            sha=opt("GITHUB_SHA"),
            base_ref=opt("GITHUB_BASE_REF"),
            head_ref=opt("GITHUB_HEAD_REF"),
            workspace=opt_path("GITHUB_WORKSPACE"),
            output_path=opt_path("GITHUB_OUTPUT"),
            summary_path=opt_path("GITHUB_STEP_SUMMARY"),
        )

    @property
    def owner(self) -> str:
        """The repository's owner."""
        return self.repository.partition("/")[0]

    @property
    def name(self) -> str:
        """The repository's name without the owner."""
        return self.repository.partition("/")[2]

    @property
    def run_url(self) -> str:
        """Web address of this workflow run (the page with the job summary and the artifacts)."""
        return f"{self.server_url}/{self.repository}/actions/runs/{self.run_id}"

    @property
    def action(self) -> str | None:
        """The payload's ``action`` (``labeled``, ``synchronize``, …), when the event has one."""
        value = self.event.get("action")
        return value if isinstance(value, str) else None

    @property
    def pull_request(self) -> Mapping[str, Any] | None:
        """The payload's ``pull_request`` object on pull request events."""
        value = self.event.get("pull_request")
        return value if isinstance(value, dict) else None

    @property
    def pr_number(self) -> int | None:
        """The pull request's number, on pull request events."""
        pr = self.pull_request
        if pr is None:
            return None
        number = pr.get("number", self.event.get("number"))
        return number if isinstance(number, int) else None

    @property
    def pr_base_sha(self) -> str | None:
        """The PR base branch's commit when the event fired."""
        base = _dict(self.pull_request.get("base") if self.pull_request else None)
        sha = base.get("sha")
        return sha if isinstance(sha, str) and sha else None

    @property
    def pr_head_sha(self) -> str | None:
        """The PR head commit the event fired for (``GITHUB_SHA`` is the test merge commit instead)."""
        head = _dict(self.pull_request.get("head") if self.pull_request else None)
        sha = head.get("sha")
        return sha if isinstance(sha, str) and sha else None

    @property
    def pr_labels(self) -> tuple[str, ...]:
        """Names of the labels on the pull request when the event fired (the added one included)."""
        labels = self.pull_request.get("labels") if self.pull_request else None
        if not isinstance(labels, list):
            return ()
        return tuple(label["name"] for label in labels if isinstance(label, dict) and "name" in label)

    @property
    def added_label(self) -> str | None:
        """The label this ``labeled`` event added; ``None`` for any other action."""
        if self.action != "labeled":
            return None
        name = _dict(self.event.get("label")).get("name")
        return name if isinstance(name, str) else None

    @property
    def inputs(self) -> Mapping[str, Any]:
        """``workflow_dispatch`` inputs as the payload holds them (strings, or booleans for some callers)."""
        return _dict(self.event.get("inputs")) if self.event_name == "workflow_dispatch" else {}

    @property
    def from_fork(self) -> bool:
        """Whether the pull request's head lives in another repository (its token is read-only)."""
        pr = self.pull_request
        if pr is None:
            return False
        head_repo = _dict(_dict(pr.get("head")).get("repo")).get("full_name")
        return isinstance(head_repo, str) and head_repo != self.repository
