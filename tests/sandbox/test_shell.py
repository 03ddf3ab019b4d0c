"""Reused trial folders: handed on empty under a new name, and never when an agent changed them.

A finished trial's folders go back to the run's :class:`SandboxRemover`, which empties them and keeps
them for the next trial only when nothing tells them from fresh ones (see ``trialbook.sandbox._shell``).
These tests tamper with a finished trial's folders the ways an agent could, and check that such a
folder is removed instead, that nothing outside it is touched, and that a killed run's kept folders
are swept.
"""

from __future__ import annotations

import errno
import fcntl
import os
import shutil
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from trialbook.sandbox import Sandbox, create_sandbox
from trialbook.sandbox._remover import SandboxRemover
from trialbook.sandbox._shell import Shell
from trialbook.sandbox._shims import ShimConfig
from trialbook.sandbox.leftovers import sweep

_SET_FLAGS = 0x40086602  # FS_IOC_SETFLAGS
_NOATIME = 0x00000080  # chattr +A


def _box(root: Path, *, reusable: bool = True) -> Sandbox:
    return create_sandbox(root=root, template=None, shims=(), secrets={}, extra_env={}, reusable=reusable)


def _settled(remover: SandboxRemover, root: Path) -> None:
    """Wait until the remover (one worker, in order) has dealt with everything queued so far."""
    sentinel = _box(root, reusable=False)  # removed, never kept: done once its folder is gone
    remover.remove(sentinel)
    deadline = time.monotonic() + 10
    while sentinel.path.exists():
        assert time.monotonic() < deadline, "the remover did not get to the sentinel"
        time.sleep(0.005)


def _taken(remover: SandboxRemover, root: Path) -> Shell | None:
    """What the remover hands on once it has dealt with everything queued so far (one worker, in order)."""
    _settled(remover, root)
    return remover.take(root)


def _outside(tmp_path: Path) -> Path:
    """A folder of the user's beside the trials, which nothing of a reset may touch."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "precious.txt").write_text("not the trial's")
    return outside


def _use(box: Sandbox) -> None:
    (box.workdir / "a" / "b").mkdir(parents=True)
    (box.workdir / "a" / "b" / "f.txt").write_text("work")
    (box.home / ".cache" / "tool").mkdir(parents=True)
    (box.home / ".gitconfig").write_text("[user]\n")
    (box.tmp / "scratch").write_text("tmp")
    (box.path / "left.txt").write_text("in the trial folder itself")


def test_a_finished_trials_folders_come_back_empty_under_a_new_name(tmp_path: Path) -> None:
    root = tmp_path / "trials"
    remover = SandboxRemover(limit=4, workers=1, keep=4)
    first = _box(root)
    inodes = {name: os.stat(first.path / name).st_ino for name in ("work", "home", "tmp")}
    _use(first)
    os.mkfifo(first.home / "pipe")
    old = first.path
    remover.remove(first)
    shell = _taken(remover, root)
    assert shell is not None, "the folders were removed, not kept"
    second = create_sandbox(
        root=root, template=None, shims=(), secrets={}, extra_env={}, shell=shell, reusable=True
    )
    # The same folders (nothing made or removed), emptied, under a name no trial had.
    assert {name: os.stat(second.path / name).st_ino for name in ("work", "home", "tmp")} == inodes
    assert second.path != old and not old.exists()
    assert sorted(p.name for p in second.path.iterdir()) == ["home", "tmp", "work"]
    for folder in (second.workdir, second.home, second.tmp):
        assert list(folder.iterdir()) == []
    assert second.env["HOME"] == str(second.home) and second.env["TMPDIR"] == str(second.tmp)
    remover.remove(second)
    assert remover.close() == []
    assert list(root.iterdir()) == []  # kept folders go when the run ends


def test_without_keep_every_folder_is_removed(tmp_path: Path) -> None:
    root = tmp_path / "trials"
    remover = SandboxRemover(limit=4, workers=1)
    box = _box(root)
    remover.remove(box)
    assert _taken(remover, root) is None
    assert not remover.keeps
    assert remover.close() == [] and list(root.iterdir()) == []


@pytest.mark.parametrize(("wanted", "kept"), [(1, 0), (2, 1), (None, 1)])
def test_a_folder_no_trial_will_ask_for_is_removed_not_kept(
    tmp_path: Path, wanted: int | None, kept: int
) -> None:
    root = tmp_path / "trials"
    remover = SandboxRemover(limit=4, workers=1, keep=4, wanted=wanted)
    assert remover.take(root) is None  # the first trial asks; nothing is kept yet
    box = _box(root)
    _use(box)
    remover.remove(box)
    _settled(remover, root)
    # Kept only while a trial may still ask (wanted 2, or unknown); with none left it is removed.
    assert len(list(root.iterdir())) == kept
    assert not box.path.exists()
    assert remover.close() == [] and list(root.iterdir()) == []


def _chmod_home(box: Sandbox, outside: Path) -> None:
    box.home.chmod(0o777)


def _xattr_on_tmp(box: Sandbox, outside: Path) -> None:
    os.setxattr(box.tmp, "user.trialbook-test", b"left by the agent")


def _acl_on_work(box: Sandbox, outside: Path) -> None:
    # A default ACL (what ``setfacl -d -m u::rwx,g::---,o::--- work`` stores): later files' modes follow it.
    entries = [(1, 7, 0xFFFFFFFF), (4, 0, 0xFFFFFFFF), (0x20, 0, 0xFFFFFFFF)]  # user::, group::, other::
    value = (2).to_bytes(4, "little") + b"".join(
        tag.to_bytes(2, "little") + perm.to_bytes(2, "little") + ident.to_bytes(4, "little")
        for tag, perm, ident in entries
    )
    os.setxattr(box.workdir, "system.posix_acl_default", value)


def _work_swapped_for_a_link(box: Sandbox, outside: Path) -> None:
    shutil.rmtree(box.workdir)
    os.symlink(outside, box.workdir)


def _tmp_replaced(box: Sandbox, outside: Path) -> None:
    shutil.rmtree(box.tmp)
    os.mkdir(box.tmp, 0o700)


def _home_gone(box: Sandbox, outside: Path) -> None:
    shutil.rmtree(box.home)


def _home_a_file(box: Sandbox, outside: Path) -> None:
    shutil.rmtree(box.home)
    box.home.write_text("not a folder")


def _trial_folder_opened_up(box: Sandbox, outside: Path) -> None:
    box.path.chmod(0o755)  # mkdtemp makes it 700


def _noatime_flag(box: Sandbox, outside: Path) -> None:
    folder = os.open(box.home, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.ioctl(folder, _SET_FLAGS, _NOATIME.to_bytes(8, "little"))
    except OSError as exc:
        if exc.errno in (errno.ENOTTY, errno.EOPNOTSUPP, errno.EINVAL):
            pytest.skip(f"{box.home}: this file system keeps no chattr flags ({exc.strerror})")
        raise
    finally:
        os.close(folder)


TAMPERS: dict[str, Callable[[Sandbox, Path], None]] = {
    "home chmod 777": _chmod_home,
    "an extended attribute on tmp": _xattr_on_tmp,
    "a default ACL on work": _acl_on_work,
    "work swapped for a link outside": _work_swapped_for_a_link,
    "tmp replaced by a new folder": _tmp_replaced,
    "home removed": _home_gone,
    "home replaced by a file": _home_a_file,
    "the trial folder chmod 755": _trial_folder_opened_up,
    "chattr +A on home": _noatime_flag,
}


@pytest.mark.parametrize("tamper", list(TAMPERS), ids=list(TAMPERS))
def test_a_folder_the_agent_changed_is_removed_not_reused(tmp_path: Path, tamper: str) -> None:
    root = tmp_path / "trials"
    outside = _outside(tmp_path)
    remover = SandboxRemover(limit=4, workers=1, keep=4)
    box = _box(root)
    _use(box)
    TAMPERS[tamper](box, outside)
    remover.remove(box)
    assert _taken(remover, root) is None
    assert remover.close() == []
    assert list(root.iterdir()) == []
    assert (outside / "precious.txt").read_text() == "not the trial's"


def test_links_inside_are_removed_and_never_followed(tmp_path: Path) -> None:
    root = tmp_path / "trials"
    outside = _outside(tmp_path)
    remover = SandboxRemover(limit=4, workers=1, keep=4)
    box = _box(root)
    os.symlink(outside, box.workdir / "to-outside")
    os.symlink(outside, box.path / "shims")
    os.link(outside / "precious.txt", box.tmp / "hard-link")
    remover.remove(box)
    shell = _taken(remover, root)
    assert shell is not None
    assert sorted(p.name for p in shell.path.iterdir()) == ["home", "tmp", "work"]
    assert (outside / "precious.txt").read_text() == "not the trial's"
    assert remover.close() == []


def test_a_folder_grown_by_many_entries_is_not_reused_where_its_size_tells(tmp_path: Path) -> None:
    root = tmp_path / "trials"
    remover = SandboxRemover(limit=4, workers=1, keep=4)
    box = _box(root)
    fresh_size = os.stat(box.home).st_size
    for n in range(3000):
        (box.home / f"entry-with-a-long-name-{n:05}").touch()
    for n in range(3000):
        (box.home / f"entry-with-a-long-name-{n:05}").unlink()
    grown = os.stat(box.home).st_size != fresh_size  # ext4 keeps a folder's blocks; tmpfs does not
    remover.remove(box)
    shell = _taken(remover, root)
    if grown:
        assert shell is None
    else:
        assert shell is not None and os.stat(shell.path / "home").st_size == fresh_size
    assert remover.close() == []


def test_a_template_copy_is_never_kept(tmp_path: Path) -> None:
    root = tmp_path / "trials"
    template = tmp_path / "template"
    template.mkdir()
    (template / "README.md").write_text("hello")
    template.chmod(0o750)
    remover = SandboxRemover(limit=4, workers=1, keep=4)
    box = create_sandbox(root=root, template=template, shims=(), secrets={}, extra_env={}, reusable=True)
    remover.remove(box)
    shell = _taken(remover, root)
    assert shell is not None
    assert sorted(p.name for p in shell.path.iterdir()) == ["home", "tmp"]
    # A trial without a template gets a folder made for it; one with a template a fresh copy.
    plain = create_sandbox(
        root=root, template=None, shims=(), secrets={}, extra_env={}, shell=shell, reusable=True
    )
    assert list(plain.workdir.iterdir()) == []
    fresh = _box(root, reusable=False)
    assert plain.workdir.stat().st_mode == fresh.workdir.stat().st_mode  # made, not the template's
    fresh.close()
    remover.remove(plain)
    again = _taken(remover, root)
    assert again is not None
    copied = create_sandbox(
        root=root, template=template, shims=(), secrets={}, extra_env={}, shell=again, reusable=True
    )
    assert (copied.workdir / "README.md").read_text() == "hello"
    assert copied.workdir.stat().st_mode & 0o777 == 0o750
    remover.remove(copied)
    assert remover.close() == []
    assert list(root.iterdir()) == []


def test_a_killed_runs_kept_folders_are_swept(tmp_path: Path) -> None:
    root = tmp_path / "trials"
    root.mkdir()
    # A run that dies holding a kept folder, as after kill -9: nothing of it removes the folder.
    child = textwrap.dedent(
        f"""
        import os, sys, time
        from pathlib import Path
        from trialbook.sandbox import create_sandbox
        from trialbook.sandbox._remover import SandboxRemover
        root = Path({str(root)!r})
        remover = SandboxRemover(limit=2, workers=1, keep=2)
        box = create_sandbox(root=root, template=None, shims=(), secrets={{}}, extra_env={{}}, reusable=True)
        remover.remove(box)
        deadline = time.monotonic() + 10
        while (shell := remover.take(root)) is None and time.monotonic() < deadline:
            time.sleep(0.005)
        print(shell.path, flush=True)
        os._exit(0)
        """
    )
    done = subprocess.run([sys.executable, "-c", child], capture_output=True, text=True, check=True)
    kept = Path(done.stdout.strip())
    assert kept.parent == root and kept.is_dir()
    swept = sweep(temp_roots=[root])
    assert kept in swept.removed
    assert not kept.exists()


def _acl(*entries: tuple[int, int, int]) -> bytes:
    """A POSIX ACL as the kernel stores it in ``system.posix_acl_*``: (tag, permissions, id) entries."""
    return (2).to_bytes(4, "little") + b"".join(
        tag.to_bytes(2, "little") + perm.to_bytes(2, "little") + ident.to_bytes(4, "little")
        for tag, perm, ident in entries
    )


def _named_user_acl(uid: int) -> bytes:
    anyone = 0xFFFFFFFF
    # user::rwx, user:<uid>:rwx, group::r-x, mask::rwx, other::r-x
    return _acl((1, 7, anyone), (2, 7, uid), (4, 5, anyone), (0x10, 7, anyone), (0x20, 5, anyone))


def test_an_acl_changed_in_its_value_only_is_removed_not_reused(tmp_path: Path) -> None:
    # Where the sandbox root has a default ACL, every fresh folder inherits one: an agent that grants
    # another user the access the inherited ACL gave keeps the names and the mode, not the value.
    root = tmp_path / "trials"
    root.mkdir()
    try:
        os.setxattr(root, "system.posix_acl_default", _named_user_acl(1234))
    except OSError as exc:
        if exc.errno in (errno.ENOTSUP, errno.EOPNOTSUPP):
            pytest.skip(f"{root}: this file system keeps no ACLs")
        raise
    remover = SandboxRemover(limit=4, workers=1, keep=4)
    box = _box(root)
    fresh = os.getxattr(box.workdir, "system.posix_acl_access")
    os.setxattr(box.workdir, "system.posix_acl_access", _named_user_acl(4321))
    assert os.getxattr(box.workdir, "system.posix_acl_access") != fresh
    remover.remove(box)
    assert _taken(remover, root) is None
    assert remover.close() == []
    assert list(root.iterdir()) == []


def test_a_kept_folder_is_removed_when_the_sandbox_made_from_it_fails(tmp_path: Path) -> None:
    root = tmp_path / "trials"
    remover = SandboxRemover(limit=4, workers=1, keep=4)
    remover.remove(_box(root))
    shell = _taken(remover, root)
    assert shell is not None
    shim = ShimConfig("git", "stub")
    with pytest.raises(ValueError, match="shimmed once"):
        create_sandbox(
            root=root, template=None, shims=(shim, shim), secrets={}, extra_env={}, shell=shell, reusable=True
        )
    assert remover.close() == []
    assert list(root.iterdir()) == []


def test_a_trial_folder_swapped_for_a_link_leaves_what_it_points_to_alone(tmp_path: Path) -> None:
    root = tmp_path / "trials"
    outside = tmp_path / "outside"
    for name in ("home", "tmp", "shims"):
        (outside / name).mkdir(parents=True)
    remover = SandboxRemover(limit=4, workers=1, keep=4)
    box = _box(root)
    os.rename(box.path, tmp_path / "moved-away")
    os.symlink(outside, box.path)
    remover.remove(box)
    assert _taken(remover, root) is None
    assert remover.close() == []
    assert sorted(p.name for p in outside.iterdir()) == ["home", "shims", "tmp"]
    assert list(root.iterdir()) == []  # the link went, never what it names
