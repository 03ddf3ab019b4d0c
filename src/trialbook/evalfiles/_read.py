"""Reading one eval definition (a YAML document or a ``define_eval`` call) into an :class:`EvalSpec`."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from ..agents import AgentSpec
from ..assertions import Assertion
from ..sandbox import ISOLATIONS, NETWORKS, TemplateFilter, check_pattern, find_special_files
from ._compare import CompareSpec, check_compare, check_leaks, read_compare
from ._context import Context
from ._fields import FIELDS, ID_PATTERN
from ._inputs import InstructionFile, SkillFolder
from ._limits import Limits, read_limits
from ._model import DEFAULT_TIMEOUT_S, EvalSpec, ShimSpec
from ._nodes import Node
from ._problems import display_path
from ._read_agents import read_agents, read_shims
from ._read_assertions import read_assertions
from ._read_inputs import check_loaded_names, read_instructions, read_skills
from ._read_params import check_placeholders, read_params, read_secrets
from ._triggers import TriggerSpec, read_triggers

__all__ = ["READERS", "read_eval"]

_EXAMPLE = {doc.name: doc.example for doc in FIELDS}


class _EvalReader:
    """Reads each key into an attribute; problems go to the context, never raised."""

    def __init__(self, ctx: Context, default_id: str) -> None:
        self.ctx = ctx
        self.id: str | None = default_id
        self.prompt: tuple[str, Path | None] | None = None
        self.params: dict[str, str] | None = {}
        self.agents: tuple[AgentSpec, ...] | None = None
        self.trials: int | None = 1
        self.min_trials: int | None = None
        self.negative_control = True
        self.pass_rate: float | None = 1.0
        self.template: Path | None = None
        self.template_exclude: tuple[str, ...] | None = ()
        self.isolation = "none"
        self.network: str | None = None
        self.shims: tuple[ShimSpec, ...] | None = ()
        self.assertions: tuple[Assertion, ...] | None = ()
        self.max_cost_usd: float | None = None
        self.timeout_s: float | None = DEFAULT_TIMEOUT_S
        self.instructions: tuple[InstructionFile, ...] | None = ()
        self.skills: tuple[SkillFolder, ...] | None = ()
        self.compare: CompareSpec | None = None
        self.compare_ok = True
        self.limits: Limits | None = Limits()
        self.triggers: TriggerSpec | None = None
        self.triggers_ok = True

    def read_id(self, node: Node) -> None:
        text = self.ctx.read.string(node, "id", _EXAMPLE["id"])
        if text is not None and not re.fullmatch(ID_PATTERN, text):
            fix = "use letters, digits, '.', '_', '-' and '/' between parts, e.g. setup/create-project"
            self.ctx.problems.add(node.line, "id", f"{text!r} is not a valid id", fix)
            text = None
        self.id = text

    def read_prompt(self, node: Node) -> None:
        relative = self.ctx.read.string(node, "prompt", _EXAMPLE["prompt"])
        if relative is None:
            return
        path = Path(self.ctx.folder, relative).resolve()
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            reason = "does not exist" if not path.exists() else f"cannot be read ({type(exc).__name__})"
            fix = f"looked for {display_path(path)}; paths are relative to the eval file"
            self.ctx.problems.add(node.line, "prompt", f"the prompt file {relative} {reason}", fix)
            return
        if "\0" in text:
            # The prompt reaches agents as an argument or environment variable, which cannot carry NUL.
            fix = "save the prompt as plain text without NUL bytes"
            self.ctx.problems.add(node.line, "prompt", f"the prompt file {relative} holds a NUL byte", fix)
            return
        self.prompt = (text, path)

    def read_prompt_text(self, node: Node) -> None:
        text = self.ctx.read.string(node, "prompt_text", "prompt_text: |")
        self.prompt = None if text is None else (text, None)

    def read_params(self, node: Node) -> None:
        self.params = read_params(node, self.ctx)

    def read_secrets(self, node: Node) -> None:
        self.ctx.secrets = read_secrets(node, self.ctx)

    def read_agents(self, node: Node) -> None:
        self.agents = read_agents(node, self.ctx)

    def read_trials(self, node: Node) -> None:
        if node.mapping is None:
            self.trials = self.ctx.read.integer(node, "trials", _EXAMPLE["trials"], minimum=1)
            return
        # Adaptive trials: run at least min, at most max, and stop once the verdict is decided.
        entries = node.mapping
        example = "trials: {max: 10, min: 3}"
        self.ctx.read.only_keys(entries, "trials", ("max", "min"))
        if "max" not in entries:
            self.ctx.problems.add(node.line, "trials.max", "is missing", f"write e.g. {example}")
            self.trials = None
            return
        self.trials = self.ctx.read.integer(entries["max"], "trials.max", example, minimum=1)
        low = entries.get("min")
        self.min_trials = 1 if low is None else self.ctx.read.integer(low, "trials.min", example, minimum=1)
        if self.trials is not None and self.min_trials is not None and self.min_trials > self.trials:
            assert low is not None
            fix = f"make min at most max, e.g. trials: {{max: {self.trials}, min: {self.trials}}}"
            self.ctx.problems.add(low.line, "trials.min", f"{self.min_trials} is more than max", fix)
            self.trials = None

    def read_pass_rate(self, node: Node) -> None:
        rate = self.ctx.read.number(node, "pass_rate", _EXAMPLE["pass_rate"])
        if rate is not None and not 0 < rate <= 1:
            hint = f"; for {rate:g}% write {rate / 100:g}" if 1 < rate <= 100 else ""
            fix = f"give a share of trials, more than 0 and at most 1, e.g. pass_rate: 0.67{hint}"
            self.ctx.problems.add(node.line, "pass_rate", f"{rate:g} is out of range", fix)
            rate = None
        self.pass_rate = rate

    def read_negative_control(self, node: Node) -> None:
        if not isinstance(node.value, bool):
            self.ctx.read.wrong(node, "negative_control", "true or false", _EXAMPLE["negative_control"])
            return
        self.negative_control = node.value

    def read_sandbox(self, node: Node) -> None:
        entries = self.ctx.read.mapping(node, "sandbox", _EXAMPLE["sandbox"])
        if entries is None:
            return
        self.ctx.read.only_keys(entries, "sandbox", ("template", "exclude", "isolation", "network"))
        for key, allowed in (("isolation", ISOLATIONS), ("network", NETWORKS)):
            if key in entries:
                value = entries[key].value
                if value in allowed:
                    setattr(self, key, value)
                else:
                    choices = " or ".join(allowed)
                    self.ctx.read.wrong(
                        entries[key], f"sandbox.{key}", choices, f"sandbox: {{{key}: {allowed[-1]}}}"
                    )
        if "exclude" in entries:
            self.template_exclude = self._read_exclude(entries["exclude"], has_template="template" in entries)
        if "template" not in entries:
            return
        value = entries["template"]
        relative = self.ctx.read.string(value, "sandbox.template", _EXAMPLE["sandbox"])
        if relative is None:
            return
        folder = Path(self.ctx.folder, relative).resolve()
        if not folder.is_dir():
            reason = "is not a folder" if folder.exists() else "does not exist"
            fix = f"looked for {display_path(folder)}; paths are relative to the eval file"
            self.ctx.problems.add(
                value.line, "sandbox.template", f"the template folder {relative} {reason}", fix
            )
        keep = TemplateFilter.of(self.template_exclude or ())
        skip = lambda rel, is_dir: keep.excluded(rel, is_dir=is_dir)  # noqa: E731
        for name, kind in find_special_files(folder, skip=skip) if folder.is_dir() else ():
            fix = "remove it; a template may hold only files, folders and symlinks"
            self.ctx.problems.add(
                value.line, "sandbox.template", f"{relative.rstrip('/')}/{name} is {kind}", fix
            )
        self.template = folder

    def _read_exclude(self, node: Node, *, has_template: bool) -> tuple[str, ...] | None:
        example = "sandbox: {template: .., exclude: [node_modules, '*.log']}"
        items = self.ctx.read.sequence(node, "sandbox.exclude", example)
        if items is None:
            return None
        if not has_template:
            fix = "add sandbox.template: exclude leaves files of the template out of each trial's copy"
            self.ctx.problems.add(node.line, "sandbox.exclude", "has no template to exclude from", fix)
            return None
        patterns: list[str] = []
        for index, item in enumerate(items):
            field = f"sandbox.exclude[{index}]"
            text = self.ctx.read.string(item, field, example)
            if text is None:
                continue
            problem = check_pattern(text)
            if problem is not None:
                fix = "write a glob relative to the template, e.g. node_modules, '*.log' or build/**"
                self.ctx.problems.add(item.line, field, f"{text!r} {problem}", fix)
                continue
            patterns.append(text)
        return tuple(patterns) if len(patterns) == len(items) else None

    def read_shims(self, node: Node) -> None:
        self.shims = read_shims(node, self.ctx)

    def read_instructions(self, node: Node) -> None:
        self.instructions = read_instructions(node, self.ctx)

    def read_skills(self, node: Node) -> None:
        self.skills = read_skills(node, self.ctx)

    def read_compare(self, node: Node) -> None:
        self.compare = read_compare(node, self.ctx)
        self.compare_ok = self.compare is not None

    def check_compare(self) -> None:
        # After every key: instructions and skills may be written below compare.
        if self.compare is not None and self.instructions is not None and self.skills is not None:
            self.compare = check_compare(self.compare, self.instructions, self.skills, self.ctx)
            self.compare_ok = self.compare is not None
            if self.compare is not None and self.template_exclude is not None:
                keep = TemplateFilter.of(self.template_exclude)
                check_leaks(self.compare, self.instructions, self.skills, self.template, keep, self.ctx)

    def read_triggers(self, node: Node) -> None:
        self.triggers = read_triggers(node, self.ctx)
        self.triggers_ok = self.triggers is not None

    def check_triggers(self, entries: dict[str, Node]) -> None:
        """A trigger eval's prompts are its queries and its check is the skill's use: nothing else."""
        self.prompt = ("", None)
        for key in ("prompt", "prompt_text", "assert", "compare"):
            if key in entries:
                fix = "a trigger eval asks its queries and checks whether the skill was used; move the rest "
                fix += "to an eval of its own"
                self.ctx.problems.add(entries[key].key_line, key, "cannot be used with triggers", fix)
        written = (entries["triggers"].mapping or {}).get("skill")
        names = [skill.name for skill in self.skills or ()]
        wanted = written.value if written is not None else None
        if (
            isinstance(wanted, str)
            and written is not None
            and self.skills is not None
            and wanted not in names
        ):
            fix = f"declare it under skills: (declared: {', '.join(names) or 'none'})"
            self.ctx.problems.add(written.line, "triggers.skill", f"{wanted!r} is no declared skill", fix)

    def read_assert(self, node: Node) -> None:
        self.assertions = read_assertions(node, self.ctx)

    def read_max_cost_usd(self, node: Node) -> None:
        if node.value is None:
            return
        cost = self.ctx.read.number(node, "max_cost_usd", _EXAMPLE["max_cost_usd"])
        if cost is not None and cost <= 0:
            self.ctx.problems.add(
                node.line, "max_cost_usd", f"{cost:g} is not positive", "give dollars, e.g. 2"
            )
            cost = None
        self.max_cost_usd = cost

    def read_timeout(self, node: Node) -> None:
        self.timeout_s = self.ctx.read.duration(node, "timeout", _EXAMPLE["timeout"])

    def read_limits(self, node: Node) -> None:
        self.limits = read_limits(node, self.ctx)


READERS: dict[str, Callable[[_EvalReader, Node], None]] = {
    "id": _EvalReader.read_id,
    "prompt": _EvalReader.read_prompt,
    "prompt_text": _EvalReader.read_prompt_text,
    "params": _EvalReader.read_params,
    "secrets": _EvalReader.read_secrets,
    "agents": _EvalReader.read_agents,
    "trials": _EvalReader.read_trials,
    "pass_rate": _EvalReader.read_pass_rate,
    "negative_control": _EvalReader.read_negative_control,
    "sandbox": _EvalReader.read_sandbox,
    "shims": _EvalReader.read_shims,
    "instructions": _EvalReader.read_instructions,
    "skills": _EvalReader.read_skills,
    "compare": _EvalReader.read_compare,
    "triggers": _EvalReader.read_triggers,
    "assert": _EvalReader.read_assert,
    "max_cost_usd": _EvalReader.read_max_cost_usd,
    "timeout": _EvalReader.read_timeout,
    "limits": _EvalReader.read_limits,
}
"""Every key an eval file may hold, with its reader. ``secrets`` and ``params`` are read first."""

_FIRST = ("secrets", "params")


def _check_keys(entries: dict[str, Node], ctx: Context) -> None:
    """Unknown top-level keys; a Python eval file is told the keyword it can write (``assert_``)."""
    if ctx.source.suffix != ".py":
        ctx.read.only_keys(entries, "", READERS)
        return
    from ._python import PYTHON_NAMES  # loaded by the Python eval file's define_eval already

    spelled = {yaml: python for python, yaml in PYTHON_NAMES.items()}
    for key, node in entries.items():
        if key not in READERS:
            ctx.problems.unknown_key(node.key_line, key, key, [spelled.get(name, name) for name in READERS])


def read_eval(root: Node, ctx: Context, default_id: str) -> EvalSpec | None:
    """Read one eval definition; ``None`` when anything is wrong (every problem recorded in ``ctx``)."""
    entries = ctx.read.mapping(root, "<file>", "prompt: prompt.md")
    if entries is None:
        return None
    _check_keys(entries, ctx)
    reader = _EvalReader(ctx, default_id)
    order = [key for key in _FIRST if key in entries] + [key for key in entries if key not in _FIRST]
    for key in order:
        if key in READERS:
            ctx.lines[key] = entries[key].line
            READERS[key](reader, entries[key])
    if "triggers" in entries:
        reader.check_triggers(entries)
    else:
        _check_prompt_keys(entries, root, ctx)
    reader.check_compare()
    if reader.assertions:
        from ._read_judge import check_pairwise

        check_pairwise(reader.assertions, "compare" in entries, ctx)
    if "agents" not in entries:
        ctx.problems.add(root.line, "agents", "is missing", f"write e.g. {_EXAMPLE['agents']}")
    if reader.prompt is not None and "triggers" not in entries:
        check_placeholders(reader.prompt, reader.params, entries, ctx)
    check_loaded_names(reader.assertions, reader.instructions, reader.skills, ctx)
    r = reader
    if (
        ctx.problems
        or r.id is None
        or r.prompt is None
        or r.params is None
        or ctx.secrets is None
        or r.agents is None
        or r.trials is None
        or r.pass_rate is None
        or r.shims is None
        or r.assertions is None
        or r.timeout_s is None
        or r.template_exclude is None
        or r.instructions is None
        or r.skills is None
        or not r.compare_ok
        or not r.triggers_ok
        or r.limits is None
    ):
        return None
    return EvalSpec(
        id=r.id,
        source=ctx.source,
        prompt_template=r.prompt[0],
        prompt_path=r.prompt[1],
        params=r.params,
        secrets=ctx.secrets,
        agents=r.agents,
        trials=r.trials,
        min_trials=r.min_trials,
        negative_control=r.negative_control,
        pass_rate=r.pass_rate,
        template=r.template,
        template_exclude=r.template_exclude,
        isolation=r.isolation,
        network=r.network,
        shims=r.shims,
        instructions=r.instructions,
        skills=r.skills,
        compare=r.compare,
        triggers=r.triggers,
        assertions=r.assertions,
        max_cost_usd=r.max_cost_usd,
        timeout_s=r.timeout_s,
        output_limit=r.limits.output,
        checks_timeout_s=r.limits.checks_s,
        evals_root=ctx.evals_root,
        lines=dict(ctx.lines),
    )


def _check_prompt_keys(entries: dict[str, Node], root: Node, ctx: Context) -> None:
    if "prompt" in entries and "prompt_text" in entries:
        later = max(entries["prompt"].key_line, entries["prompt_text"].key_line)
        ctx.problems.add(
            later, "prompt_text", "prompt and prompt_text are both given", "keep only one of them"
        )
    elif "prompt" not in entries and "prompt_text" not in entries:
        fix = "add prompt: path/to/prompt.md, or prompt_text: | with the prompt itself"
        ctx.problems.add(root.line, "prompt", "no prompt is given", fix)
