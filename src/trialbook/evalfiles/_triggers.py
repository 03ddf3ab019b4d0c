"""``triggers:``: a query set that tells whether the agent picks a skill up when it should, and only then.

A trigger eval names one declared skill and labelled queries::

    skills: [../.claude/skills/deploy]
    triggers:
      skill: deploy
      min_recall: 0.8
      min_precision: 0.9
      queries:                                   # or a file: queries: deploy-queries.yaml (or .jsonl)
        - {query: "Ship this to staging", expect: should}
        - {query: "Run the unit tests", expect: should_not, split: holdout}

Each query becomes an ordinary eval of its own (``<eval id>/<query id>``): its own sandbox, trials,
cache key and history line, so adding a query runs only that query. Its check is whether the agent used
the skill; the scores over all queries decide the trigger eval (see ``trialbook.triggers``).
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from ._context import Context
from ._fields import ID_PATTERN
from ._nodes import Node, from_yaml
from ._problems import Problems, display_path

if TYPE_CHECKING:
    from ._model import EvalSpec

__all__ = [
    "MAX_QUERIES",
    "MAX_QUERY_BYTES",
    "TriggerOf",
    "TriggerQuery",
    "TriggerSpec",
    "expand_triggers",
    "read_triggers",
]

MAX_QUERIES = 500
"""Queries in one trigger eval; each runs its trials, so a set past this is a budget mistake."""

MAX_QUERY_BYTES = 16 * 1024
"""One query's text; a query is a user's request, not a document."""

MAX_QUERY_FILE_BYTES = 4 * 1024 * 1024
"""A shared query file (YAML or JSONL)."""

_EXAMPLE = "triggers: {skill: deploy, queries: [{query: 'Ship it to staging', expect: should}]}"
_QUERY_EXAMPLE = "- {query: 'Ship it to staging', expect: should}"
_EXPECT = ("should", "should_not")
_SPLITS = ("train", "holdout")


@dataclass(frozen=True)
class TriggerQuery:
    """One labelled query: its id (stable across edits of other queries), text, label and split."""

    id: str
    text: str
    expect: str
    split: str | None = None


@dataclass(frozen=True)
class TriggerSpec:
    """The ``triggers:`` of an eval file, checked: the skill, the queries and the thresholds."""

    skill: str
    queries: tuple[TriggerQuery, ...]
    min_recall: float | None = None
    min_precision: float | None = None


@dataclass(frozen=True)
class TriggerOf:
    """What a query's eval keeps of its trigger eval: enough to score every query together later."""

    group: str
    """The trigger eval's id; every query eval's id is ``<group>/<query id>``."""
    skill: str
    query_id: str
    expect: str
    split: str | None
    min_recall: float | None
    min_precision: float | None


def _query_id(text: str) -> str:
    """An id from the query's text, so adding, removing or reordering other queries never changes it."""
    return "q-" + hashlib.sha256(text.encode("utf-8")).hexdigest()[:10]


def _threshold(node: Node, field: str, ctx: Context) -> float | None:
    value = ctx.read.number(node, field, f"{field.replace('triggers.', '')}: 0.8")
    if value is not None and not 0 <= value <= 1:
        ctx.problems.add(node.line, field, f"{value:g} is out of range", "give a share from 0 to 1, e.g. 0.8")
        return None
    return value


def _query(item: Node, field: str, ctx: Context) -> TriggerQuery | None:
    entries = ctx.read.mapping(item, field, _QUERY_EXAMPLE)
    if entries is None:
        return None
    ctx.read.only_keys(entries, field, ("query", "expect", "id", "split"))
    for key in ("query", "expect"):
        if key not in entries:
            ctx.problems.add(item.line, f"{field}.{key}", "is missing", f"write e.g. {_QUERY_EXAMPLE}")
    if "query" not in entries or "expect" not in entries:
        return None
    text = ctx.read.string(entries["query"], f"{field}.query", _QUERY_EXAMPLE)
    expect = ctx.read.string(entries["expect"], f"{field}.expect", _QUERY_EXAMPLE)
    ok = text is not None and expect is not None
    if text is not None and (not text.strip() or len(text.encode("utf-8")) > MAX_QUERY_BYTES):
        size = "is empty" if not text.strip() else f"is over {MAX_QUERY_BYTES:,} bytes"
        ctx.problems.add(entries["query"].line, f"{field}.query", f"the query {size}", "write the request")
        ok = False
    if text is not None and "{{" in text:
        fix = "queries are asked as written, without placeholders; write the value itself"
        ctx.problems.add(entries["query"].line, f"{field}.query", "holds a {{ placeholder", fix)
        ok = False
    if expect is not None and expect not in _EXPECT:
        ctx.problems.add(
            entries["expect"].line, f"{field}.expect", f"{expect!r} is no label", "write should or should_not"
        )
        ok = False
    split = None
    if "split" in entries:
        split = ctx.read.string(entries["split"], f"{field}.split", "split: holdout")
        if split is not None and split not in _SPLITS:
            ctx.problems.add(
                entries["split"].line, f"{field}.split", f"{split!r} is no split", "write train or holdout"
            )
            ok = False
    query_id = None
    if "id" in entries:
        query_id = ctx.read.string(entries["id"], f"{field}.id", "id: deploy-staging")
        if query_id is not None and not re.fullmatch(r"[A-Za-z0-9_][A-Za-z0-9._-]*", query_id):
            fix = "use letters, digits, '.', '_' and '-'"
            ctx.problems.add(entries["id"].line, f"{field}.id", f"{query_id!r} is not a valid id", fix)
            ok = False
    if not ok or text is None or expect is None:
        return None
    return TriggerQuery(query_id or _query_id(text), text, expect, split)


def _query_file(node: Node, written: str, ctx: Context) -> Node | None:
    """The query file's queries as nodes (problems reported against that file), or ``None``."""
    path = Path(ctx.folder, written).resolve()
    fix = f"looked for {display_path(path)}; paths are relative to the eval file"
    try:
        if not path.is_file():
            ctx.problems.add(node.line, "triggers.queries", f"the query file {written} does not exist", fix)
            return None
        if path.stat().st_size > MAX_QUERY_FILE_BYTES:
            limit = f"keep it under {MAX_QUERY_FILE_BYTES:,} bytes"
            ctx.problems.add(node.line, "triggers.queries", f"the query file {written} is too large", limit)
            return None
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        reason = f"cannot be read ({type(exc).__name__})"
        ctx.problems.add(node.line, "triggers.queries", f"the query file {written} {reason}", fix)
        return None
    if path.suffix == ".jsonl":
        # One JSON object a line is a YAML flow mapping, so the lines become a YAML list line for line
        # and every problem keeps the line number the author sees.
        text = "\n".join(f"- {line}" if line.strip() else "" for line in text.splitlines())
    problems = Problems(path)
    root = from_yaml(text, problems) if text.strip() else Node([], 1, 1)
    ctx.problems.extend(problems)
    return root


def _queries(node: Node, field: str, ctx: Context) -> tuple[TriggerQuery, ...] | None:
    """The queries of a list (in the eval file or a query file); ``None`` when any is wrong."""
    items = ctx.read.sequence(node, field, _QUERY_EXAMPLE)
    if items is None:
        return None
    if not items:
        ctx.problems.add(node.line, field, "holds no query", f"write e.g. {_QUERY_EXAMPLE}")
        return None
    if len(items) > MAX_QUERIES:
        fix = f"keep at most {MAX_QUERIES}; split the set into several trigger evals"
        ctx.problems.add(node.line, field, f"holds {len(items):,} queries", fix)
        return None
    queries = [_query(item, f"{field}[{index}]", ctx) for index, item in enumerate(items)]
    seen: dict[str, int] = {}
    for index, query in enumerate(queries):
        if query is None:
            continue
        if query.id in seen:
            what = "the same text as" if query.id.startswith("q-") else "the same id as"
            fix = "remove the repeat, or give each its own id"
            ctx.problems.add(items[index].line, f"{field}[{index}]", f"{what} {field}[{seen[query.id]}]", fix)
            return None
        seen[query.id] = index
    found = tuple(query for query in queries if query is not None)
    return found if len(found) == len(queries) else None


def _read_queries(node: Node, ctx: Context) -> tuple[TriggerQuery, ...] | None:
    if not isinstance(node.value, str):
        return _queries(node, "triggers.queries", ctx)
    loaded = _query_file(node, node.value, ctx)
    if loaded is None:
        return None
    source = Path(ctx.folder, node.value).resolve()
    in_file = Context(source, ctx.evals_root, Problems(source), ctx.known_agents)
    try:
        return _queries(loaded, "queries", in_file)
    finally:
        ctx.problems.extend(in_file.problems)


def read_triggers(node: Node, ctx: Context) -> TriggerSpec | None:
    """The ``triggers`` key; ``None`` (every problem recorded) when anything in it is wrong."""
    entries = ctx.read.mapping(node, "triggers", _EXAMPLE)
    if entries is None:
        return None
    ctx.read.only_keys(entries, "triggers", ("skill", "queries", "min_recall", "min_precision"))
    for key in ("skill", "queries"):
        if key not in entries:
            ctx.problems.add(node.line, f"triggers.{key}", "is missing", f"write e.g. {_EXAMPLE}")
    if "skill" not in entries or "queries" not in entries:
        return None
    skill = ctx.read.string(entries["skill"], "triggers.skill", "skill: deploy")
    thresholds: dict[str, float | None] = {}
    for key in ("min_recall", "min_precision"):
        if key in entries:
            value = _threshold(entries[key], f"triggers.{key}", ctx)
            if value is None:
                return None
            thresholds[key] = value
    queries = _read_queries(entries["queries"], ctx)
    if skill is None or queries is None:
        return None
    return TriggerSpec(skill, queries, thresholds.get("min_recall"), thresholds.get("min_precision"))


def expand_triggers(spec: EvalSpec) -> list[EvalSpec]:
    """The eval itself, or for a trigger eval one eval per query, each checking that one query."""
    triggers = spec.triggers
    if triggers is None:
        return [spec]
    from ..assertions import Triggered  # only trigger evals need the check's class

    expanded = []
    for query in triggers.queries:
        of = TriggerOf(
            spec.id, triggers.skill, query.id, query.expect, query.split,
            triggers.min_recall, triggers.min_precision,
        )  # fmt: skip
        assert re.fullmatch(ID_PATTERN, f"{spec.id}/{query.id}")
        expanded.append(
            replace(
                spec,
                id=f"{spec.id}/{query.id}",
                prompt_template=query.text,
                prompt_path=None,
                triggers=None,
                trigger=of,
                negative_control=False,
                assertions=(Triggered(triggers.skill, query.expect == "should"),),
            )
        )
    return expanded
