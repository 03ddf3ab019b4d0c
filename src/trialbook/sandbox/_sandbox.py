"""One trial's throw-away folder: a fresh template copy, an isolated HOME, the PATH shims and the call log.

Layout of ``<trial>/`` (a new ``trialbook-<pid>_<start>-*`` temp folder per trial, named after its owner
so a later run can sweep it once that process is gone)::

    work/         the template copy (reflinked where the filesystem can, see ``_copy``), the workdir
    home/         HOME, empty as a new account's: the XDG variables name folders inside it, which the
                  tools that use them make (as they do on a new account)
    tmp/          TMPDIR
    shims/        one executable per shimmed binary, outside work/ so the agent's files never mix with them
    calls.jsonl   one JSON line per shimmed call, appended by the shims
    real/         under isolation only: read-only views of the folders holding passthrough shims' real
                  binaries, which the shims cover at their own paths (see ``_covers``)

Without shims, ``shims/`` and ``calls.jsonl`` are not made (``PATH`` still names the folder first, and
the log reads as empty). Every trial gets new folders: a folder another trial used is never handed on.
"""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import TracebackType

from .._util.owner import temp_prefix
from ..errors import ConfigError
from ..evidence import AgentResult, Call
from ._calllog import CallLog, read_call_log
from ._capture import OutputCapture
from ._copy import CopyMethod, copy_tree
from ._covers import ShimCover, real_routes, shim_cover
from ._empty import remove_entry
from ._env import build_env
from ._exclude import TemplateFilter
from ._finished import SandboxTrial
from ._host import runner_path
from ._shims import ShimConfig, write_shim
from ._special import SpecialFileError

__all__ = ["Sandbox", "create_sandbox", "real_parent", "remove_tree"]


class Sandbox:
    """A trial's folder and environment. Close it (or use ``with``) to remove it."""

    def __init__(self, path: Path, env: dict[str, str]) -> None:
        self.path = path
        self.workdir = path / "work"
        self.home = path / "home"
        self.tmp = path / "tmp"
        self.shim_dir = path / "shims"
        self.call_log = path / "calls.jsonl"
        self.env = env
        self.call_log_problems: tuple[str, ...] = ()
        self.copy: CopyMethod | None = None
        """How the template came in: ``reflink`` (every file cloned), ``copy``, ``None`` without one."""
        self.covers: tuple[ShimCover, ...] = ()
        """What each shim covers under isolation (see ``_covers``)."""
        self._closed = False

    def read_call_log(self) -> CallLog:
        """The calls logged so far with any unreadable lines reported, not raised."""
        log = read_call_log(self.call_log)
        self.call_log_problems = log.problems
        return log

    def read_calls(self) -> list[Call]:
        """The calls logged so far, in the order they started; see ``call_log_problems`` for bad lines."""
        return list(self.read_call_log().calls)

    def finished(
        self, result: AgentResult, capture: OutputCapture | None = None, *, log: CallLog | None = None
    ) -> SandboxTrial:
        """The trial as assertions see it once the agent stopped, with the call log read now.

        ``capture`` bounds, masks and records the output of the commands checks run. ``log`` is the
        call log when the caller read it already (its problems become :attr:`call_log_problems`).
        """
        if log is None:
            log = self.read_call_log()
        else:
            self.call_log_problems = log.problems
        return SandboxTrial(
            workdir=self.workdir,
            env=self.env,
            result=result,
            calls=log.calls,
            call_log_problems=log.problems,
            capture=capture,
        )

    def close(self, keep: bool = False) -> Path | None:
        """Remove the trial folder, or with ``keep`` leave it and return its path. Safe to call twice."""
        if keep:
            self._closed = True
            return self.path
        if not self._closed:
            self._remove()
            self._closed = True
        return None

    def _remove(self) -> None:
        # Most trials leave HOME and TMPDIR empty: one rmdir each (it fails on anything else, a link
        # included, and then the whole tree goes the careful way) instead of a walk of each. Not when
        # the trial folder itself is a link now: each rmdir would follow it to an empty folder elsewhere.
        try:
            real = stat.S_ISDIR(os.lstat(self.path).st_mode)
        except OSError:
            real = False
        for folder in (self.home, self.tmp, self.shim_dir) if real else ():
            try:
                os.rmdir(folder)
            except FileNotFoundError:
                continue
            except OSError:
                break
        remove_tree(self.path)

    def __enter__(self) -> Sandbox:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if not self._closed:
            self.close()


def _make_writable(root: Path) -> None:
    # Tools such as Go's module cache leave read-only folders behind; rmtree cannot empty those.
    pending = [root]
    while pending:
        folder = pending.pop()
        try:
            mode = os.lstat(folder).st_mode
            if not stat.S_ISDIR(mode):
                continue
            os.chmod(folder, stat.S_IMODE(mode) | stat.S_IRWXU)
            entries = list(os.scandir(folder))
        except OSError:
            continue
        pending.extend(Path(entry.path) for entry in entries if entry.is_dir(follow_symlinks=False))


def _remove_quickly(path: Path) -> None:
    """Remove the tree at ``path`` with one descriptor and one listing per folder, no ``stat`` per entry.

    ``shutil.rmtree`` checks each folder three more times than this; a trial folder is a handful of
    files and folders, removed for every trial.
    """
    remove_entry(None, str(path), is_folder=True)


def remove_tree(path: Path) -> None:
    """Remove ``path`` and everything in it, read-only folders and files included; gone already is fine.

    Links are removed, never followed, and nesting of any depth is removed. The quick way gives up at
    the first error (a read-only folder, a link swapped in for a folder); then every folder is opened
    up and the quick way tries once more, and ``shutil.rmtree`` removes what is left, or raises.
    """
    for opened_up in (False, True):
        if opened_up:
            _make_writable(path)
        try:
            _remove_quickly(path)
            return
        except FileNotFoundError:
            if not os.path.lexists(path):
                return
        except OSError:
            pass
    if os.path.islink(path):  # a link in the folder's place: it goes, what it names stays
        os.unlink(path)
        return
    try:
        shutil.rmtree(path)
    except FileNotFoundError:
        if os.path.lexists(path):
            raise


def _copy_template(template: Path, workdir: Path, keep: TemplateFilter) -> CopyMethod:
    if not template.is_dir():
        raise ConfigError(f"{template}: sandbox template must be an existing folder")
    # A real copy (reflinks are copy-on-write), not hard links: the agent edits these files and other
    # trials must not see it.
    try:
        # The copy never enters a folder it left out, so an entry's own pattern is all that decides.
        return copy_tree(
            template, workdir, lambda relative, is_dir: not keep.excluded(relative, is_dir=is_dir)
        )
    except SpecialFileError as exc:
        raise ConfigError(str(exc)) from None


def real_parent(root: Path | None) -> Path:
    """The real folder trial folders are made in: ``root``, or the system temp folder when ``None``.

    The folder made inside the real parent is real itself: resolving the parent costs an lstat per
    component of the parent, resolving the folder one more and a stat.
    """
    return Path(os.path.realpath(tempfile.gettempdir() if root is None else root))


def create_sandbox(
    *,
    root: Path | None,
    template: Path | None,
    shims: Sequence[ShimConfig],
    secrets: Mapping[str, str],
    extra_env: Mapping[str, str],
    base_path: str | None = None,
    exclude: Sequence[str] = (),
) -> Sandbox:
    """Make a fresh trial folder under ``root`` (the system temp folder when ``None``).

    ``base_path`` is the ``PATH`` that follows the shim folder and that passthrough shims search
    (the runner's ``PATH`` without trialbook's own virtualenv when ``None``; see ``_host``). The
    template is copied without ``.git``, ``.trialbook`` and the ``exclude`` globs (see ``_exclude``).
    """
    names = [shim.name for shim in shims]
    duplicates = sorted({name for name in names if names.count(name) > 1})
    if duplicates:
        raise ValueError(f"each binary can be shimmed once; repeated: {', '.join(duplicates)}")
    if root is not None:
        root.mkdir(parents=True, exist_ok=True)
    path = Path(tempfile.mkdtemp(prefix=temp_prefix(), dir=real_parent(root)))
    sandbox: Sandbox | None = None
    try:
        original_path = runner_path() if base_path is None else base_path
        env = build_env(
            home=path / "home",
            tmp=path / "tmp",
            shim_dir=path / "shims",
            base_path=original_path,
            secrets=secrets,
            extra_env=extra_env,
        )
        sandbox = Sandbox(path, env)
        # The template copy brings a work folder of its own.
        for name in ("home", "tmp") if template is not None else ("work", "home", "tmp"):
            os.mkdir(path / name)
        if template is not None:
            sandbox.copy = _copy_template(template, sandbox.workdir, TemplateFilter.of(exclude))
        if shims:
            os.mkdir(sandbox.shim_dir)
            sandbox.call_log.touch()
        covers = []
        for shim in shims:
            cover = shim_cover(
                sandbox.shim_dir / shim.name, original_path, passthrough=shim.mode == "passthrough"
            )
            covers.append(cover)
            write_shim(
                shim,
                shim_dir=sandbox.shim_dir,
                call_log=sandbox.call_log,
                original_path=original_path,
                covered_real=real_routes(cover, path),
            )
        sandbox.covers = tuple(covers)
    except BaseException:
        remove_tree(path)
        raise
    return sandbox
