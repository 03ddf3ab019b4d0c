"""Find the shell steps a Markdown guide asks its reader to run, in order.

The steps are the fenced ``bash``, ``sh``, ``shell`` and ``console`` blocks. A block whose previous
non-blank line is the comment ``<!-- trialbook: may-fail -->`` may fail: readers of the rendered guide do
not see the comment, and the literal agent goes on after it (see ``literal``).

Fences follow CommonMark (backticks or tildes, three or more, closed by a fence of the same character at
least as long), except that any indentation is accepted so the steps of numbered lists are found too.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["MAY_FAIL", "SHELL_LANGUAGES", "ShellStep", "console_commands", "shell_steps"]

SHELL_LANGUAGES = frozenset({"bash", "sh", "shell", "console"})
"""Info-string languages whose blocks are run; ``console`` blocks run only their ``$ `` lines."""

MAY_FAIL = "<!-- trialbook: may-fail -->"
"""The marker, on the line before a block's opening fence, of a step the guide expects may fail."""

_OPEN = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})(?P<info>.*)$")


@dataclass(frozen=True)
class ShellStep:
    """One runnable block: ``script`` is what runs, ``line`` the 1-based line of its opening fence."""

    index: int
    language: str
    script: str
    line: int
    may_fail: bool = False


def _language(info: str) -> str:
    # "bash title=x", "{.bash}", "shell,norun" all name their language first.
    words = re.split(r"[\s,{}]+", info.strip().lstrip("{").lstrip("."), maxsplit=1)
    return words[0].lower() if words else ""


def console_commands(body: str) -> str:
    """The commands of a terminal session: ``$ `` lines and the lines that continue them.

    A command ending in a backslash continues on the next line (shown with a ``> `` prompt or not).
    Every other line is the output the guide expects, which is shown to readers but never run.
    """
    commands: list[str] = []
    continuing = False
    for line in body.splitlines():
        if continuing:
            # After a trailing backslash the terminal shows its "> " prompt before the next part.
            commands.append(line[2:] if line.startswith("> ") else line)
        elif line.startswith("$ "):
            commands.append(line[2:])
        else:
            continue
        continuing = commands[-1].endswith("\\")
    return "\n".join(commands) + ("\n" if commands else "")


def _dedent(lines: list[str], indent: int) -> str:
    out = []
    for line in lines:
        strip = len(line) - len(line.lstrip(" \t"))
        out.append(line[min(strip, indent) :])
    return "".join(line + "\n" for line in out)


def shell_steps(markdown: str) -> list[ShellStep]:
    """The runnable blocks of ``markdown`` in document order; blocks with nothing to run are skipped."""
    steps: list[ShellStep] = []
    lines = markdown.splitlines()
    i = 0
    while i < len(lines):
        match = _OPEN.match(lines[i])
        if match is None or (match["fence"][0] == "`" and "`" in match["info"]):
            i += 1
            continue
        fence, start = match["fence"], i
        closing = re.compile(rf"^[ \t]*{re.escape(fence[0])}{{{len(fence)},}}[ \t]*$")
        body: list[str] = []
        i += 1
        while i < len(lines) and not closing.match(lines[i]):
            body.append(lines[i])
            i += 1
        i += 1  # past the closing fence (an unclosed fence runs to the end, as CommonMark says)
        language = _language(match["info"])
        if language not in SHELL_LANGUAGES:
            continue
        text = _dedent(body, len(match["indent"]))
        script = console_commands(text) if language == "console" else text
        before = next((line.strip() for line in reversed(lines[:start]) if line.strip()), "")
        if script.strip():
            steps.append(ShellStep(len(steps) + 1, language, script, start + 1, may_fail=before == MAY_FAIL))
    return steps
