"""What a sandbox takes from the machine running trialbook: its ``PATH``, less trialbook's own Python.

Under ``uv run trialbook``, ``pipx`` or an activated virtualenv, the folder of the virtualenv running
trialbook comes first on ``PATH``. Handed on as it is, ``python3`` in a trial would be trialbook's
interpreter, with trialbook's packages importable and no ``pip`` — a guide would pass or fail for reasons
a reader's machine does not have. So that folder is dropped; the rest of ``PATH`` stays in order.

Only a virtualenv's own folder is dropped. When trialbook runs from a system Python (no virtualenv), that
interpreter's folder (``/usr/bin``) is the machine's and stays.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Mapping

__all__ = ["own_python_dirs", "runner_path"]


def _same(one: str, other: str) -> bool:
    try:
        return os.path.samefile(one, other)
    except OSError:
        return os.path.realpath(one) == os.path.realpath(other)


def own_python_dirs(
    *,
    prefix: str | None = None,
    base_prefix: str | None = None,
    executable: str | None = None,
    environ: Mapping[str, str] | None = None,
) -> list[str]:
    """The scripts folders of the virtualenv running trialbook; empty outside a virtualenv.

    Arguments default to this process (``sys.prefix``, ``sys.base_prefix``, ``sys.executable`` and the
    environment) and exist so tests can describe other layouts.
    """
    prefix = sys.prefix if prefix is None else prefix
    base_prefix = sys.base_prefix if base_prefix is None else base_prefix
    executable = sys.executable if executable is None else executable
    environ = os.environ if environ is None else environ
    if _same(prefix, base_prefix):
        return []
    folders = [os.path.join(prefix, "bin"), os.path.join(prefix, "Scripts")]
    if executable:
        here = os.path.dirname(os.path.abspath(executable))
        if os.path.realpath(here).startswith(os.path.realpath(prefix) + os.sep):
            folders.append(here)
    venv = environ.get("VIRTUAL_ENV")
    if venv and _same(venv, prefix):
        folders.append(os.path.join(venv, "bin"))
    return folders


def _without(path: str, dropped: Iterable[str]) -> str:
    gone = [os.path.realpath(folder) for folder in dropped]
    kept = [entry for entry in path.split(os.pathsep) if entry and os.path.realpath(entry) not in gone]
    return os.pathsep.join(kept)


_REMEMBERED: dict[tuple[str, ...], str] = {}


def runner_path(path: str | None = None, *, dropped: Iterable[str] | None = None) -> str:
    """``path`` (the runner's ``PATH`` by default) without the folders of trialbook's own virtualenv.

    Every sandbox asks for it, and the answer resolves each ``PATH`` entry (a dozen ``lstat`` calls per
    entry), so it is worked out once per ``PATH`` and interpreter and remembered for the process.
    """
    path = os.environ.get("PATH", os.defpath) if path is None else path
    if dropped is not None:
        return _without(path, dropped)
    key = (path, sys.prefix, sys.base_prefix, sys.executable, os.environ.get("VIRTUAL_ENV", ""))
    found = _REMEMBERED.get(key)
    if found is None:
        if len(_REMEMBERED) > 32:
            _REMEMBERED.clear()
        found = _REMEMBERED[key] = _without(path, own_python_dirs())
    return found
