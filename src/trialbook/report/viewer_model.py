"""The viewer's data: overview rows and per-trial details as plain JSON-ready values (pure).

Built from a loaded run (already masked on disk). Long strings are cut to :data:`MAX_TEXT` so a trial
with megabytes of tool output still gives a page of a few megabytes; the raw files stay linked.
Unknown stays unknown: a missing cost or duration is ``None`` here and "unknown" on the page.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any
from urllib.parse import quote

from ..evidence import (
    ExecutionRecord,
    JsonObject,
    JsonValue,
    OutsideWrite,
    RefusedConnection,
    TestReport,
    ToolCall,
)
from ..scoring.stats import wilson_interval
from .isolation import sandbox_label
from .viewer_load import RunData, TrialFiles

__all__ = [
    "MAX_TEXT",
    "build_overview",
    "build_trial",
    "build_trials",
    "literal_departure",
    "suite_meta",
    "trial_key",
]

MAX_TEXT = 20_000
"""Characters of one prompt, turn or tool output embedded in the page; the rest is in the raw files."""


def trial_key(test_id: str, trial: int) -> str:
    """The page's id of a trial: ``<eval>::<agent>#<n>``."""
    return f"{test_id}#{trial}"


def _cut(value: str | None) -> dict[str, Any] | None:
    if value is None:
        return None
    if len(value) <= MAX_TEXT:
        return {"text": value, "cut": 0}
    return {"text": value[:MAX_TEXT], "cut": len(value) - MAX_TEXT}


def _number(value: JsonValue) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _int(value: JsonValue) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _trial_number(execution: ExecutionRecord, index: int) -> int:
    return execution.trial if execution.trial is not None else index


def _costs(executions: Sequence[ExecutionRecord]) -> dict[str, Any]:
    """Reported, estimated and unknown kept apart: a sum of the two known kinds is never shown as one."""
    reported = [e.result.cost_usd for e in executions if e.result.cost_usd is not None]
    estimated = [
        e.estimated_cost_usd
        for e in executions
        if e.result.cost_usd is None and e.estimated_cost_usd is not None
    ]
    return {
        "reported_usd": sum(reported) if reported else None,
        "reported_trials": len(reported),
        "estimated_usd": sum(estimated) if estimated else None,
        "estimated_trials": len(estimated),
        "unknown_trials": len(executions) - len(reported) - len(estimated),
    }


def _row(test: TestReport) -> dict[str, Any]:
    props = test.properties
    eval_id, _, agent = test.id.partition("::")
    verdict = str(props.get("verdict") or test.outcome)
    if test.outcome in ("cached", "skipped"):
        verdict = test.outcome
    passed = _int(props.get("passed"))
    trials = _int(props.get("trials"))
    if test.outcome == "cached":
        passed, trials = _int(props.get("cached_passed")), _int(props.get("cached_trials"))
    if passed is None and test.executions:
        passed = sum(1 for e in test.executions if e.passed)
    if trials is None and test.executions:
        trials = len(test.executions)
    unstarted = _int(props.get("unstarted_trials")) or 0
    reason = str(props.get("reason") or "")
    if reason == "selected":  # the plan's word for "it ran", which says nothing here
        reason = ""
    if test.outcome == "cached" and props.get("cached_verdict"):
        reason = f"{reason} (cached verdict: {props['cached_verdict']})" if reason else reason
    cancelled = _int(props.get("cancelled_trials")) or 0
    if unstarted:
        reason = f"{unstarted} of {(trials or 0) + unstarted} trials not started" + (
            f"; {reason}" if reason else ""
        )
    if cancelled:
        planned = _int(props.get("planned_trials"))
        of = f" of {planned}" if planned else ""
        reason = f"run cancelled: {cancelled}{of} trials did not finish" + (f"; {reason}" if reason else "")
    interval = None
    if passed is not None and trials:
        low, high = wilson_interval(passed, trials)
        interval = {"low": low, "high": high}
    return {
        "id": test.id,
        "eval": eval_id,
        "agent": agent or str(props.get("agent") or ""),
        "agent_version": props.get("agent_version"),
        "passed": passed,
        "trials": trials,
        "threshold": _number(props.get("threshold")),
        "interval": interval,
        "verdict": verdict,
        "reason": reason,
        "cost": _costs(test.executions),
        # Only evals that judge have it; apart from the agents' cost, ``None`` when unknown.
        "judged": "judge_cost_usd" in props,
        "judge_cost_usd": _number(props.get("judge_cost_usd")),
        "duration_s": test.duration_s,
        "failures": list(test.assertion_errors),
        "isolation": sandbox_label(props),
        "trial_keys": [trial_key(test.id, _trial_number(e, i)) for i, e in enumerate(test.executions, 1)],
        "trial_passed": [e.passed for e in test.executions],
    }


def build_overview(run: RunData) -> list[dict[str, Any]]:
    """One row per eval × agent of the suite, in the suite's order."""
    return [_row(test) for test in run.suite.tests]


def _tool_call(call: ToolCall, output_file: dict[str, str] | None = None) -> dict[str, Any]:
    arguments = call.arguments
    command = arguments.get("command") if isinstance(arguments, dict) else None
    if isinstance(command, str) and len(arguments) == 1:  # type: ignore[arg-type]
        text = command  # a shell tool: show the command as the agent wrote it
    else:
        text = arguments if isinstance(arguments, str) else _json_text(arguments)
    summary = " ".join(text[:400].split())
    return {
        "id": call.call_id,
        "name": call.name,
        "summary": summary[:117] + "…" if len(summary) > 120 else summary,
        "arguments": _cut(text),
        "success": call.success,
        "result": _cut(call.result),
        "output_file": output_file,
        "error": call.error,
        "complete": call.evidence_complete,
    }


def _json_text(value: JsonValue) -> str:
    # Compact, so the C encoder does the work: pretty-printing every call's arguments doubled render time.
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def _calls(files: TrialFiles) -> list[dict[str, Any]]:
    calls = []
    starts = [_number(record.get("started_at")) for record in files.calls]
    first = min((s for s in starts if s is not None), default=0.0)
    for record, started in zip(files.calls, starts, strict=True):
        argv = record.get("argv")
        calls.append(
            {
                "argv": [str(a) for a in argv] if isinstance(argv, list) else [],
                "exit_code": _int(record.get("exit_code")),
                "duration_ms": _number(record.get("duration_ms")),
                "offset_ms": None if started is None else (started - first) * 1000,
                "mode": record.get("mode"),
                "error": record.get("error"),
            }
        )
    return calls


def _href(path: Path, link_base: Path | None, prefix: str) -> str:
    if link_base is None:
        return path.absolute().as_uri()
    return prefix + "/".join(quote(part) for part in Path(os.path.relpath(path, link_base)).parts)


def _output_links(files: TrialFiles, link_base: Path | None, prefix: str) -> dict[str, dict[str, str]]:
    """A link, by call id, to the file that keeps a local tool call's whole output."""
    return {
        call_id: {"name": name, "href": _href(files.folder / name, link_base, prefix)}
        for call_id, name in files.output_files.items()
    }


def literal_departure(
    failing: ExecutionRecord, passing: ExecutionRecord | None, steps: dict[str, str]
) -> str | None:
    """The guide step where a literal-agent trial left the path a passing trial (or the guide) took.

    The literal agent stops at the first failing step, so that step is where it left; when every step ran
    cleanly, the first step whose output differs from the passing trial's (or that it never reached).
    """
    ran = failing.result.all_tool_calls
    for call in ran:
        if call.success is False:
            label = steps.get(call.call_id or "", call.call_id or "a step")
            return f"{label}: {call.error or 'failed'}"
    if passing is None:
        return None
    done = {call.call_id: call for call in ran}
    for call in passing.result.all_tool_calls:
        label = steps.get(call.call_id or "", call.call_id or "a step")
        mine = done.get(call.call_id)
        if mine is None:
            return f"{label}: not reached"
        if mine.result != call.result:
            return f"{label}: output differs from the passing trial's"
    return None


def build_trial(
    test: TestReport,
    execution: ExecutionRecord,
    index: int,
    files: TrialFiles | None,
    *,
    link_base: Path | None,
    link_prefix: str = "",
    passing: ExecutionRecord | None = None,
) -> dict[str, Any]:
    """Everything the trial page and the side-by-side view show about one trial."""
    result = execution.result
    number = _trial_number(execution, index)
    calls_by_id = {call.call_id: call for call in result.all_tool_calls}
    folder = files.folder if files else None
    outputs = _output_links(files, link_base, link_prefix) if files else {}

    def tool(call: ToolCall) -> dict[str, Any]:
        return _tool_call(call, outputs.get(call.call_id or ""))

    turns = []
    shown: set[str | None] = set()
    for turn in result.turns:
        tools = [tool(calls_by_id[cid]) for cid in turn.tool_call_ids if cid in calls_by_id]
        shown.update(turn.tool_call_ids)
        turns.append({"role": turn.role, "content": _cut(turn.content), "tools": tools})
    orphans = [tool(c) for c in result.all_tool_calls if c.call_id not in shown]
    if orphans:
        turns.append({"role": "tools", "content": None, "tools": orphans})
    prompt = next((t.content for t in result.turns if t.role == "user"), None)
    estimate = execution.estimated_cost_usd
    steps = files.literal_steps if files else {}
    departure = None
    if result.agent_name == "literal" and execution.passed is False:
        departure = literal_departure(execution, passing, steps)
    return {
        "key": trial_key(test.id, number),
        "test": test.id,
        "trial": number,
        "passed": execution.passed,
        "agent": result.agent_name,
        "agent_version": result.agent_version,
        "model": result.model_used,
        "success": result.success,
        "error": result.error,
        "stop_reason": result.stop_reason,
        "capture_errors": list(result.capture_errors),
        "duration_ms": result.duration_ms,
        "prompt": _cut(prompt),
        "turns": turns,
        "assertions": [asdict(a) for a in execution.assertions],
        "usage": [asdict(u) for u in result.usage],
        "tokens": result.token_usage,
        "cost": {
            "reported_usd": result.cost_usd,
            "estimated_usd": estimate if result.cost_usd is None else None,
            "unpriced_models": list(execution.unpriced_models),
        },
        "calls": _calls(files) if files else [],
        "call_log": files.call_log if files else False,
        "call_log_problems": list(files.call_log_problems) if files else [],
        "changes": files.changes if files else None,
        "raw": [{"name": n, "href": _href(folder / n, link_base, link_prefix)} for n in files.raw_files]
        if files and folder
        else [],
        "literal_steps": steps,
        "literal_departure": departure,
        # ``None``: nothing watched (no isolation); ``[]``: watched, and nothing happened.
        "network_refused": _listed(result.network_refused),
        "outside_writes": _listed(result.outside_writes),
    }


def _listed(items: Sequence[OutsideWrite] | Sequence[RefusedConnection] | None) -> list[Any] | None:
    return None if items is None else [asdict(item) for item in items]


def build_trials(run: RunData, *, link_base: Path | None, link_prefix: str = "") -> list[dict[str, Any]]:
    """Every trial of the run, each with the first passing trial of its eval × agent for comparison."""
    out: list[dict[str, Any]] = []
    for test in run.suite.tests:
        passing = next((e for e in test.executions if e.passed), None)
        for index, execution in enumerate(test.executions, 1):
            files = run.trials.get((test.id, _trial_number(execution, index)))
            out.append(
                build_trial(
                    test,
                    execution,
                    index,
                    files,
                    link_base=link_base,
                    link_prefix=link_prefix,
                    passing=passing,
                )
            )
    return out


def suite_meta(run: RunData) -> JsonObject:
    """The run's metadata and counts as the page header shows them."""
    meta = run.suite.metadata
    return {
        "started_at": meta.started_at,
        "finished_at": meta.finished_at,
        "duration_s": meta.duration_s,
        "git_commit": meta.git_commit,
        "ci_run_url": meta.ci_run_url,
        "trialbook_version": meta.trialbook_version,
        "folder": str(run.folder),
        "counts": dict(run.suite.outcome_counts),
    }
