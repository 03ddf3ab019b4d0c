"""Why a trial failed, in words a reader acts on: the first failed check and the evidence behind it.

A failed trial is explained by one headline (the agent's error, else the first failed check with its
essential reason) and a few evidence lines: the end of the output of the step that failed (a literal
step, a script agent's run, which carries its stderr), the end of a CLI agent's stderr, and the calls the
agent made with their exit codes. The terminal shows a short cut of it, the job summary and JUnit a
longer one.

Everything is masked before it is cut, so a secret split by a cut can never show half of itself, and
every part is bounded: a trial that printed megabytes still explains itself in a few lines.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..assertions import Call, exit_text
from ..evidence import AgentResult, AssertionRecord, ToolCall
from ..masking import Masker
from ..report.terminal import fit

__all__ = [
    "Explanation",
    "check_reason",
    "explain_trial",
    "fit",
    "format_calls",
    "trial_failures",
    "truncation_text",
]

LINE_CHARS = 300
"""Longest evidence line kept; longer ones are cut with an ellipsis."""
LONG_TAIL = 12
"""Output lines the summary and JUnit keep of a failing step or stderr."""
SHORT_TAIL = 3
"""Output lines the terminal shows under a failed trial."""
NAME_CHARS = 48
"""A check's label longer than this (a ``ran_in_order`` list) is named by its kind alone."""
STDERR_READ = 64 * 1024
"""Bytes read from the end of a CLI agent's stderr log: enough for any tail, bounded for a huge log."""

_EVIDENCE_SUFFIX = r"[;,:]?\s*(calls seen \(\d+\):|output ends with:|matched:)\s*$"
"""Compiled (and cached by ``re``) on first use: only a failed check is explained."""


def check_reason(record: AssertionRecord) -> tuple[str, list[str]]:
    """``(headline, evidence lines)`` of one failed check: its name, the first line of what was seen.

    A label that repeats a long argument (a ``ran_in_order`` list) is shortened to the check's kind; the
    lines after the first (the calls seen, a command's output) become evidence, headed as they were.
    """
    name = record.label if len(record.label) <= NAME_CHARS else record.kind
    seen = (record.error or record.actual or "").strip()
    lines = seen.splitlines()
    if record.error and record.actual:
        lines = [record.error.strip(), *record.actual.strip().splitlines()[1:]]
    rest = [line for line in lines[1:] if line.strip()]
    first = lines[0] if lines else ""
    heading = re.search(_EVIDENCE_SUFFIX, first)
    if heading is not None:
        first = first[: heading.start()].strip()
        rest.insert(0, heading.group(1))
    reason = first.strip() or f"expected {record.expected}"
    return f"{name}: {reason}", rest


def trial_failures(
    trial: int,
    result: AgentResult,
    records: Sequence[AssertionRecord],
    explanation: Explanation | None,
    *,
    timeout_s: float,
) -> list[str]:
    """The summary's and JUnit's entries for one trial: agent error, each failed check, the evidence.

    Each entry starts with ``trial N:``; the calls seen are listed once per trial, not under every
    call check that failed.
    """
    lines: list[str] = []
    if not result.success and result.error:
        lines.append(f"trial {trial}: {result.stop_reason}: {result.error}")
    elif result.stop_reason == "timeout":
        lines.append(f"trial {trial}: timed out after {timeout_s:g}s")
    calls_shown = False
    for record in records:
        if record.passed:
            continue
        headline, rest = check_reason(record)
        if rest and rest[0].startswith("calls seen"):
            if calls_shown:
                rest = []
            calls_shown = True
        shown = [fit(line, LINE_CHARS) for line in rest[-LONG_TAIL - 1 :]]
        lines.append("\n".join([f"trial {trial}: {headline}", *(f"  {line}" for line in shown)]))
    said = (result.final_response or "").strip()
    if explanation is not None and said:
        # The agent's own account often says where it went wrong (the literal agent names the step).
        lines.append(f"trial {trial}: the agent's last message: {fit(said.splitlines()[0], LINE_CHARS)}")
    if explanation is not None:
        evidence = [line for line in explanation.evidence if not (calls_shown and line.startswith("calls"))]
        if evidence:
            lines.append(f"trial {trial}: " + "\n".join(evidence))
    return lines


def format_calls(calls: Sequence[Call], limit: int = 8) -> str:
    """``calls (2): 1. vendor init (exit 0) · 2. vendor deploy (exit 4)``, bounded."""
    if not calls:
        return "calls: none recorded"
    shown = [f"{index}. {call.line} ({exit_text(call)})" for index, call in enumerate(calls[:limit], start=1)]
    more = f" · … {len(calls) - limit} more" if len(calls) > limit else ""
    return f"calls ({len(calls)}): " + " · ".join(shown) + more


def _tail(text: str, count: int) -> list[str]:
    lines = [line for line in text.rstrip().splitlines() if line.strip()]
    return [fit(line, LINE_CHARS) for line in lines[-count:]]


def _size(count: int) -> str:
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if count >= size:
            return f"{count / size:.1f} {unit}"
    return f"{count} bytes"


def truncation_text(truncated: Mapping[str, int] | None) -> str | None:
    """``output cut at the limit: script (180.7 MiB dropped)``: the streams that were cut, or ``None``."""
    cut = [f"{name} ({_size(dropped)} dropped)" for name, dropped in (truncated or {}).items() if dropped]
    return "output cut at the limit: " + ", ".join(cut) if cut else None


def _failing_step(result: AgentResult) -> ToolCall | None:
    failed = [call for call in result.all_tool_calls if call.success is False]
    return failed[-1] if failed else None


def _stderr_tail(folder: Path | None, count: int) -> tuple[str, list[str]] | None:
    if folder is None:
        return None
    for log in sorted(folder.glob("*.stderr.log")):
        try:
            with open(log, "rb") as handle:
                size = handle.seek(0, 2)
                handle.seek(max(0, size - STDERR_READ))
                text = handle.read().decode("utf-8", "replace")
        except OSError:
            continue
        tail = _tail(text, count)
        if tail:
            return log.name, tail
    return None


@dataclass(frozen=True)
class Explanation:
    """A failed trial, explained: ``headline`` is one line; the evidence lines are masked and bounded."""

    headline: str
    more_checks: int
    evidence: tuple[str, ...]
    """The long form, for the job summary and JUnit."""
    brief: tuple[str, ...]
    """The short form, for the terminal."""


def explain_trial(
    result: AgentResult,
    records: Sequence[AssertionRecord],
    calls: Sequence[Call],
    masker: Masker,
    *,
    timeout_s: float | None = None,
    folder: Path | None = None,
    truncated: Mapping[str, int] | None = None,
) -> Explanation:
    """Explain a failed trial; ``folder`` is where the adapter left its raw output (stderr logs).

    ``truncated`` (bytes dropped per stream) adds a line when the output limit cut a stream: the end of
    the output shown may then follow a gap.
    """
    failed = [record for record in records if not record.passed]
    # An agent that ran to its end unsuccessfully (a literal guide step) has its failure as a check.
    if not result.success and result.error and result.stop_reason != "completed":
        headline = result.error.strip().splitlines()[0] if result.error.strip() else "the agent failed"
        more = len(failed)
    elif result.stop_reason == "timeout":
        headline = f"timed out after {timeout_s:g}s" if timeout_s else "timed out"
        more = len(failed)
    elif len(failed) == 1:
        headline, more = check_reason(failed[0])[0], 0
    elif failed:
        # Several: the line says how many, and each has a line of its own below it.
        headline, more = f"{len(failed)} checks failed", len(failed)
    elif result.capture_errors:
        headline = f"the evidence is incomplete: {result.capture_errors[0]}"
        more = 0
    else:
        headline, more = "failed", 0
    long: list[str] = []
    # Every failed check has its own line on the terminal, unless the headline is that one check.
    listed = [] if len(failed) == 1 and headline == check_reason(failed[0])[0] else failed
    brief: list[str] = [fit(check_reason(record)[0], LINE_CHARS) for record in listed]
    said = (result.final_response or "").strip()
    step = _failing_step(result)
    if said and step is not None:
        brief.append(fit(said.splitlines()[0], LINE_CHARS))  # the summary has it as the last message
    if step is not None and step.result:
        output = masker.text(step.result)
        what = f"output of {step.call_id or step.name}" + (f" ({step.error})" if step.error else "")
        tail = _tail(output, LONG_TAIL)
        if tail:
            long += [f"{what} ends with:", *(f"  | {line}" for line in tail)]
            brief += [f"| {line}" for line in tail[-SHORT_TAIL:]]
    stderr = _stderr_tail(folder, LONG_TAIL) if not result.success else None
    if stderr is not None:
        name, tail = stderr
        long += [f"{name} ends with:", *(f"  | {line}" for line in tail)]
        brief += [f"{name}: {line}" for line in tail[-SHORT_TAIL:]]
    if calls or any(r.kind in ("ran", "not_ran", "ran_in_order") for r in failed):
        shown = format_calls(calls)
        brief.append(shown)
        long.append(shown)
    cut = truncation_text(truncated)
    if cut is not None:  # the terminal has it on the trial's own line already
        long.append(cut)
    mask = masker.text
    return Explanation(
        headline=mask(headline),
        more_checks=more,
        evidence=tuple(mask(line) for line in long),
        brief=tuple(mask(line) for line in brief),
    )
