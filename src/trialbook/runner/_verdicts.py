"""A finished agent run's checks, then its masked transcripts: the two steps between the agent and cleanup.

:func:`check_trial` runs while the trial still holds its concurrency slot (the checks may run commands
in the sandbox); :func:`record_trial` masks and writes once the slot is free again. Each runs in one
worker thread: one hand-off per step instead of one per file.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from ..agents import MAY_FAIL, Agent
from ..assertions import (
    Assertion,
    Call,
    CheckProgress,
    FinishedTrial,
    Judge,
    JudgeAsker,
    evaluate_all,
    unfinished,
)
from ..evidence import AgentResult, AssertionRecord, JsonObject
from ..masking import Masker, masked_call, masked_record, masked_result
from ..sandbox import (
    CHANGES_FILE,
    OutputCapture,
    Sandbox,
    ShimConfig,
    TemplateFilter,
    parse_call_log,
    record_changes,
)
from ..scoring.verdict import trial_passed
from ._explain import Explanation, explain_trial
from ._outputs import mask_call_log, write_json, write_trial_files
from ._placing import placed_roots, placed_sources, skills_folder

if TYPE_CHECKING:
    from ..agents.judge_client import JudgeCall
    from ._judges import TrialJudges
    from ._trial import TrialRequest

__all__ = [
    "CheckState",
    "Checked",
    "Recorded",
    "check_trial",
    "overran",
    "pairwise_shown",
    "record_trial",
    "unused_shim_note",
    "unused_shims",
]


def unused_shims(shims: tuple[ShimConfig, ...], calls: tuple[Call, ...]) -> tuple[str, ...]:
    """The declared shims the agent never called, in declaration order."""
    called = {call.argv[0] for call in calls if call.argv}
    return tuple(shim.name for shim in shims if shim.name not in called)


def unused_shim_note(name: str) -> str:
    """Why an unused shim is worth a look: the tool was not needed, or the agent went around ``PATH``."""
    return (
        f"shim {name} was declared but never called: the agent did not need it, or reached it without "
        "PATH (an absolute path, command -p, an activated virtualenv)"
    )


@dataclass(frozen=True)
class Checked:
    """What the checks made of a finished agent run, not yet masked."""

    result: AgentResult
    records: tuple[AssertionRecord, ...]
    calls: tuple[Call, ...]
    passed: bool
    unused: tuple[str, ...]
    agent_calls: bytes | None
    """The call log as the agent left it, raw (masked when written); ``None``: no shims, so no log."""
    changes: JsonObject
    """The agent's file changes, already masked."""
    judge_calls: tuple[JudgeCall, ...] = ()
    """Every judge request the checks made, in order (texts already masked)."""
    pairwise_shown: tuple[tuple[int, str], ...] = ()
    """``(check index, material)`` of each ``pairwise`` judge check: masked, bounded, for the arms' pair."""


class CheckState:
    """What :func:`check_trial` has made so far, for :func:`overran` when it misses its deadline."""

    def __init__(self) -> None:
        self.progress = CheckProgress()
        self.agent_calls: bytes | None = None
        self.calls: tuple[Call, ...] = ()
        self.changes: JsonObject = {}
        self.judges: TrialJudges | None = None


@dataclass(frozen=True)
class Recorded:
    """A checked trial as the evidence keeps it: masked, explained, written."""

    result: AgentResult
    records: tuple[AssertionRecord, ...]
    calls: tuple[Call, ...]
    passed: bool
    unused: tuple[str, ...]
    explanation: Explanation | None
    truncated: dict[str, int] | None
    judge_calls: tuple[JudgeCall, ...] = ()
    pairwise_shown: tuple[tuple[int, str], ...] = ()


def _judges(request: TrialRequest, changes: JsonObject) -> TrialJudges | None:
    """The trial's asker when its eval judges and the run has judges to ask (a control has none)."""
    from ._judges import changes_diff, uses_judges

    if request.judges is None or not uses_judges(request.assertions):
        return None
    return request.judges.for_trial(changes_diff(changes))


def check_trial(
    request: TrialRequest,
    agent: Agent,
    masker: Masker,
    sandbox: Sandbox,
    result: AgentResult,
    capture: OutputCapture,
    state: CheckState | None = None,
) -> Checked:
    """Snapshot the agent's calls and changes, then run the checks; the caller has swept already.

    Nothing the agent left running may change the files the checks read, so the trial's processes are
    swept first (see ``_trial._check``); commands the checks start carry the marker and end with it.
    """
    state = state if state is not None else CheckState()
    progress = state.progress
    progress.running = "reading the call log"
    # Snapshot the log now: commands that checks run later go through the shims too, but they are
    # not the agent's calls.
    try:
        agent_calls = sandbox.call_log.read_bytes()
    except FileNotFoundError:  # no shims, so no log
        agent_calls = None
    state.agent_calls = agent_calls
    # Likewise the file changes: what the agent left behind, before checks run their own commands.
    progress.running = "comparing the sandbox with its starting files (changes.json)"
    folder = skills_folder(agent)
    placed = placed_sources(request.instructions, request.skills, folder)
    replaced = placed_roots(request.instructions, request.skills, folder)
    keep = TemplateFilter.of(request.template_exclude)
    changes = record_changes(request.template, sandbox.workdir, masker, placed, replaced, keep)
    state.changes = changes
    # The snapshot is the log the checks see too: read once, parsed once.
    log = parse_call_log(agent_calls or b"", source=str(sandbox.call_log))
    if log.problems:
        # A torn or unreadable call-log line means the record of what the agent ran is incomplete.
        problems = tuple(f"call log: {problem}" for problem in log.problems)
        result = replace(result, capture_errors=(*result.capture_errors, *problems))
    finished = sandbox.finished(result, capture, log=log)
    calls = tuple(finished.calls)  # the agent's calls: read before the checks run their commands
    state.calls = calls
    judges = state.judges = _judges(request, changes)
    # The guide's own failing step first: it explains what the assertions after it saw.
    records = (*_guide_steps(result), *evaluate_all(request.assertions, finished, progress, judges))
    passed = trial_passed(result, [record.passed for record in records])
    unused = unused_shims(request.shims, calls)
    asked = tuple(judges.calls) if judges is not None else ()
    shown = pairwise_shown(request.assertions, finished, judges, masker)
    return Checked(result, records, calls, passed, unused, agent_calls, changes, asked, shown)


def pairwise_shown(
    assertions: Sequence[Assertion], finished: FinishedTrial, judges: JudgeAsker | None, masker: Masker
) -> tuple[tuple[int, str], ...]:
    """What each ``pairwise`` judge check shows of this trial, masked and bounded now.

    The arms are compared once both have finished, when this trial's sandbox may be gone: the material
    is read while it is still there (or rebuilt, when re-scored) and kept in the trial's evidence. A
    trial without judges to ask (a negative control) keeps none.
    """
    if judges is None:
        return ()
    from ..agents.judge_client import bounded

    return tuple(
        (index, bounded(masker, assertion.shown(finished, judges)))
        for index, assertion in enumerate(assertions)
        if isinstance(assertion, Judge) and assertion.pairwise
    )


def _guide_steps(result: AgentResult) -> tuple[AssertionRecord, ...]:
    """A failed check for a literal trial whose guide step failed: the guide does not work as written.

    The literal agent ran to its end (``completed``) but reports ``success: false`` with the step, its
    line and exit code; the trial fails on it like on any assertion (a timeout or a shell that could not
    start is already an error of its own).
    """
    if result.agent_name != "literal" or result.success or result.stop_reason != "completed":
        return ()
    return (
        AssertionRecord(
            kind="guide_steps",
            label="guide steps",
            passed=False,
            expected=f"every step of the guide exits 0 (or is marked {MAY_FAIL} before its block)",
            actual=result.error or "a step failed",
        ),
    )


def overran(request: TrialRequest, result: AgentResult, state: CheckState) -> Checked:
    """The trial as far as its checks got when they missed the check deadline: an error naming the check.

    The check that was running is recorded as failed with the deadline as its error, the ones after it
    as not run; what the agent did (its calls, its changes) is kept as far as it was read.
    """
    deadline = request.check_deadline_s
    running = state.progress.running or "the checks"
    done = list(state.progress.records)
    records = [*done]
    for assertion in request.assertions[len(done) :]:
        if len(records) == len(done) and assertion.label == running:
            actual = f"still running at the check deadline ({deadline:g}s)"
            records.append(
                unfinished(assertion, actual, f"did not finish within the check deadline of {deadline:g}s")
            )
        else:
            records.append(unfinished(assertion, "not run", None))
    message = (
        f"the checks did not finish within the check deadline of {deadline:g}s (limits.checks): "
        f"{running} was still running, and no later check ran"
    )
    errored = replace(result, success=False, stop_reason="execution_error", error=message)
    calls = state.calls
    asked = tuple(state.judges.calls) if state.judges is not None else ()
    return Checked(errored, tuple(records), calls, False, (), state.agent_calls, state.changes, asked)


def record_trial(request: TrialRequest, checked: Checked, masker: Masker, capture: OutputCapture) -> Recorded:
    """Mask what the trial captured, explain a failure, write ``result.json``, ``calls.jsonl`` and changes."""
    # Checks saw the real values; from here on, everything the trial captured is masked, before any
    # of it is cut into a failure line, escaped into a report or written.
    result = masked_result(checked.result, masker)
    records = tuple(masked_record(record, masker) for record in checked.records)
    calls = tuple(masked_call(call, masker) for call in checked.calls)
    explanation = None
    truncated = capture.truncated
    if not checked.passed:
        explanation = explain_trial(
            result, records, calls, masker, timeout_s=request.timeout_s, folder=request.folder,
            truncated=truncated,
        )  # fmt: skip
    notes = [unused_shim_note(name) for name in checked.unused]
    write_trial_files(
        request.folder, result, records, checked.agent_calls, masker, notes=notes, output_truncated=truncated,
        judge_calls=checked.judge_calls, pairwise_shown=checked.pairwise_shown,
    )  # fmt: skip
    write_json(request.folder / CHANGES_FILE, _with_masking(checked, result, masker), masker)
    return Recorded(
        result, records, calls, checked.passed, checked.unused, explanation, truncated, checked.judge_calls,
        checked.pairwise_shown,
    )  # fmt: skip


def _with_masking(checked: Checked, masked: AgentResult, masker: Masker) -> JsonObject:
    """The change record, saying whether the result and call log the checks saw are kept masked.

    A re-check reads them back from the run folder: where masking changed them, it would not see
    what the original checks saw.
    """
    rebuild = checked.changes.get("rebuild")
    if not isinstance(rebuild, dict):
        return checked.changes
    raw = checked.agent_calls
    flags: JsonObject = {
        "result_masked": masked != checked.result,
        "calls_masked": raw is not None and mask_call_log(raw, masker) != raw,
    }
    return {**checked.changes, "rebuild": {**rebuild, **flags}}
