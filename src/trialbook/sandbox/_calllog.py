"""Read a trial's ``calls.jsonl`` back into :class:`~trialbook.assertions.Call` records.

The shims write the log while the agent runs, and a shim killed mid-write can leave a torn last line;
such a line is reported as a problem (so the runner can mark the evidence incomplete) and never crashes
the read or hides the calls before it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..evidence import Call, loads_bounded

__all__ = ["CallLog", "parse_call_log", "read_call_log"]


@dataclass(frozen=True)
class CallLog:
    """The calls a log holds, in the order they started, and one message per line that could not be read."""

    calls: tuple[Call, ...]
    problems: tuple[str, ...]


def _number(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def _parse_line(text: str) -> Call:
    record = loads_bounded(text)
    if not isinstance(record, dict):
        raise ValueError("not a JSON object")
    argv = record.get("argv")
    if not isinstance(argv, list) or not argv or not all(isinstance(a, str) for a in argv):
        raise ValueError("argv must be a non-empty list of strings")
    cwd = record.get("cwd")
    if not isinstance(cwd, str):
        raise ValueError("cwd must be a string")
    exit_code = record.get("exit_code")
    if exit_code is not None and (isinstance(exit_code, bool) or not isinstance(exit_code, int)):
        raise ValueError("exit_code must be an integer or null")
    started_at = _number(record.get("started_at"))
    if started_at is None:
        raise ValueError("started_at must be a number")
    duration = record.get("duration_ms")
    duration_ms = _number(duration)
    if duration is not None and duration_ms is None:
        raise ValueError("duration_ms must be a number or null")
    error = record.get("error")
    if error is not None and not isinstance(error, str):
        raise ValueError("error must be a string or null")
    path = record.get("path")
    if path is not None and not isinstance(path, str):
        raise ValueError("path must be a string or null")
    return Call(
        argv=tuple(argv),
        cwd=cwd,
        exit_code=exit_code,
        started_at=started_at,
        duration_ms=duration_ms,
        error=error,
        path=path,
    )


def parse_call_log(data: bytes, *, source: str = "calls.jsonl") -> CallLog:
    """Parse the bytes of a call log; bad lines become problems named ``source:line``."""
    # An argument that is not valid UTF-8 reaches the log as raw bytes; replacing them keeps the call.
    text = data.decode("utf-8", errors="replace")
    calls: list[Call] = []
    problems: list[str] = []
    lines = text.split("\n")
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            calls.append(_parse_line(line))
        except ValueError as exc:
            torn = number == len(lines) and not text.endswith("\n")
            what = "a partly written last line (the shim was stopped mid-write)" if torn else str(exc)
            problems.append(f"{source}:{number}: unreadable call record: {what}")
    calls.sort(key=lambda call: call.started_at)
    return CallLog(calls=tuple(calls), problems=tuple(problems))


def read_call_log(path: Path) -> CallLog:
    """Read and parse the call log at ``path``; a log no shim wrote to yet holds no calls."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return CallLog(calls=(), problems=())
    return parse_call_log(data, source=str(path))
