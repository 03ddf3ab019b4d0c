"""Workflow commands printed to stdout: annotations and secret masks.

The runner parses these lines out of the step's output. Values must be escaped, or a ``%``, a newline or
(in properties) a ``:`` or ``,`` in an eval id or message would end the command early or change its
meaning.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from typing import Literal, TextIO

__all__ = [
    "AnnotationLevel",
    "add_mask_lines",
    "annotation",
    "emit_annotation",
    "escape_data",
    "escape_property",
    "mask_secrets",
]

AnnotationLevel = Literal["error", "warning", "notice"]


def escape_data(value: str) -> str:
    """Escape the message part of a workflow command (after the second ``::``)."""
    return value.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(value: str) -> str:
    """Escape a property value (``file=…``, ``title=…``), where ``:`` and ``,`` are separators too."""
    return escape_data(value).replace(":", "%3A").replace(",", "%2C")


def annotation(
    level: AnnotationLevel,
    message: str,
    *,
    file: str | None = None,
    line: int | None = None,
    end_line: int | None = None,
    col: int | None = None,
    title: str | None = None,
) -> str:
    """One ``::error``/``::warning``/``::notice`` command line (without the trailing newline).

    Args:
        level: which kind of annotation.
        message: the text shown in the annotation; may span lines.
        file: path relative to the repository root, so GitHub can attach it to the file.
        line: first line in ``file``.
        end_line: last line in ``file``.
        col: column in ``line``.
        title: short heading of the annotation.
    """
    props: list[str] = []
    if file is not None:
        props.append(f"file={escape_property(file)}")
    for key, number in (("line", line), ("endLine", end_line), ("col", col)):
        if number is not None:
            props.append(f"{key}={number}")
    if title is not None:
        props.append(f"title={escape_property(title)}")
    head = f"::{level} {','.join(props)}" if props else f"::{level}"
    return f"{head}::{escape_data(message)}"


def emit_annotation(
    level: AnnotationLevel,
    message: str,
    *,
    file: str | None = None,
    line: int | None = None,
    title: str | None = None,
    stream: TextIO | None = None,
) -> None:
    """Print an annotation on stdout (or ``stream``), where the runner picks it up."""
    out = stream if stream is not None else sys.stdout
    out.write(annotation(level, message, file=file, line=line, title=title) + "\n")
    out.flush()


def add_mask_lines(value: str) -> list[str]:
    """The ``::add-mask::`` commands that hide ``value`` in the rest of the job's log.

    A multi-line secret is registered line by line, since the log is matched one line at a time. A line
    containing ``%`` is registered both as is and escaped: the runner has changed whether it un-escapes
    mask values, and registering both forms hides the secret either way. Blank lines are skipped; a mask
    of nothing would be meaningless and the runner rejects it.
    """
    commands: list[str] = []
    for line in value.splitlines():
        if not line.strip():
            continue
        forms = [line, escape_data(line)] if "%" in line else [line]
        commands.extend(f"::add-mask::{form}" for form in forms)
    return commands


def mask_secrets(values: Iterable[str], *, stream: TextIO | None = None) -> int:
    """Register every value as a secret with the runner before anything else is printed.

    Call this first in a CI step, before any line that could contain a secret, since masks only apply
    to output printed after them. Returns the number of commands written.

    Args:
        values: secret values (declared ``secrets:`` of the evals, tokens). Empty values are skipped.
        stream: where to print; stdout by default, which is where the runner reads commands.
    """
    out = stream if stream is not None else sys.stdout
    lines = [command for value in values for command in add_mask_lines(value)]
    for command in lines:
        out.write(command + "\n")
    out.flush()
    return len(lines)
