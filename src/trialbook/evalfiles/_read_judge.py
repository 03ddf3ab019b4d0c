"""Reading a ``judge:`` assertion: the rubric, what the judges see, who they are, and how they decide.

Every problem names the field and the fix, and a judge whose key names an undeclared secret is refused
here, not when the first trial has already paid its agent.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Literal, cast

from ._context import Context
from ._nodes import Node
from ._placeholders import secret_names
from ._problems import display_path
from ._values import join

if TYPE_CHECKING:
    from ..assertions import Assertion, Example, Judge, JudgeRef

__all__ = ["MAX_RUBRIC_BYTES", "check_pairwise", "read_judge"]

MAX_RUBRIC_BYTES = 256 * 1024
"""A rubric is instructions to a grader, not a corpus; the same bound as an instruction file."""

EXAMPLE = (
    "judge: {rubric: 'The reply explains why the build failed', judges: [{provider: anthropic, "
    "model: claude-sonnet-4-5}]}"
)
_KEYS = ("rubric", "rubric_file", "show", "judges", "rule", "judge_examples", "pairwise")
_JUDGE_EXAMPLE = "judges: [{provider: openai, model: gpt-5}]"
_PROVIDER_EXAMPLE = (
    "provider: {type: openai, base_url: 'http://127.0.0.1:8080/v1', api_key: '{{ secrets.KEY }}'}"
)
_SHOW_EXAMPLE = "show: [final_message, command_log, diff, {file: NOTES.md}]"


def _rubric(entries: dict[str, Node], node: Node, field: str, ctx: Context) -> tuple[str, str | None] | None:
    if ("rubric" in entries) == ("rubric_file" in entries):
        problem = "both rubric and rubric_file are given" if "rubric" in entries else "the rubric is missing"
        fix = "write the rubric inline (rubric: '...') or name a file (rubric_file: rubric.md), not both"
        ctx.problems.add(node.line, join(field, "rubric"), problem, fix)
        return None
    if "rubric" in entries:
        text = ctx.read.string(
            entries["rubric"], join(field, "rubric"), "rubric: 'The reply names the cause'"
        )
        return None if text is None else (text, None)
    where = entries["rubric_file"]
    written = ctx.read.string(where, join(field, "rubric_file"), "rubric_file: rubrics/explains.md")
    if written is None:
        return None
    path = Path(ctx.folder, written).resolve()
    wrong = _rubric_problem(path)
    if wrong is not None:
        fix = f"looked for {display_path(path)}; paths are relative to the eval file"
        ctx.problems.add(where.line, join(field, "rubric_file"), f"the rubric file {written} {wrong}", fix)
        return None
    return path.read_text(encoding="utf-8"), written


def _rubric_problem(path: Path) -> str | None:
    try:
        with path.open("rb") as file:
            data = file.read(MAX_RUBRIC_BYTES + 1)
    except OSError as exc:
        return "does not exist" if not path.exists() else f"cannot be read ({type(exc).__name__})"
    if len(data) > MAX_RUBRIC_BYTES:
        return f"is larger than {MAX_RUBRIC_BYTES} bytes"
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return "is not UTF-8 text"
    return "is empty" if not text.strip() else None


def _show(node: Node, field: str, ctx: Context) -> tuple[str, ...] | None:
    from ..assertions import SHOW_ITEMS

    items = ctx.read.filled_sequence(node, field, _SHOW_EXAMPLE, "name what the judges see")
    if items is None:
        return None
    found: list[str | None] = []
    for index, item in enumerate(items):
        at = join(field, index)
        if isinstance(item.value, str) and item.value in SHOW_ITEMS:
            found.append(item.value)
            continue
        entries = item.mapping
        if entries is not None and set(entries) == {"file"}:
            path = ctx.read.string(entries["file"], join(at, "file"), "{file: NOTES.md}")
            found.append(None if path is None else f"file:{path}")
            continue
        fix = f"use one of {', '.join(SHOW_ITEMS)}, or {{file: PATH}} for a file of the sandbox"
        ctx.problems.add(item.line, at, f"unknown item {_written(item)}", fix)
        found.append(None)
    valid = [item for item in found if item is not None]
    return tuple(valid) if len(valid) == len(found) else None


def _written(item: Node) -> str:
    if isinstance(item.value, str):
        return repr(item.value)
    return "a mapping without exactly one key, file" if item.mapping is not None else repr(item.value)


def _provider(node: Node, field: str, ctx: Context) -> tuple[str, str | None, str | None] | None:
    from ..assertions import PROVIDERS

    fix = f"use {' or '.join(PROVIDERS)}, or a mapping such as {_PROVIDER_EXAMPLE}"
    if isinstance(node.value, str):
        if node.value not in PROVIDERS:
            ctx.problems.add(node.line, field, f"unknown provider {node.value!r}", fix)
            return None
        return node.value, None, None
    entries = ctx.read.mapping(node, field, _PROVIDER_EXAMPLE)
    if entries is None:
        return None
    ctx.read.only_keys(entries, field, ("type", "base_url", "api_key"))
    if "type" not in entries or entries["type"].value not in PROVIDERS:
        ctx.problems.add(node.line, join(field, "type"), "must be anthropic or openai", fix)
        return None
    base_url = api_key = None
    if "base_url" in entries:
        base_url = ctx.read.string(entries["base_url"], join(field, "base_url"), _PROVIDER_EXAMPLE)
        if base_url is None:
            return None
    if "api_key" in entries:
        key_node = entries["api_key"]
        api_key = ctx.read.string(key_node, join(field, "api_key"), "api_key: '{{ secrets.JUDGE_KEY }}'")
        if api_key is None:
            return None
        ctx.check_secret_use(list(secret_names(api_key)), key_node.line, join(field, "api_key"))
    return str(entries["type"].value), base_url, api_key


def _judges(node: Node, field: str, ctx: Context) -> tuple[JudgeRef, ...] | None:
    from ..assertions import JudgeRef

    items = ctx.read.filled_sequence(node, field, _JUDGE_EXAMPLE, "name at least one judge")
    if items is None:
        return None
    found: list[JudgeRef | None] = []
    for index, item in enumerate(items):
        at = join(field, index)
        entries = ctx.read.mapping(item, at, "{provider: anthropic, model: claude-sonnet-4-5}")
        if entries is None:
            found.append(None)
            continue
        ctx.read.only_keys(entries, at, ("provider", "model"))
        missing = [key for key in ("provider", "model") if key not in entries]
        for key in missing:
            ctx.problems.add(
                item.line, join(at, key), "is missing", "write e.g. {provider: openai, model: gpt-5}"
            )
        if missing:
            found.append(None)
            continue
        provider = _provider(entries["provider"], join(at, "provider"), ctx)
        model = ctx.read.string(entries["model"], join(at, "model"), "model: gpt-5")
        if provider is None or model is None:
            found.append(None)
            continue
        found.append(JudgeRef(provider[0], model, base_url=provider[1], api_key=provider[2]))
    valid = [judge for judge in found if judge is not None]
    return tuple(valid) if len(valid) == len(found) else None


def _examples(node: Node, field: str, ctx: Context) -> tuple[Example, ...] | None:
    from ..assertions import Example

    example = "judge_examples: [{text: 'The build failed because ...', verdict: pass}]"
    items = ctx.read.sequence(node, field, example)
    if items is None:
        return None
    found: list[Example | None] = []
    for index, item in enumerate(items):
        at = join(field, index)
        entries = ctx.read.mapping(item, at, example)
        if entries is None:
            found.append(None)
            continue
        ctx.read.only_keys(entries, at, ("text", "verdict"))
        text = ctx.read.string(entries["text"], join(at, "text"), example) if "text" in entries else None
        verdict = entries["verdict"].value if "verdict" in entries else None
        if "text" not in entries:
            ctx.problems.add(item.line, join(at, "text"), "is missing", f"write e.g. {example}")
        if verdict not in ("pass", "fail"):
            ctx.problems.add(item.line, join(at, "verdict"), "must be pass or fail", f"write e.g. {example}")
            verdict = None
        if text is None or verdict is None:
            found.append(None)
            continue
        found.append(Example(text, verdict))
    valid = [case for case in found if case is not None]
    return tuple(valid) if len(valid) == len(found) else None


def read_judge(node: Node, field: str, ctx: Context) -> Judge | None:
    """The ``judge`` assertion at ``field``, or ``None`` with every problem recorded."""
    from ..assertions import Judge

    entries = ctx.read.mapping(node, field, EXAMPLE)
    if entries is None:
        return None
    ctx.read.only_keys(entries, field, _KEYS)
    rubric = _rubric(entries, node, field, ctx)
    show: tuple[str, ...] | None = ("final_message",)
    if "show" in entries:
        show = _show(entries["show"], join(field, "show"), ctx)
    judges = None
    if "judges" not in entries:
        ctx.problems.add(
            node.line, join(field, "judges"), "is missing", f"name at least one judge, e.g. {_JUDGE_EXAMPLE}"
        )
    else:
        judges = _judges(entries["judges"], join(field, "judges"), ctx)
    rule: str | None = "majority"
    if "rule" in entries:
        rule = entries["rule"].value if entries["rule"].value in ("majority", "unanimous") else None
        if rule is None:
            ctx.problems.add(
                entries["rule"].line,
                join(field, "rule"),
                "must be majority or unanimous",
                "write rule: majority",
            )
    examples: tuple[Example, ...] | None = ()
    if "judge_examples" in entries:
        examples = _examples(entries["judge_examples"], join(field, "judge_examples"), ctx)
    pairwise = _pairwise(entries.get("pairwise"), join(field, "pairwise"), ctx)
    if (
        rubric is None
        or show is None
        or judges is None
        or rule is None
        or examples is None
        or pairwise is None
    ):
        return None
    decides = cast(Literal["majority", "unanimous"], rule)
    return Judge(rubric[0], judges, show, decides, examples, rubric_file=rubric[1], pairwise=pairwise)


def _pairwise(node: Node | None, field: str, ctx: Context) -> bool | None:
    """``pairwise: true|false`` (default false); its line is kept for :func:`check_pairwise`."""
    if node is None:
        return False
    if not isinstance(node.value, bool):
        ctx.read.wrong(node, field, "true or false", "pairwise: true")
        return None
    ctx.lines[field] = node.line
    return node.value


def check_pairwise(assertions: Sequence[Assertion], compared: bool, ctx: Context) -> None:
    """A pairwise judge compares the ``with`` and ``without`` arms: without ``compare:`` there are none.

    Checked once every key is read (``compare:`` may come after ``assert:``); a ``compare:`` that was
    written but is wrong has its own problem already, so only a missing one is reported here.
    """
    for index, assertion in enumerate(assertions):
        if assertion.kind != "judge" or not getattr(assertion, "pairwise", False) or compared:
            continue
        field = join(join("assert", index), "judge.pairwise")
        line = ctx.lines.get(field, ctx.lines.get(join("assert", index), 1))
        fix = (
            "add compare: without (the eval then also runs without its instruction files and skills, "
            "and the judges compare the two arms), or remove pairwise: true"
        )
        ctx.problems.add(
            line, field, "pairwise judging compares the arms of compare:, and the eval has none", fix
        )
