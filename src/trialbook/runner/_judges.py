"""The judges' edge: turning an eval file's judges into requests, and keeping every call as evidence.

:class:`RunJudges` is one per run (its :class:`JudgeClient` caches answers across trials);
:class:`TrialJudges` answers one trial's ``judge`` assertions and remembers each call for ``result.json``.
A judge's base URL and key come from the eval file (``{{ secrets.NAME }}`` filled in here) or, as for the
agents, from the provider's variables of the runner's environment.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..assertions import Answer, Assertion, JudgeRef, parse_answer
from ..evalfiles import fill_secrets
from ..evidence import JsonObject, JsonValue
from ..masking import Masker

if TYPE_CHECKING:
    # The client loads urllib's HTTP stack: only runs whose evals judge load it (see __post_init__).
    from ..agents.judge_client import JudgeCall, JudgeClient, JudgeModel

__all__ = [
    "DEFAULT_BASE_URLS",
    "RunJudges",
    "TrialJudges",
    "changes_diff",
    "judge_call_from_json",
    "judge_call_json",
    "judge_cost",
    "uses_judges",
]

DEFAULT_BASE_URLS = {"anthropic": "https://api.anthropic.com", "openai": "https://api.openai.com/v1"}
"""Where a judge is asked when neither the eval file nor the environment names a base URL."""

_VARIABLES = {
    "anthropic": ("ANTHROPIC_BASE_URL", "ANTHROPIC_API_KEY"),
    "openai": ("OPENAI_BASE_URL", "OPENAI_API_KEY"),
}


def uses_judges(assertions: Sequence[Assertion]) -> bool:
    """Whether any of ``assertions`` asks judges."""
    return any(assertion.kind == "judge" for assertion in assertions)


@dataclass
class RunJudges:
    """What every trial's judges share: the client (and its cache), the secrets and the environment."""

    masker: Masker
    secret_values: Mapping[str, str]
    environ: Mapping[str, str] = field(default_factory=lambda: dict(os.environ))
    client: JudgeClient = field(init=False)

    def __post_init__(self) -> None:
        from ..agents.judge_client import JudgeClient

        self.client = JudgeClient(self.masker)

    def model(self, judge: JudgeRef) -> JudgeModel:
        """How ``judge`` is asked: the eval file's settings, else the provider's variables, else defaults."""
        from ..agents.judge_client import JudgeModel

        url_variable, key_variable = _VARIABLES[judge.provider]
        base_url = judge.base_url or self.environ.get(url_variable) or DEFAULT_BASE_URLS[judge.provider]
        key = self.environ.get(key_variable) or None
        if judge.api_key is not None:
            filled = fill_secrets(judge.api_key, lambda name: self.secret_values.get(name, ""))
            key = str(filled) or None
        return JudgeModel(judge.provider, base_url, judge.model, key)

    def for_trial(self, diff: str | None) -> TrialJudges:
        """The asker of one trial, whose agent's changes read as ``diff``."""
        return TrialJudges(self, diff)

    def remember(self, recorded: Sequence[JudgeCall]) -> None:
        """Serve these recorded answers again by their input hash (re-scoring a kept run)."""
        for call in recorded:
            self.client.remember(call)


@dataclass
class TrialJudges:
    """:class:`trialbook.assertions.JudgeAsker` for one trial, keeping every call in order."""

    run: RunJudges
    changes: str | None
    calls: list[JudgeCall] = field(default_factory=list)

    def ask(self, judge: JudgeRef, rubric: str, shown: str) -> Answer:
        """Ask one judge (or read its cached answer) and keep the call as evidence."""
        call = self.run.client.ask(self.run.model(judge), rubric, shown)
        self.calls.append(call)
        return call.parsed

    def diff(self) -> str | None:
        """The agent's changes as the trial's ``changes.json`` records them (masked)."""
        return self.changes


def changes_diff(changes: JsonObject) -> str | None:
    """The unified diffs of a change record, one file after another; ``None`` when it lists no files."""
    files = changes.get("files")
    if not isinstance(files, list):
        return None
    parts: list[str] = []
    for entry in files:
        if not isinstance(entry, dict):
            continue
        diff = entry.get("diff")
        if isinstance(diff, str) and diff:
            parts.append(diff + ("\n[diff cut]" if entry.get("diff_truncated") else ""))
        else:
            parts.append(f"{entry.get('path')}: {entry.get('status')} (no text diff: binary or too large)")
    return "\n".join(parts)


def judge_cost(calls: Sequence[JudgeCall]) -> float | None:
    """What these calls cost this run (cached answers are free); ``None``: a sent call's cost is unknown."""
    total = 0.0
    for call in calls:
        if call.cached:
            continue
        if call.cost_usd is None:
            if call.answer is None and call.input_tokens is None:
                continue  # the request failed before the model answered: nothing was billed
            return None
        total += call.cost_usd
    return total


def judge_call_json(call: JudgeCall) -> JsonObject:
    """One call as ``result.json`` keeps it (every text already masked by the client)."""
    return {
        "judge": call.judge,
        "model": call.model,
        "input_sha256": call.input_sha256,
        "answer": call.answer,
        "verdict": call.parsed.verdict,
        "reason": call.parsed.reason or None,
        "error": call.parsed.error,
        "input_tokens": call.input_tokens,
        "output_tokens": call.output_tokens,
        "cost_usd": call.cost_usd,
        "cached": call.cached,
    }


def _int(value: JsonValue) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def judge_call_from_json(value: JsonValue) -> JudgeCall | None:
    """A call read back from ``result.json``; ``None`` when the entry is not one."""
    from ..agents.judge_client import JudgeCall

    if not isinstance(value, dict):
        return None
    judge, model, key, answer = (
        value.get("judge"),
        value.get("model"),
        value.get("input_sha256"),
        value.get("answer"),
    )
    if not isinstance(judge, str) or not isinstance(model, str) or not isinstance(key, str):
        return None
    text = answer if isinstance(answer, str) else None
    cost = value.get("cost_usd")
    return JudgeCall(
        judge, model, key, text, parse_answer(text), _int(value.get("input_tokens")),
        _int(value.get("output_tokens")), float(cost) if isinstance(cost, int | float) else None, False,
    )  # fmt: skip
