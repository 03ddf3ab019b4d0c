"""A sandbox nested deeper than Python recurses, or than a process may hold descriptors, is still removed.

An agent can make a folder chain thousands deep in a second (``mkdir -p a/a/a/...``). Removing it must
neither recurse (Python's limit is about 1,000 frames) nor hold a descriptor per level (the soft limit is
often 1,024), and must still follow no link on the way down.
"""

from __future__ import annotations

import os
import resource
from pathlib import Path

from trialbook.sandbox import remove_tree


def _chain(top: Path, depth: int, leaf: str = "a") -> Path:
    """Make ``depth`` nested folders under ``top``, each ``mkdir`` relative to the last (no long paths).

    Returns the deepest folder's path, usable only while it fits in ``PATH_MAX``.
    """
    fd = os.open(top, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for _ in range(depth):
            os.mkdir(leaf, dir_fd=fd)
            inner = os.open(leaf, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = inner
        with open(os.open("file.txt", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd), "w") as handle:
            handle.write("deep")
        return top.joinpath(*[leaf] * depth)
    finally:
        os.close(fd)


def _open_descriptors() -> int:
    return len(os.listdir("/proc/self/fd"))


def test_a_tree_deeper_than_recursion_and_descriptors_allow_is_removed(tmp_path: Path) -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    root = tmp_path / "sandbox"
    root.mkdir()
    _chain(root, 3000)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(256, hard), hard))
    try:
        before = _open_descriptors()
        remove_tree(root)
        assert _open_descriptors() == before
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    assert not root.exists()


def test_a_link_deep_in_the_tree_is_removed_and_its_target_kept(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep.txt").write_text("mine")
    root = tmp_path / "sandbox"
    root.mkdir()
    deepest = _chain(root, 200)
    (deepest / "link").symlink_to(outside)
    (deepest / "file-link").symlink_to(outside / "keep.txt")
    remove_tree(root)
    assert not root.exists()
    assert (outside / "keep.txt").read_text() == "mine"


def test_a_deep_read_only_folder_is_opened_up_and_removed(tmp_path: Path) -> None:
    root = tmp_path / "sandbox"
    root.mkdir()
    deepest = _chain(root, 1500)
    os.chmod(deepest, 0o500)
    os.chmod(deepest.parent, 0o500)
    remove_tree(root)
    assert not root.exists()
