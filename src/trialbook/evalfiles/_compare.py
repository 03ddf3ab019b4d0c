"""``compare:``: run an eval a second time without some of its instruction files and skills.

Two shapes, so the common case is one word and the precise case is still plain YAML::

    compare: without                              # drop every declared instruction file and skill
    compare: {without: [AGENTS.md, deploy], alpha: 0.1}

Names are checked against what the eval declares once every key is read (``instructions:`` and
``skills:`` may come after ``compare:`` in the file).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from ..sandbox import TemplateFilter
from ..scoring.stats import COMPARE_ALPHA
from ._context import Context
from ._inputs import InstructionFile, SkillFolder
from ._nodes import Node

__all__ = ["COMPARE_EXAMPLE", "CompareSpec", "check_compare", "check_leaks", "read_compare"]

COMPARE_EXAMPLE = "compare: without"
_LIST_EXAMPLE = "compare: {without: [AGENTS.md]}"


@dataclass(frozen=True)
class CompareSpec:
    """What the ``without`` arm leaves out, and the level its difference from ``with`` is judged at.

    ``without`` is ``None`` for every declared input, else the names as written (checked to be declared);
    ``lines`` keeps each name's line so the check can point at it.
    """

    without: tuple[str, ...] | None = None
    alpha: float = COMPARE_ALPHA
    line: int = 1
    lines: tuple[int, ...] = ()

    def dropped(
        self, instructions: Sequence[InstructionFile], skills: Sequence[SkillFolder]
    ) -> tuple[str, ...]:
        """The names of the inputs the ``without`` arm leaves out, in declaration order."""
        return self.without if self.without is not None else _names(instructions, skills)


def _names(instructions: Sequence[InstructionFile], skills: Sequence[SkillFolder]) -> tuple[str, ...]:
    return tuple(f.path for f in instructions) + tuple(s.name for s in skills)


def read_compare(node: Node, ctx: Context) -> CompareSpec | None:
    """The ``compare`` key, its shape checked; ``None`` (and a problem recorded) when it is wrong."""
    if node.value == "without":
        return CompareSpec(line=node.line)
    if node.mapping is None:
        fix = f"write {COMPARE_EXAMPLE} (drop every instruction file and skill) or {_LIST_EXAMPLE}"
        ctx.problems.add(node.line, "compare", f"expected 'without' or a mapping, got {node.value!r}", fix)
        return None
    entries = node.mapping
    ctx.read.only_keys(entries, "compare", ("without", "alpha"))
    alpha = COMPARE_ALPHA
    if "alpha" in entries:
        value = ctx.read.number(entries["alpha"], "compare.alpha", "compare: {without: all, alpha: 0.05}")
        if value is not None and not 0 < value < 1:
            fix = "give a significance level between 0 and 1, e.g. alpha: 0.05"
            ctx.problems.add(entries["alpha"].line, "compare.alpha", f"{value:g} is out of range", fix)
            value = None
        if value is None:
            return None
        alpha = value
    if "without" not in entries:
        ctx.problems.add(node.line, "compare.without", "is missing", f"write e.g. {_LIST_EXAMPLE}")
        return None
    listed = entries["without"]
    if listed.value == "all":
        return CompareSpec(alpha=alpha, line=node.line)
    items = ctx.read.sequence(listed, "compare.without", _LIST_EXAMPLE)
    if items is None:
        return None
    if not items:
        fix = "name the instruction files or skills to leave out, or write without: all"
        ctx.problems.add(listed.line, "compare.without", "is empty", fix)
        return None
    names: list[str] = []
    for index, item in enumerate(items):
        field = f"compare.without[{index}]"
        name = ctx.read.string(item, field, _LIST_EXAMPLE)
        if name is not None and name in names:
            ctx.problems.add(item.line, field, f"{name} is listed twice", "list each input once")
            name = None
        if name is None:
            return None
        names.append(name)
    return CompareSpec(tuple(names), alpha, node.line, tuple(item.line for item in items))


def check_compare(
    compare: CompareSpec, instructions: Sequence[InstructionFile], skills: Sequence[SkillFolder], ctx: Context
) -> CompareSpec | None:
    """``compare`` with every name as the inputs are known (sandbox path, skill name); ``None`` if wrong.

    Each name that is not declared is a problem at its own line, listing the names there are.
    """
    declared = _names(instructions, skills)
    if not declared:
        fix = "declare instruction files or skills (instructions: [AGENTS.md], skills: [skills/deploy])"
        ctx.problems.add(
            compare.line, "compare", "the eval declares no instruction file or skill to leave out", fix
        )
        return None
    if compare.without is None:
        return compare
    canonical: list[str] = []
    wrong = False
    for index, name in enumerate(compare.without):
        found = _canonical(name, instructions, skills)
        if found is None:
            line = compare.lines[index] if index < len(compare.lines) else compare.line
            fix = f"name one of the declared inputs: {', '.join(declared)}"
            message = f"{name} is not a declared instruction file or skill"
            ctx.problems.add(line, f"compare.without[{index}]", message, fix)
            wrong = True
        elif found not in canonical:
            canonical.append(found)
    if wrong:
        return None
    return CompareSpec(tuple(canonical), compare.alpha, compare.line, compare.lines)


_SKILL_FOLDERS = (".claude/skills", ".github/skills", ".agents/skills")
"""Where agents find a repository's skills: a dropped skill still there is still found."""


def check_leaks(
    compare: CompareSpec,
    instructions: Sequence[InstructionFile],
    skills: Sequence[SkillFolder],
    template: Path | None,
    keep: TemplateFilter,
    ctx: Context,
) -> None:
    """A ``without`` arm is only without an input if the template does not bring it back.

    An instruction file left out by the arm but present at its sandbox path in the template (say
    ``template: ..`` of a repository holding ``CLAUDE.md``), or a skill left out but present in a skills
    folder of the template, would be in the ``without`` arm's sandbox all the same: the comparison would
    measure nothing. Each such path is a problem naming it, with the fix.
    """
    if template is None:
        return
    dropped = set(compare.dropped(instructions, skills))
    paths = [f.path for f in instructions if f.path in dropped]
    paths += [f"{folder}/{s.name}" for s in skills if s.name in dropped for folder in _SKILL_FOLDERS]
    for path in paths:
        if (template / path).exists() and keep.kept(path, is_dir=(template / path).is_dir()):
            fix = f"add it to sandbox.exclude (exclude: [{path}]) so the without arm really runs without it"
            message = f"the template holds {path}, so the without arm would still have it: it leaks"
            ctx.problems.add(compare.line, "compare", message, fix)


def _canonical(
    name: str, instructions: Sequence[InstructionFile], skills: Sequence[SkillFolder]
) -> str | None:
    # The names trialbook.evalfiles.without_inputs accepts: the sandbox path or skill name, or as written.
    wanted = PurePosixPath(name).as_posix().rstrip("/")
    named: list[tuple[str, str]] = [(f.path, f.written) for f in instructions]
    named += [(s.name, s.written) for s in skills]
    for main, written in named:
        if wanted in (main, PurePosixPath(written).as_posix().rstrip("/")):
            return main
    return None
