"""Step outputs (``$GITHUB_OUTPUT``) and the job summary (``$GITHUB_STEP_SUMMARY``).

Both are files the runner creates for each step and reads once the step ends; the documented protocol
is to append to them, so these writers append (with a flush and fsync) rather than replace the file.
The runner's own file must keep its identity, and other writers in the same step may have appended
before us.
"""

from __future__ import annotations

import os
import re
import secrets
from collections.abc import Mapping
from pathlib import Path

from ..errors import UsageError

__all__ = ["SUMMARY_LIMIT", "format_outputs", "truncate_utf8", "write_outputs", "write_summary"]

SUMMARY_LIMIT = 1024 * 1024
"""The runner refuses a step summary over 1024 KiB and shows an error instead of it."""

_SUMMARY_MARGIN = 16 * 1024
_OUTPUT_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]*$")


def _delimiter(value: str) -> str:
    while True:
        candidate = f"ghadelimiter_{secrets.token_hex(16)}"
        if candidate not in value:
            return candidate


def format_outputs(outputs: Mapping[str, str]) -> str:
    """The text to append to ``$GITHUB_OUTPUT`` for these outputs.

    Every value uses the ``name<<DELIMITER`` form with a fresh random delimiter, so a value that is
    multi-line, or contains a line that looks like ``other=value``, cannot forge another output.

    Raises:
        UsageError: an output name the runner would not accept.
    """
    chunks: list[str] = []
    for name, value in outputs.items():
        if not _OUTPUT_NAME.match(name):
            raise UsageError(f"step output name {name!r}: use letters, digits, '-' and '_' only.")
        delimiter = _delimiter(value)
        chunks.append(f"{name}<<{delimiter}\n{value}\n{delimiter}\n")
    return "".join(chunks)


def _append(path: Path, text: str) -> None:
    with open(path, "a", encoding="utf-8", newline="\n") as handle:
        handle.write(text)
        handle.flush()
        os.fsync(handle.fileno())


def write_outputs(path: Path, outputs: Mapping[str, str]) -> None:
    """Append step outputs to ``path`` (the value of ``$GITHUB_OUTPUT``)."""
    _append(path, format_outputs(outputs))


def truncate_utf8(text: str, max_bytes: int, note: str) -> str:
    """Cut ``text`` so its UTF-8 form plus ``note`` fits in ``max_bytes``, at a line break when possible.

    The cut never splits a character, and prefers a line boundary so a Markdown table loses whole rows
    instead of ending in a broken cell.
    """
    data = text.encode("utf-8")
    if len(data) <= max_bytes:
        return text
    room = max(0, max_bytes - len(note.encode("utf-8")))
    head = data[:room].decode("utf-8", errors="ignore")
    cut = head.rfind("\n")
    if cut > 0:
        head = head[: cut + 1]
    return head + note


def write_summary(path: Path, markdown: str, *, limit: int = SUMMARY_LIMIT) -> bool:
    """Append Markdown to the job summary, cut to stay under the runner's size limit.

    What is already in the file counts against the limit. Returns ``True`` when the text had to be cut;
    the cut text ends with a note that says so and where the rest is (the results artifact).
    """
    used = path.stat().st_size if path.exists() else 0
    budget = limit - _SUMMARY_MARGIN - used
    note = (
        "\n\n> **Note:** this summary was cut to fit GitHub's 1024 KiB limit; "
        "the results artifact has every result.\n"
    )
    text = truncate_utf8(markdown, budget, note) if budget > len(note.encode()) else ""
    if not text and markdown:
        return True
    _append(path, text)
    return text != markdown
