"""The rules a ``SKILL.md`` front matter must follow for every agent that reads it; pure, no I/O.

The limits are the Agent Skills format's, which Claude Code, Copilot and Codex all read: a ``name`` of
1-64 lowercase letters, digits and single hyphens that matches its folder, a ``description`` of 1-1,024
characters, an optional ``compatibility`` of at most 500. Claude Code also refuses XML tags in either
field and the reserved words ``anthropic`` and ``claude`` in a name. A skill that breaks one of them is
skipped or truncated by some agent, which is exactly the silent failure a trigger eval would only find
after paying for trials.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import dataclass

import yaml

from ..evalfiles import YamlTooLarge, check_yaml_bounds

__all__ = [
    "MAX_COMPATIBILITY",
    "MAX_DESCRIPTION",
    "MAX_NAME",
    "Problem",
    "Skill",
    "clashes",
    "estimate_tokens",
    "read_skill",
]

MAX_NAME = 64
MAX_DESCRIPTION = 1024
MAX_COMPATIBILITY = 500
_NAME = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
_RESERVED = ("anthropic", "claude")
_XML_TAG = re.compile(r"</?[A-Za-z][^<>]*>")
_OPEN = re.compile(r"---[ \t]*\r?\n")
_CLOSE = re.compile(r"(?m)^---[ \t]*(?:\r?\n|\Z)")


@dataclass(frozen=True, slots=True)
class Problem:
    """One thing wrong, worded as eval-file problems are: ``file:line: field: message (fix)``.

    ``line`` is ``None`` only for a file that is not there to point into (a skill folder without SKILL.md).
    """

    path: str
    line: int | None
    field: str
    message: str
    fix: str

    def __str__(self) -> str:
        where = self.path if self.line is None else f"{self.path}:{self.line}"
        return f"{where}: {self.field}: {self.message} ({self.fix})"


@dataclass(frozen=True, slots=True)
class Skill:
    """A ``SKILL.md`` whose front matter could be read: where it is, its name and description, and lines."""

    path: str
    name: str
    description: str
    name_line: int
    description_line: int


def estimate_tokens(text: str) -> int:
    """About how many tokens ``text`` costs a model: UTF-8 bytes over four, rounded up.

    Every model family tokenizes differently and no tokenizer ships offline for all of them; the
    estimate is for comparing files and watching growth, and is labelled as one wherever it is shown.
    """
    return math.ceil(len(text.encode("utf-8")) / 4)


def _front_matter(path: str, text: str) -> tuple[yaml.MappingNode | None, int, list[Problem]]:
    """The front matter's YAML node and the file line its first line is on, or the problems instead."""
    fix = "start SKILL.md with a --- line, then name: and description:, then a closing --- line"
    opened = _OPEN.match(text)
    if opened is None:
        return None, 0, [Problem(path, 1, "front matter", "SKILL.md does not start with a --- block", fix)]
    closed = _CLOSE.search(text, opened.end())
    if closed is None:
        return None, 0, [Problem(path, 1, "front matter", "the --- block is never closed", fix)]
    block = text[opened.end() : closed.start()]
    first = 2  # the block starts on the line after the opening ---
    try:
        check_yaml_bounds(block, yaml.SafeLoader)
        node = yaml.compose(block, Loader=yaml.SafeLoader)
    except YamlTooLarge as exc:
        return None, 0, [Problem(path, first + exc.line - 1, "front matter", exc.problem, exc.fix)]
    except yaml.YAMLError as exc:
        # Where the broken construct started (an unclosed bracket) says more than where parsing gave up.
        mark = getattr(exc, "context_mark", None) or getattr(exc, "problem_mark", None)
        line = first + (mark.line if mark is not None else 0)
        reason = str(getattr(exc, "problem", None) or exc).splitlines()[0]
        fix = "fix the YAML between the --- lines; quote a description holding ': ' or '#'"
        return None, 0, [Problem(path, line, "front matter", f"not valid YAML: {reason}", fix)]
    if not isinstance(node, yaml.MappingNode):
        return None, 0, [Problem(path, first, "front matter", "the --- block is not a mapping", fix)]
    return node, first, []


def _fields(node: yaml.MappingNode, first: int) -> dict[str, tuple[object, int]]:
    """Each top-level key's plain value (scalars as text, anything else as its node) and its line."""
    found: dict[str, tuple[object, int]] = {}
    for key, value in node.value:
        if isinstance(key, yaml.ScalarNode) and key.value not in found:
            plain = value.value if isinstance(value, yaml.ScalarNode) else value
            found[key.value] = (plain, first + key.start_mark.line)
    return found


def _check_name(path: str, folder: str, name: object, line: int) -> list[Problem]:
    rule = f"1-{MAX_NAME} lowercase letters, digits and single hyphens, the same as the folder ({folder})"
    if not isinstance(name, str) or not name:
        return [Problem(path, line, "name", "the name is missing or not text", f"write name: {folder}")]
    problems = []
    if len(name) > MAX_NAME or _NAME.fullmatch(name) is None:
        problems.append(Problem(path, line, "name", f"the name {name!r} breaks the naming rule", rule))
    elif name != folder:
        problems.append(
            Problem(path, line, "name", f"the name {name!r} differs from its folder {folder!r}", rule)
        )
    reserved = [word for word in _RESERVED if word in name]
    if reserved:
        problems.append(
            Problem(path, line, "name", f"Claude Code refuses names holding {reserved[0]!r}", "rename it")
        )
    if _XML_TAG.search(name):
        problems.append(Problem(path, line, "name", "the name holds an XML tag", "remove the <...> tag"))
    return problems


def _check_text(path: str, field: str, value: object, line: int, limit: int) -> list[Problem]:
    if not isinstance(value, str) or not value.strip():
        fix = f"write {field}: with what the skill does and when to use it"
        return [Problem(path, line, field, f"the {field} is missing, empty or not text", fix)]
    problems = []
    if len(value) > limit:
        fix = f"shorten it to at most {limit:,}; agents cut or refuse a longer one"
        problems.append(Problem(path, line, field, f"the {field} is {len(value):,} characters", fix))
    if _XML_TAG.search(value):
        fix = "remove the <...> tag: Claude Code refuses XML tags here"
        problems.append(Problem(path, line, field, f"the {field} holds an XML tag", fix))
    return problems


def read_skill(path: str, folder: str, text: str) -> tuple[Skill | None, list[Problem]]:
    """Check one ``SKILL.md`` (shown as ``path``, in a folder named ``folder``); the skill if it is usable."""
    node, first, problems = _front_matter(path, text)
    if node is None:
        return None, problems
    fields = _fields(node, first)
    name, name_line = fields.get("name", (None, first))
    description, description_line = fields.get("description", (None, first))
    problems = _check_name(path, folder, name, name_line)
    problems += _check_text(path, "description", description, description_line, MAX_DESCRIPTION)
    if "compatibility" in fields:
        value, line = fields["compatibility"]
        problems += _check_text(path, "compatibility", value, line, MAX_COMPATIBILITY)
    if not isinstance(name, str) or not isinstance(description, str):
        return None, problems
    return Skill(path, name, description, name_line, description_line), problems


def _same_text(text: str) -> str:
    return " ".join(text.split()).casefold()


def clashes(skills: Iterable[Skill]) -> list[Problem]:
    """Two skills an agent cannot tell apart: one description under two names, or one name, two texts.

    The same skill copied to each agent's folder (same name, same description) is no clash: a repository
    that serves Claude Code, Copilot and Codex keeps one copy per agent.
    """
    by_description: dict[str, Skill] = {}
    by_name: dict[str, Skill] = {}
    problems = []
    for skill in skills:
        text = _same_text(skill.description)
        earlier = by_description.setdefault(text, skill)
        if earlier.name != skill.name:
            fix = "say what sets each skill apart, so an agent can pick the right one"
            message = f"the same description as {earlier.path} ({earlier.name})"
            problems.append(Problem(skill.path, skill.description_line, "description", message, fix))
        twin = by_name.setdefault(skill.name, skill)
        if twin is not skill and _same_text(twin.description) != text:
            fix = "keep the copies identical, or rename one"
            message = f"a skill named {skill.name} with another description is at {twin.path}"
            problems.append(Problem(skill.path, skill.name_line, "name", message, fix))
    return problems
