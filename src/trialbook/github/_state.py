"""``ci.json``: what the run step of the action hands to the publish step, through the results folder.

The step that runs agents holds the agents' credentials and no GitHub token; the step that publishes
holds the token and runs no agent. Everything the publisher needs therefore travels in the results
folder: the trigger's decision, the rows readers see (already masked), the eval files to annotate, the
history lines this run decided, and the run's exit code. Several folders (matrix shards) merge into one
publication. Pure: encoding and decoding only; the folder I/O is at the bottom, kept small.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from .._util.fsutil import atomic_write_text
from ..errors import ExitCode, UsageError
from ..evidence import JsonObject, loads_bounded
from ..history import HistoryLine
from ..report import BaseResult, ListedEval, ReviewRow
from ..report.suite_view import Review
from ..report.triggers import checked_group
from ..report.versions import checked_drift
from ..scoring.comparison import ComparedPair
from ..scoring.flaky import Flakiness, Stability

__all__ = [
    "MAX_STATE_BYTES",
    "STATE_FILE",
    "STATE_VERSION",
    "CiState",
    "latest_attempts",
    "merge_states",
    "read_state",
    "write_state",
]

STATE_FILE = "ci.json"
STATE_VERSION = 1
MAX_STATE_BYTES = 64 * 2**20
"""ci.json is refused above this size (rows and history lines of thousands of pairs fit many times)."""


@dataclass(frozen=True, kw_only=True)
class CiState:
    """One run step's hand-over.

    Attributes:
        reason: the trigger's one-line explanation of what ran and why.
        ran: whether the trigger asked for a run at all.
        comment: whether the PR comment should be posted or updated.
        push: whether the history lines should be pushed.
        exit_code: what the run step exited with (0, 1, 2, 3, 130 or 143).
        error: the message of a run that stopped before any result (bad input, refusal), or ``None``.
        review: what readers see, masked.
        eval_files: eval id → eval file relative to the workspace, for annotations.
        history_lines: the lines this run decided, to be recorded by the publisher.
        history_problems: warnings about history met while running (already shown in that step's log).
        shard: ``I/N`` when the run was one shard of several.
        run_attempt: the workflow run's attempt (``GITHUB_RUN_ATTEMPT``) that wrote the folder, or
            ``None`` when unknown; re-running failed jobs leaves one folder per attempt of a shard.
    """

    reason: str
    ran: bool
    comment: bool
    push: bool
    exit_code: int
    error: str | None = None
    review: Review = field(default_factory=Review)
    eval_files: Mapping[str, str] = field(default_factory=dict)
    history_lines: Sequence[HistoryLine] = ()
    history_problems: Sequence[str] = ()
    shard: str | None = None
    run_attempt: int | None = None


def _row_json(row: ReviewRow) -> dict[str, Any]:
    base = row.base
    history = row.history
    return {
        "eval_id": row.eval_id,
        "agent": row.agent,
        "passed": row.passed,
        "trials": row.trials,
        "verdict": row.verdict,
        "base": None
        if base is None
        else {"passed": base.passed, "trials": base.trials, "verdict": base.verdict, "commit": base.commit},
        "cost_usd": row.cost_usd,
        "duration_s": row.duration_s,
        "alpha": row.alpha,
        "failures": list(row.failures),
        "history": None
        if history is None
        else {
            "flakiness": history.flakiness,
            "changed_at": history.changed_at,
            "runs": history.runs,
            "passed": history.passed,
            "trials": history.trials,
            "agent_versions": list(history.agent_versions),
        },
        "note": row.note,
        "cached": row.cached,
        "judged": row.judged,
        "judge_cost_usd": row.judge_cost_usd,
        "isolation": row.isolation,
        "outside": list(row.outside),
    }


def _row(data: Mapping[str, Any]) -> ReviewRow:
    base = data["base"]
    history = data["history"]
    return ReviewRow(
        eval_id=str(data["eval_id"]),
        agent=str(data["agent"]),
        passed=int(data["passed"]),
        trials=int(data["trials"]),
        verdict=str(data["verdict"]),
        base=None
        if base is None
        else BaseResult(
            passed=int(base["passed"]),
            trials=int(base["trials"]),
            verdict=str(base["verdict"]),
            commit=base["commit"],
        ),
        cost_usd=data["cost_usd"],
        duration_s=data["duration_s"],
        alpha=float(data["alpha"]),
        failures=tuple(str(f) for f in data["failures"]),
        history=None
        if history is None
        else Stability(
            flakiness=cast(Flakiness, history["flakiness"]),
            changed_at=history["changed_at"],
            runs=int(history["runs"]),
            passed=int(history["passed"]),
            trials=int(history["trials"]),
            agent_versions=tuple(history["agent_versions"]),
        ),
        note=str(data["note"]),
        cached=data.get("cached") is True,
        # Absent in a state written before judges: an eval that did not judge.
        judged=data.get("judged") is True,
        judge_cost_usd=_usd(data.get("judge_cost_usd")),
        # Absent in a state written before isolation was shown: not known.
        isolation=isolation if isinstance(isolation := data.get("isolation"), str) else None,
        outside=tuple(str(line) for line in outside)
        if isinstance(outside := data.get("outside"), list)
        else (),
    )


def _usd(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    number = float(value)
    return number if math.isfinite(number) and number >= 0 else None


def _listed_json(items: Sequence[ListedEval]) -> list[dict[str, Any]]:
    return [{"eval_id": i.eval_id, "agent": i.agent, "reason": i.reason} for i in items]


def _listed(items: Sequence[Mapping[str, Any]]) -> list[ListedEval]:
    return [ListedEval(eval_id=str(i["eval_id"]), agent=i["agent"], reason=str(i["reason"])) for i in items]


def _compared(items: Sequence[Mapping[str, Any]]) -> list[ComparedPair]:
    pairs = [ComparedPair.from_json(item) for item in items]
    if any(pair is None for pair in pairs):
        raise ValueError("a comparison is not one trialbook wrote")
    return [pair for pair in pairs if pair is not None]


def _triggers(items: Sequence[Any]) -> list[JsonObject]:
    groups = [checked_group(item) for item in items]
    if any(group is None for group in groups):
        raise ValueError("a trigger eval's scores are not as trialbook writes them")
    return [dict(group) for group in groups if group is not None]


def _versions(items: Sequence[Any]) -> list[JsonObject]:
    found = [checked_drift(item) for item in items]
    if any(item is None for item in found):
        raise ValueError("an agent-versions comparison is not as trialbook writes it")
    return [dict(item) for item in found if item is not None]


def _missing(group: JsonObject) -> int:
    found = group.get("missing")
    return len(found) if isinstance(found, list) else 0


def _most_complete(groups: Sequence[JsonObject]) -> list[JsonObject]:
    """One group per trigger eval × agent: the shard that ran its queries, not those that saw them cached.

    Every query of a group runs in one shard; the others list the group with those queries missing.
    """
    best: dict[tuple[object, object], JsonObject] = {}
    for group in groups:
        key = (group.get("eval"), group.get("agent"))
        known = best.get(key)
        if known is None or _missing(group) < _missing(known):
            best[key] = group
    return list(best.values())


def state_to_json(state: CiState) -> dict[str, Any]:
    """The JSON document of ``state`` (a ``kind``/``version`` header first)."""
    review = state.review
    return {
        "kind": "trialbook-ci",
        "version": STATE_VERSION,
        "reason": state.reason,
        "ran": state.ran,
        "comment": state.comment,
        "push": state.push,
        "exit_code": state.exit_code,
        "error": state.error,
        "shard": state.shard,
        "run_attempt": state.run_attempt,
        "review": {
            "rows": [_row_json(row) for row in review.rows],
            "cached": _listed_json(review.cached),
            "skipped": _listed_json(review.skipped),
            "unstarted": _listed_json(review.unstarted),
            "comparisons": [pair.to_json() for pair in review.comparisons],
            "triggers": list(review.triggers),
            "versions": list(review.versions),
        },
        "eval_files": dict(state.eval_files),
        "history_lines": [line.to_json() for line in state.history_lines],
        "history_problems": list(state.history_problems),
    }


def state_from_json(data: object, where: str) -> CiState:
    """Decode a ``ci.json`` document; a clear error naming ``where`` for anything else."""
    if not isinstance(data, dict) or data.get("kind") != "trialbook-ci":
        raise UsageError(f"{where}: not a trialbook ci.json file")
    if data.get("version") != STATE_VERSION:
        raise UsageError(
            f"{where}: ci.json version {data.get('version')!r}; this trialbook reads version "
            f"{STATE_VERSION} (publish with the trialbook version that ran)"
        )
    try:
        review = data["review"]
        return CiState(
            reason=str(data["reason"]),
            ran=bool(data["ran"]),
            comment=bool(data["comment"]),
            push=bool(data["push"]),
            exit_code=int(data["exit_code"]),
            error=data["error"],
            shard=data["shard"],
            run_attempt=_attempt(data.get("run_attempt")),
            review=Review(
                rows=[_row(row) for row in review["rows"]],
                cached=_listed(review["cached"]),
                skipped=_listed(review["skipped"]),
                unstarted=_listed(review["unstarted"]),
                comparisons=_compared(review.get("comparisons", [])),
                triggers=_triggers(review.get("triggers", [])),
                versions=_versions(review.get("versions", [])),
            ),
            eval_files={str(k): str(v) for k, v in data["eval_files"].items()},
            history_lines=[
                HistoryLine.from_json(line, f"{where}: history_lines[{index}]")
                for index, line in enumerate(data["history_lines"])
            ],
            history_problems=[str(p) for p in data["history_problems"]],
        )
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise UsageError(f"{where}: damaged ci.json ({type(exc).__name__}: {exc})") from None


_SEVERITY = {
    ExitCode.OK: 0,
    ExitCode.BUDGET: 1,
    ExitCode.FAILED: 2,
    ExitCode.BAD_INPUT: 3,
    130: 4,
    143: 4,
}


def _attempt(value: object) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"run_attempt: expected a whole number >= 1 or null, got {value!r}")
    return value


def latest_attempts(states: Sequence[CiState]) -> tuple[list[CiState], list[str]]:
    """Each shard's newest attempt, in the given order, and a note for every older one dropped.

    Re-running a workflow's failed jobs runs the failed shards again while the others keep their
    first attempt's artifact, so a publish job downloads two folders for a re-run shard. Only the
    newest one counts: the older one's rows would show the failure the re-run replaced. (Its history
    lines were recorded by the earlier attempt's publish job, and a line recorded twice is kept once.)
    Folders without a shard or an attempt are all kept.
    """
    newest: dict[str, int] = {}
    for state in states:
        if state.shard is not None and state.run_attempt is not None:
            newest[state.shard] = max(newest.get(state.shard, 0), state.run_attempt)
    kept: list[CiState] = []
    dropped: list[str] = []
    for state in states:
        if state.shard is None or state.run_attempt is None or state.run_attempt == newest[state.shard]:
            kept.append(state)
        else:
            dropped.append(
                f"shard {state.shard}: attempt {state.run_attempt} is replaced by attempt "
                f"{newest[state.shard]}"
            )
    return kept, dropped


def merge_states(states: Sequence[CiState]) -> CiState:
    """Shards as one run: rows and listings in shard order, the most severe exit code, every line."""
    if not states:
        raise UsageError("nothing to publish: no ci.json was found")
    first = states[0]
    errors = [s.error for s in states if s.error]
    return CiState(
        reason=first.reason,
        ran=any(s.ran for s in states),
        comment=any(s.comment for s in states),
        push=any(s.push for s in states),
        exit_code=max((s.exit_code for s in states), key=lambda code: _SEVERITY.get(code, 5)),
        error="; ".join(errors) if errors else None,
        review=Review(
            rows=[row for s in states for row in s.review.rows],
            cached=[item for s in states for item in s.review.cached],
            skipped=_still_skipped(states),
            unstarted=[item for s in states for item in s.review.unstarted],
            comparisons=[pair for s in states for pair in s.review.comparisons],
            triggers=_most_complete([group for s in states for group in s.review.triggers]),
            versions=[item for s in states for item in s.review.versions],
        ),
        eval_files={k: v for s in states for k, v in s.eval_files.items()},
        history_lines=[line for s in states for line in s.history_lines],
        history_problems=list(dict.fromkeys(p for s in states for p in s.history_problems)),
        shard=None if len(states) > 1 else first.shard,
    )


def _still_skipped(states: Sequence[CiState]) -> list[ListedEval]:
    """Skipped entries no shard ran: each shard lists the others' evals as skipped for another shard."""
    handled: set[tuple[str, str | None]] = {(row.eval_id, row.agent) for s in states for row in s.review.rows}
    handled |= {
        (item.eval_id, item.agent) for s in states for item in [*s.review.cached, *s.review.unstarted]
    }
    kept = [item for s in states for item in s.review.skipped if (item.eval_id, item.agent) not in handled]
    return list(dict.fromkeys(kept))


def write_state(folder: Path, state: CiState) -> Path:
    """Write ``ci.json`` into ``folder`` atomically."""
    path = folder / STATE_FILE
    atomic_write_text(path, json.dumps(state_to_json(state), indent=2, ensure_ascii=False) + "\n")
    return path


def read_state(folder: Path) -> CiState:
    """Read ``folder/ci.json``, or a clear error saying the folder is not a run step's hand-over."""
    path = folder / STATE_FILE
    try:
        # A downloaded artifact may come from a fork's run: a link could point anywhere on the runner,
        # and a huge file is no hand-over; both are refused before anything is read.
        if path.is_symlink() or (path.exists() and not path.is_file()):
            raise UsageError(f"{path}: not a regular file; a results folder's {STATE_FILE} never is a link")
        if path.stat().st_size > MAX_STATE_BYTES:
            raise UsageError(f"{path}: larger than {MAX_STATE_BYTES // 2**20} MiB, which no run writes")
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise UsageError(
            f"{folder} holds no {STATE_FILE}: it is not the results folder of a `trialbook ci --stage run`"
        ) from None
    except OSError as exc:
        raise UsageError(f"{path}: cannot be read ({exc.strerror})") from None
    try:
        data = loads_bounded(text)
    except ValueError as exc:
        raise UsageError(f"{path}: not JSON ({exc})") from None
    return state_from_json(data, str(path))
