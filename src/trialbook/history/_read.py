"""Reading history files: every line for ``read``, only the winning lines for ``latest``.

A corrupt line is reported (logged and returned as a problem) and skipped. It is never fatal: a run
must not fail because someone hand-edited an old line, and the line is never deleted either, because
the store only ever appends.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Collection, Iterator
from datetime import datetime

from trialbook.errors import ConfigError

from ..evidence import loads_bounded
from ._line import HistoryLine, parse_started_at

__all__ = ["iter_raw_lines", "latest_line", "parse_history"]

log = logging.getLogger("trialbook.history")

_STARTED_AT_KEY = b'"started_at":"'


def iter_raw_lines(data: bytes) -> Iterator[tuple[int, bytes]]:
    """Yield ``(line_number, line)`` for every non-blank line, numbered from 1 like editors do."""
    for number, raw in enumerate(data.split(b"\n"), start=1):
        if raw.strip():
            yield number, raw


def parse_history(data: bytes, where: str, eval_id: str, problems: list[str]) -> list[HistoryLine]:
    """Every valid line of one history file, in file order; bad lines go to ``problems``."""
    out: list[HistoryLine] = []
    for number, raw in iter_raw_lines(data):
        line = _parse_one(raw, f"{where}:{number}", eval_id, problems)
        if line is not None:
            out.append(line)
    return out


def latest_line(
    data: bytes,
    where: str,
    eval_id: str,
    agent: str,
    problems: list[str],
    *,
    cache_key: str | None = None,
    verdicts: Collection[str] | None = None,
) -> HistoryLine | None:
    """The line of ``agent`` with the greatest ``started_at`` (file order breaks ties, later wins).

    With ``cache_key`` and ``verdicts``, only lines carrying that key and one of those verdicts count:
    that is the cache lookup, content-addressed, so whichever ref recorded the line does not matter.

    File order is not time order: after a union merge a file reads "theirs, then ours". So every
    candidate's time is needed, but lines trialbook wrote are canonical JSON whose first key is
    ``agent`` and whose last ``"started_at":"`` is the top-level one (nested keys under ``extra`` sort
    earlier, and a quote inside a string value is always escaped). That lets the scan read two short
    byte ranges per line and parse only the winner. Lines in any other shape are parsed in full.
    """
    prefix = b'{"agent":' + json.dumps(agent, ensure_ascii=False).encode() + b","
    # A canonical line holding the key holds this text; the parsed line decides, this only skips.
    needle = None if cache_key is None else json.dumps(cache_key, ensure_ascii=False).encode()
    candidates: list[tuple[datetime, int, bytes]] = []
    for number, raw in iter_raw_lines(data):
        stamp: datetime | None = None
        # Only the canonical shape (no space after the colon) may be skipped on its prefix alone.
        if raw.startswith(b'{"agent":"'):
            if not raw.startswith(prefix) or (needle is not None and needle not in raw):
                continue
            stamp = _quick_started_at(raw)
        if stamp is None:
            line = _parse_one(raw, f"{where}:{number}", eval_id, problems)
            if line is None or line.agent != agent:
                continue
            stamp = parse_started_at(line.started_at)
        candidates.append((stamp, number, raw))
    for _stamp, number, raw in sorted(candidates, reverse=True):
        winner = _parse_one(raw, f"{where}:{number}", eval_id, problems)
        if winner is None or winner.agent != agent:
            continue
        if cache_key is not None and winner.cache_key != cache_key:
            continue
        if verdicts is not None and winner.verdict not in verdicts:
            continue
        return winner
    return None


def _quick_started_at(raw: bytes) -> datetime | None:
    start = raw.rfind(_STARTED_AT_KEY)
    if start < 0:
        return None
    start += len(_STARTED_AT_KEY)
    end = raw.find(b'"', start)
    try:
        return parse_started_at(raw[start:end].decode())
    except (ValueError, UnicodeDecodeError):
        return None


def _parse_one(raw: bytes, where: str, eval_id: str, problems: list[str]) -> HistoryLine | None:
    try:
        obj = loads_bounded(raw)
    except ValueError as exc:
        _skip(f"{where}: not valid JSON ({exc}); line skipped", problems)
        return None
    try:
        line = HistoryLine.from_json(obj, where)
    except ConfigError as exc:
        _skip(f"{exc}; line skipped", problems)
        return None
    if line.id != eval_id:
        _skip(f"{where}: line has id {line.id!r} but the file belongs to {eval_id!r}; skipped", problems)
        return None
    return line


def _skip(message: str, problems: list[str]) -> None:
    # A file is read several times in one run (cache check, base comparison, history view); each bad
    # line is one problem, which the front end prints once. Logged at debug level only, so it is not
    # printed a second time through logging's fallback handler.
    if message in problems:
        return
    log.debug("%s", message)
    problems.append(message)
