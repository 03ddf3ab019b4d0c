"""Loading eval files: every problem of every file is collected and raised together."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from pathlib import Path

from ..errors import ConfigError
from ._context import Context
from ._discover import Found, discover, duplicate_ids
from ._model import EvalSpec
from ._nodes import from_python, from_yaml
from ._problems import Problems
from ._read import read_eval
from ._triggers import expand_triggers

__all__ = ["load_eval_file", "load_evals"]


def load_evals(paths: Sequence[Path], *, known_agents: Collection[str]) -> list[EvalSpec]:
    """Discover and load the evals under ``paths``, in path order.

    Raises:
        ConfigError: anything is wrong in any file; ``problems`` lists every problem of every file, each
            as ``file:line: field: what is wrong (how to fix)``.
    """
    found, problems = discover(paths)
    specs: list[EvalSpec] = []
    for entry in found:
        loaded, file_problems = load_eval_file(entry, known_agents=known_agents)
        specs.extend(loaded)
        problems.extend(file_problems)
    problems += duplicate_ids([(spec.id, spec.source, spec.line_of("id")) for spec in specs])
    if problems:
        raise ConfigError(problems)
    return specs


def load_eval_file(entry: Found, *, known_agents: Collection[str]) -> tuple[list[EvalSpec], list[str]]:
    """The evals one file defines, and its problems (the evals are only complete when there are none)."""
    problems = Problems(entry.path)
    if entry.path.suffix == ".py":
        return _load_python(entry, problems, known_agents), problems.items
    try:
        text = entry.path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        problems.add(1, "<file>", f"cannot be read ({type(exc).__name__}: {exc})", "save it as UTF-8 text")
        return [], problems.items
    root = from_yaml(text, problems)
    if root is None:
        return [], problems.items
    spec = read_eval(root, _context(entry, problems, known_agents), entry.id)
    return (expand_triggers(spec) if spec is not None else []), problems.items


def _context(entry: Found, problems: Problems, known_agents: Collection[str]) -> Context:
    return Context(source=entry.path, evals_root=entry.root, problems=problems, known_agents=known_agents)


def _load_python(entry: Found, problems: Problems, known_agents: Collection[str]) -> list[EvalSpec]:
    # Imported here: importing the user's modules is only for Python eval files, not every run.
    from ._imports import EvalImportError, import_eval_file, search_dirs
    from ._python import collect_definitions, loading

    try:
        with loading(entry.path):
            module = import_eval_file(entry.path, search_dirs(entry.path, entry.root))
    except EvalImportError as exc:
        problems.add(
            exc.line, "<file>", f"running the file failed: {exc}", f"run python {problems.path} to see why"
        )
        return []
    definitions = collect_definitions(module)
    if not definitions:
        fix = (
            "assign define_eval(...) to a module-level name, e.g. EVAL = define_eval(prompt=..., agents=...)"
        )
        problems.add(1, "<file>", "the file defines no eval", fix)
        return []
    specs: list[EvalSpec] = []
    for definition in definitions:
        own = problems if definition.file in (None, entry.path) else Problems(definition.file or entry.path)
        if len(definitions) > 1 and "id" not in definition.fields:
            fix = "pass id='...' to each define_eval in this file"
            own.add(
                definition.line, "id", f"this file defines {len(definitions)} evals, so each needs an id", fix
            )
            continue
        spec = read_eval(
            from_python(definition.fields, definition.line), _context(entry, own, known_agents), entry.id
        )
        if own is not problems:
            problems.extend(own)
        if spec is not None:
            specs.extend(expand_triggers(spec))
    return specs
