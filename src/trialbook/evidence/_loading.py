"""Which declared instruction files and skills reached the model, decided from the requests actually sent.

An agent that never loaded a skill and one that loaded it and ignored it fail the same way; only the
requests tell them apart. The decision is pure: given what was declared and the text of every request a
request audit saw, each input is ``loaded`` ``True`` (its text was sent), ``False`` (requests were audited
and none carried it) or ``None`` (no audit ran, so nobody knows). It never guesses.

"Text of a request" is its *context*, what the agent itself put in front of the model: the system or
developer text, the tool descriptions, and the user messages before the model's first reply. Tool output
comes later in a conversation and is left out, so an agent that ``cat``s ``AGENTS.md`` has read the file
but has not loaded it as instructions.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

from ._json import JsonValue

__all__ = [
    "DeclaredInput",
    "InputKind",
    "InstructionLoad",
    "LoadTracker",
    "loaded_from_requests",
    "normalize_text",
    "request_context",
]

InputKind = Literal["instructions", "skill"]

# Patterns as strings, compiled (and cached by ``re``) on first use: only loaded instructions need them.
_SPACE = r"\s+"
_FRONT_MATTER = r"(?s)\A---[ \t]*\r?\n.*?\r?\n---[ \t]*(?:\r?\n|\Z)"


@dataclass(frozen=True)
class InstructionLoad:
    """One declared input in a trial's evidence.

    ``path`` is where it was placed in the sandbox (a file, or a skill's folder), ``sha256`` the hex hash of
    the file (``SKILL.md`` for a skill) and ``loaded`` the decision described in the module docstring.
    """

    path: str
    kind: InputKind
    sha256: str
    loaded: bool | None


def normalize_text(text: str) -> str:
    """``text`` with every run of whitespace as one space and the ends trimmed.

    Agents re-wrap, indent or join instruction files when they put them into a request; what stays is the
    sequence of words.
    """
    return re.sub(_SPACE, " ", text).strip()


@dataclass(frozen=True)
class DeclaredInput:
    """What the decision needs of one declared input: its evidence identity and the texts that show it.

    ``needles`` are normalized texts; the input counts as loaded when a request's context holds any one of
    them. Build them with :meth:`instruction_file` or :meth:`skill`.
    """

    path: str
    kind: InputKind
    sha256: str
    needles: tuple[str, ...]
    named: str | None = None
    """Set when another instruction file in the sandbox has the same text: the text then shows this file
    only where the request names it (this file name, within :data:`NAME_WINDOW` characters before the
    text, as agents head an instruction file with its path). Text under one of ``shared_with`` (the
    other files' names) is theirs; text under no name at all decides nothing (``loaded: null``)."""
    shared_with: tuple[str, ...] = ()

    @classmethod
    def instruction_file(cls, path: str, sha256: str, text: str) -> DeclaredInput:
        """An instruction file is loaded when its body is sent; front matter (``applyTo:``) may be dropped."""
        body = normalize_text(re.sub(_FRONT_MATTER, "", text, count=1))
        return cls(path, "instructions", sha256, (body,) if body else ())

    @classmethod
    def skill(cls, path: str, sha256: str, description: str | None, skill_md: str) -> DeclaredInput:
        """A skill is loaded when its description is listed to the model, or its body is sent (invoked)."""
        body = re.sub(_FRONT_MATTER, "", skill_md, count=1)
        texts = [normalize_text(description or ""), normalize_text(body)]
        return cls(path, "skill", sha256, tuple(text for text in texts if text))


class LoadTracker:
    """Feed it each audited request's context as it is sent; it keeps no request text, only the finds."""

    def __init__(self, declared: Sequence[DeclaredInput]) -> None:
        self.declared = tuple(declared)
        self.requests = 0
        self._found: set[int] = set()
        self._unnamed: set[int] = set()
        """Inputs whose text was sent, but not under their own name (see ``DeclaredInput.named``)."""

    def see(self, context: str) -> None:
        """Record one request (its context text, as :func:`request_context` gives it)."""
        self.requests += 1
        text = normalize_text(context)
        for index, item in enumerate(self.declared):
            if index in self._found:
                continue
            if item.named is None:
                if any(needle in text for needle in item.needles):
                    self._found.add(index)
                continue
            for needle in item.needles:
                for at in _occurrences(text, needle):
                    before = text[max(0, at - NAME_WINDOW) : at]
                    if item.named in before:
                        self._found.add(index)
                        break
                    if not any(other in before for other in item.shared_with):
                        self._unnamed.add(index)

    def _decision(self, index: int) -> bool | None:
        if index in self._found:
            return True
        return None if index in self._unnamed else False

    def result(self, *, audited: bool) -> tuple[InstructionLoad, ...]:
        """Each input's decision; all ``None`` unless ``audited`` (an audit ran and saw every request).

        An audit that saw no request at all decides nothing either: the agent may have stopped first.
        """
        known = audited and self.requests > 0
        return tuple(
            InstructionLoad(
                item.path,
                item.kind,
                item.sha256,
                # A file without words cannot be told apart in a request: sent or not is unknown; so is
                # one whose text went out only without its name, while another file holds that text.
                self._decision(index) if known and item.needles else None,
            )
            for index, item in enumerate(self.declared)
        )


NAME_WINDOW = 400
"""How far before an instruction file's text its name may stand (Claude Code heads it ``Contents of
<path> (project instructions ...):``, Codex ``# AGENTS.md instructions for <folder>``)."""


def _occurrences(text: str, needle: str) -> Iterable[int]:
    at = text.find(needle)
    while at != -1:
        yield at
        at = text.find(needle, at + 1)


def loaded_from_requests(
    declared: Sequence[DeclaredInput], request_texts: Iterable[str] | None
) -> tuple[InstructionLoad, ...]:
    """The decision over every request's context text; ``request_texts`` is ``None`` when no audit ran."""
    tracker = LoadTracker(declared)
    for text in request_texts or ():
        tracker.see(text)
    return tracker.result(audited=request_texts is not None)


def _texts(content: JsonValue) -> list[str]:
    if isinstance(content, str):
        return [content]
    if isinstance(content, list):
        found: list[str] = []
        for part in content:
            if isinstance(part, dict) and part.get("type") not in ("tool_result", "function_call_output"):
                value = part.get("text")
                if isinstance(value, str):
                    found.append(value)
        return found
    return []


def _tool_texts(tools: JsonValue) -> list[str]:
    found: list[str] = []
    for tool in tools if isinstance(tools, list) else ():
        if isinstance(tool, dict):
            inner = tool.get("function")
            source = inner if isinstance(inner, dict) else tool
            for key in ("name", "description"):
                value = source.get(key)
                if isinstance(value, str):
                    found.append(value)
    return found


def request_context(body: JsonValue) -> str:
    """The context of one model request body (Anthropic Messages, OpenAI Responses or chat completions).

    System and developer text at any position, tool descriptions, and user text up to the first
    assistant message; never tool results. Unknown shapes give what could be read, possibly ``""``.
    """
    if not isinstance(body, dict):
        return ""
    parts: list[str] = []
    for key in ("system", "instructions"):
        parts += _texts(body.get(key))
    parts += _tool_texts(body.get("tools"))
    messages = body.get("messages", body.get("input"))
    if isinstance(messages, str):
        return "\n".join([*parts, messages])
    opening = True
    for message in messages if isinstance(messages, list) else ():
        if not isinstance(message, dict):
            continue
        role = message.get("role")
        if role == "assistant" or message.get("type") in ("function_call", "reasoning"):
            opening = False
        if role in ("system", "developer") or (role == "user" and opening):
            parts += _texts(message.get("content"))
    return "\n".join(parts)
