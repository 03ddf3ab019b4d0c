"""One history line: the verdict of one eval x agent in one run, as stored in ``history/<id>.jsonl``.

The line is the fixed public surface of ARCHITECTURE.md 4.5. It is validated when built (so a store can
never write a line it could not read back) and loaded strictly, with errors naming ``file:line``.
"""

from __future__ import annotations

import json
import math
import re
import uuid
from dataclasses import dataclass, field, fields
from datetime import UTC, datetime
from typing import Any, ClassVar, Literal, get_args

from trialbook.errors import ConfigError

__all__ = ["LINE_VERSION", "HistoryLine", "Verdict", "format_started_at", "new_run_id", "parse_started_at"]

Verdict = Literal["pass", "fail", "error", "incomplete"]
_VERDICTS: frozenset[str] = frozenset(get_args(Verdict))

LINE_VERSION = 1
"""Version of the line format; bumped only with a documented migration, never silently."""

_STARTED_AT = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,6})?Z")
_RUN_ID = re.compile(r"[0-9a-f]{32}")


def new_run_id() -> str:
    """A fresh run id; uuid4 hex keeps two genuinely different runs distinct under a union merge."""
    return uuid.uuid4().hex


def format_started_at(moment: datetime) -> str:
    """Render an aware datetime as the ISO-8601 UTC form lines carry (``...Z``, microseconds when set)."""
    if moment.tzinfo is None:
        raise ValueError("started_at needs a timezone-aware datetime")
    utc = moment.astimezone(UTC).replace(tzinfo=None)
    return utc.isoformat(timespec="microseconds" if utc.microsecond else "seconds") + "Z"


def parse_started_at(text: str) -> datetime:
    """Parse a ``started_at`` value; text order is not time order (``.5Z`` sorts before ``Z``)."""
    if not _STARTED_AT.fullmatch(text):
        raise ValueError(f"expected an ISO-8601 UTC time like 2025-01-31T12:00:00Z, got {text!r}")
    return datetime.fromisoformat(text[:-1]).replace(tzinfo=UTC)


@dataclass(frozen=True, kw_only=True)
class HistoryLine:
    """The verdict of one eval x agent in one run.

    Unknown stays unknown: ``cost_usd``, ``duration_s``, ``pass_rate`` (no trial finished),
    ``agent_version``, ``model``, ``commit`` and ``ci_run`` are ``None`` when not known, never 0 or "".
    ``run_id`` makes every line unique, so merging two histories by union of lines keeps two runs
    that happen to carry the same numbers.
    """

    id: str
    agent: str
    agent_version: str | None
    model: str | None
    prompt_sha256: str
    cache_key: str
    trials: int
    passed: int
    pass_rate: float | None
    threshold: float
    verdict: Verdict
    cost_usd: float | None
    duration_s: float | None
    started_at: str
    commit: str | None
    trialbook_version: str
    ci_run: str | None
    run_id: str = field(default_factory=new_run_id)
    extra: dict[str, Any] = field(default_factory=dict)

    _OPTIONAL: ClassVar[frozenset[str]] = frozenset({"extra"})

    def __post_init__(self) -> None:
        problems = _problems(self)
        if problems:
            raise ValueError("; ".join(problems))

    def to_json(self) -> dict[str, Any]:
        """The JSON object of this line, including ``line_version``."""
        obj: dict[str, Any] = {f.name: getattr(self, f.name) for f in fields(self)}
        obj["line_version"] = LINE_VERSION
        return obj

    def to_json_line(self) -> str:
        """Canonical one-line JSON (sorted keys, compact, UTF-8 text), without the trailing newline.

        Canonical form matters beyond looks: the same line always has the same bytes, so the union
        merge recognises it on both sides, and readers can find ``agent`` as the first key.
        """
        return json.dumps(self.to_json(), sort_keys=True, separators=(",", ":"), ensure_ascii=False)

    @classmethod
    def from_json(cls, obj: object, where: str) -> HistoryLine:
        """Load one line strictly; ``where`` (``file:line``) prefixes every error.

        Raises:
            ConfigError: a missing or unknown field, a wrong type or an impossible value.
        """
        if not isinstance(obj, dict):
            raise ConfigError(f"{where}: a history line must be a JSON object, got {type(obj).__name__}")
        problems: list[str] = []
        version = obj.get("line_version")
        if version != LINE_VERSION:
            problems.append(
                f"field 'line_version': expected {LINE_VERSION}, got {version!r} "
                "(written by another trialbook version?)"
            )
        names = {f.name for f in fields(cls)}
        missing = sorted(names - cls._OPTIONAL - obj.keys())
        unknown = sorted(obj.keys() - names - {"line_version"})
        problems += [f"missing field '{name}'" for name in missing]
        problems += [f"unknown field '{name}' (put extensions under 'extra')" for name in unknown]
        if problems:
            raise ConfigError([f"{where}: {p}" for p in problems])
        values = {name: obj[name] for name in names if name in obj}
        try:
            return cls(**values)
        except (TypeError, ValueError) as exc:
            raise ConfigError([f"{where}: {p}" for p in str(exc).split("; ")]) from None


def _problems(line: HistoryLine) -> list[str]:
    """Every reason ``line`` is not a valid history line (empty when it is)."""
    out: list[str] = []
    for name in ("id", "agent", "prompt_sha256", "cache_key", "trialbook_version", "started_at", "run_id"):
        value = getattr(line, name)
        if not isinstance(value, str) or not value:
            out.append(f"field '{name}': expected a non-empty string, got {value!r}")
    for name in ("agent_version", "model", "commit", "ci_run"):
        value = getattr(line, name)
        if value is not None and (not isinstance(value, str) or not value):
            out.append(f"field '{name}': expected a non-empty string or null (unknown), got {value!r}")
    for name in ("trials", "passed"):
        value = getattr(line, name)
        if not _is_int(value) or value < 0:
            out.append(f"field '{name}': expected a whole number >= 0, got {value!r}")
    if not out and line.passed > line.trials:
        out.append(f"field 'passed': {line.passed} is more than trials ({line.trials})")
    for name, optional in (("pass_rate", True), ("threshold", False)):
        value = getattr(line, name)
        if (value is None and not optional) or (value is not None and not _in_unit(value)):
            out.append(f"field '{name}': expected a number from 0 to 1, got {value!r}")
    for name in ("cost_usd", "duration_s"):
        value = getattr(line, name)
        if value is not None and (not _is_number(value) or value < 0):
            out.append(f"field '{name}': expected a number >= 0 or null (unknown), got {value!r}")
    if line.verdict not in _VERDICTS:
        out.append(f"field 'verdict': expected one of {sorted(_VERDICTS)}, got {line.verdict!r}")
    if isinstance(line.started_at, str) and line.started_at:
        try:
            parse_started_at(line.started_at)
        except ValueError as exc:
            out.append(f"field 'started_at': {exc}")
    if isinstance(line.run_id, str) and line.run_id and not _RUN_ID.fullmatch(line.run_id):
        out.append(f"field 'run_id': expected 32 lowercase hex digits (uuid4 hex), got {line.run_id!r}")
    extra: object = line.extra
    if not isinstance(extra, dict):
        out.append(f"field 'extra': expected an object, got {type(extra).__name__}")
    return out


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: object) -> bool:
    return (_is_int(value) or isinstance(value, float)) and math.isfinite(value)  # type: ignore[arg-type]


def _in_unit(value: object) -> bool:
    return _is_number(value) and 0 <= value <= 1  # type: ignore[operator]
