"""Importing user code: ``*.eval.py`` files and ``module:function`` checks named in YAML eval files.

User modules are found relative to the eval file (its folder and its parents up to the evals folder's
parent, so ``evals.checks:has_readme`` works from a repository root). Those folders are on ``sys.path``
only while importing, so loading evals never changes what the rest of the process imports.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import sys
import traceback
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType

from ..assertions import EVAL_MODULE_PREFIX
from ._problems import display_path

__all__ = ["EvalImportError", "import_eval_file", "resolve_check", "search_dirs"]

_TOP_LEVEL_FROM: dict[str, Path] = {}
"""Top-level user modules this process imported for checks, and the folder each came from."""


class EvalImportError(Exception):
    """Running a ``*.eval.py`` file failed; ``line`` is where, in that file."""

    def __init__(self, line: int, message: str) -> None:
        super().__init__(message)
        self.line = line


def search_dirs(eval_file: Path, evals_root: Path) -> list[Path]:
    """The eval file's folder, then each parent up to and including the evals folder's parent."""
    folders = [eval_file.parent]
    stop = evals_root.parent
    for parent in eval_file.parent.parents:
        if folders[-1] == stop or not folders[-1].is_relative_to(stop):
            break
        folders.append(parent)
    return folders


@contextmanager
def _on_sys_path(folders: Sequence[Path]) -> Iterator[None]:
    added = [str(folder) for folder in folders if str(folder) not in sys.path]
    sys.path[:0] = added
    importlib.invalidate_caches()
    try:
        yield
    finally:
        for entry in added:
            sys.path.remove(entry)


def _provides(folder: Path, top: str) -> bool:
    return (folder / top).is_dir() or (folder / f"{top}.py").is_file()


def _forget(top: str) -> None:
    """Drop a user module imported earlier from another folder, so the nearer one is imported now."""
    for name in [name for name in sys.modules if name == top or name.startswith(top + ".")]:
        del sys.modules[name]


def resolve_check(reference: str, folders: Sequence[Path]) -> Callable[..., object]:
    """Import ``module:function`` (``function`` may be dotted, e.g. ``Checks.readme``) from ``folders``.

    Raises:
        ValueError: the reference is malformed, the module cannot be imported, or the name is missing or
            not callable; the message says which.
    """
    module_name, colon, attribute = reference.partition(":")
    if not colon or not module_name or not attribute:
        raise ValueError(f"{reference!r} is not of the form module:function")
    top = module_name.split(".")[0]
    home = next((folder for folder in folders if _provides(folder, top)), None)
    if home is not None and _TOP_LEVEL_FROM.get(top, home) != home:
        _forget(top)
    try:
        with _on_sys_path([home] if home is not None else []):
            module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        where = ", ".join(display_path(folder) for folder in folders)
        raise ValueError(f"cannot import {module_name!r} ({exc}); looked in {where}") from exc
    except Exception as exc:
        raise ValueError(f"importing {module_name!r} failed: {type(exc).__name__}: {exc}") from exc
    if home is not None:
        _TOP_LEVEL_FROM[top] = home
    target: object = module
    for part in attribute.split("."):
        if not hasattr(target, part):
            raise ValueError(f"{module_name} has no {attribute!r}")
        target = getattr(target, part)
    if not callable(target):
        raise ValueError(f"{reference} is a {type(target).__name__}, not a function")
    return target


def import_eval_file(path: Path, folders: Sequence[Path]) -> ModuleType:
    """Run a ``*.eval.py`` file as a fresh module with a name unique to its path.

    Compiled from its source every time, never through a bytecode cache: a cache trusts the file's size
    and modification second, so an edit made within the same second (a script or an optimisation loop
    rewriting a description) could run the old code, and it would write ``__pycache__`` into the
    user's evals folder.

    Raises:
        EvalImportError: the file does not compile or raises while running, with the line in that file.
    """
    name = EVAL_MODULE_PREFIX + hashlib.sha256(str(path).encode()).hexdigest()[:16]
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None:
        raise EvalImportError(1, "cannot be imported as a Python file")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        code = compile(path.read_bytes(), str(path), "exec", dont_inherit=True)
        with _on_sys_path(folders):
            exec(code, module.__dict__)  # the user's own eval file, as importing it would run it
    except SyntaxError as exc:
        del sys.modules[name]
        raise EvalImportError(exc.lineno or 1, f"SyntaxError: {exc.msg}") from exc
    except Exception as exc:
        del sys.modules[name]
        frames = [f for f in traceback.extract_tb(exc.__traceback__) if Path(f.filename) == path]
        line = (frames[-1].lineno or 1) if frames else 1
        raise EvalImportError(line, f"{type(exc).__name__}: {exc}") from exc
    return module
