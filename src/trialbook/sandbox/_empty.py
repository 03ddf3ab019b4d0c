"""Emptying and removing folders through open descriptors, following no link and with no recursion.

Sandbox removal (``_sandbox``) removes what an agent left, which may be links to the user's files,
folders nested thousands deep (past Python's recursion limit, where ``shutil.rmtree`` of Python 3.11
fails), or entries swapped for something else since they were listed.
"""

from __future__ import annotations

import os

__all__ = ["FOLDER_FLAGS", "empty_folder", "listing", "remove_entry"]

FOLDER_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC | getattr(os, "O_NOFOLLOW", 0)
"""How a folder is opened to be read or emptied: never through a link put in its place."""


_OPEN_LEVELS = 32
"""Folders a removal holds open at once; one nested deeper is first moved up into the tree's top folder."""


def listing(folder: int) -> list[tuple[str, bool]]:
    """Each entry of the open folder ``folder``: its name, and whether the listing says it is a folder."""
    with os.scandir(folder) as entries:
        return [(entry.name, entry.is_dir(follow_symlinks=False)) for entry in entries]


def empty_folder(top: int) -> None:
    """Remove everything inside the open folder ``top``: by name relative to it, following no link.

    Each entry is what the folder's listing says it is; a folder is opened with ``O_NOFOLLOW``, so a
    link swapped in for it fails to open (and the careful way takes over) instead of being walked.
    No recursion, and at most :data:`_OPEN_LEVELS` descriptors: an agent can nest folders thousands
    deep, past both Python's recursion limit and the descriptor limit, so a folder found that deep is
    renamed into ``top`` (the same file system) and emptied from there.
    """
    stack: list[tuple[int, list[tuple[str, bool]], str]] = [(top, listing(top), "")]
    try:
        while stack:
            folder, entries, name = stack[-1]
            if not entries:
                stack.pop()
                if stack:  # an emptied folder inside: close it, then remove it from its parent
                    os.close(folder)
                    os.rmdir(name, dir_fd=stack[-1][0])
                continue
            entry, is_folder = entries.pop()
            if not is_folder:
                os.unlink(entry, dir_fd=folder)
            elif len(stack) < _OPEN_LEVELS:
                inner = os.open(entry, FOLDER_FLAGS, dir_fd=folder)
                try:
                    listed = listing(inner)
                except BaseException:
                    os.close(inner)
                    raise
                stack.append((inner, listed, entry))
            else:
                moved = f".trialbook-deep-{os.urandom(6).hex()}"
                os.rename(entry, moved, src_dir_fd=folder, dst_dir_fd=top)
                stack[0][1].append((moved, True))
    finally:
        for folder, _, _ in stack[1:]:
            os.close(folder)


def remove_entry(folder: int | None, name: str, *, is_folder: bool) -> None:
    """Remove ``name`` inside the open folder ``folder`` (``None``: ``name`` is a path), all of it.

    A folder is opened without following a link, emptied, then removed; anything else is unlinked.
    """
    if not is_folder:
        os.unlink(name, dir_fd=folder)
        return
    inner = os.open(name, FOLDER_FLAGS, dir_fd=folder)
    try:
        empty_folder(inner)
    finally:
        os.close(inner)
    os.rmdir(name, dir_fd=folder)
