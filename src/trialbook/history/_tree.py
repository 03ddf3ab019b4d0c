"""Blobs and trees of the history branch, built straight in the object database.

Nothing here touches a work tree, an index or HEAD: new trees are made with ``TreeBuilder`` seeded from
the old ones, so an append rewrites only the trees on the path of the files it changed.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator, Mapping

import pygit2
from pygit2.enums import FileMode

from ._union import union_lines

__all__ = [
    "HISTORY",
    "MAX_TREE_DEPTH",
    "MAX_TREE_ENTRIES",
    "TreeTooLarge",
    "blob_at",
    "history_files",
    "merge_history_trees",
    "write_files",
]

HISTORY = "history"

Parts = tuple[str, ...]


def blob_at(repo: pygit2.Repository, tree: pygit2.Tree | None, parts: Parts) -> bytes | None:
    """The content of the file at ``parts`` under ``tree``, or ``None`` when there is none."""
    node: pygit2.Object | None = tree
    for name in parts:
        if not isinstance(node, pygit2.Tree) or name not in node:
            return None
        node = node[name]
    return node.data if isinstance(node, pygit2.Blob) else None


MAX_TREE_ENTRIES = 200_000
"""Files and folders of the history tree walked at most: a thousand evals make a few thousand. Anyone who
can push the branch could otherwise plant a tree of 16 entries a level, 7 levels deep (268 million
files), and every command that lists the branch would walk it for hours."""

MAX_TREE_DEPTH = 32
"""Folders deep: an eval id's parts, plus the layout's own (docs/history.md)."""


class TreeTooLarge(Exception):
    """The history tree is past :data:`MAX_TREE_ENTRIES` or :data:`MAX_TREE_DEPTH`: what was not read."""


def history_files(tree: pygit2.Tree | None, prefix: Parts = ()) -> Iterator[tuple[Parts, pygit2.Oid]]:
    """Every blob under ``tree`` as ``(path parts, blob id)``, depth first, within the tree bounds.

    Raises:
        TreeTooLarge: past :data:`MAX_TREE_ENTRIES` entries or :data:`MAX_TREE_DEPTH` levels; what was
            yielded before is correct, the rest was not read.
    """
    if tree is None:
        return
    walked = 0
    stack: list[tuple[pygit2.Tree, Parts]] = [(tree, prefix)]
    while stack:
        node, parts = stack.pop()
        if len(parts) - len(prefix) > MAX_TREE_DEPTH:
            raise TreeTooLarge(f"folders nested deeper than {MAX_TREE_DEPTH} levels at {'/'.join(parts)}")
        for entry in node:
            walked += 1
            if walked > MAX_TREE_ENTRIES:
                raise TreeTooLarge(f"more than {MAX_TREE_ENTRIES:,} files and folders")
            name = entry.name or ""
            if isinstance(entry, pygit2.Tree):
                stack.append((entry, (*parts, name)))
            elif isinstance(entry, pygit2.Blob):
                yield (*parts, name), entry.id


def subtree(repo: pygit2.Repository, tree: pygit2.Tree | None, name: str) -> pygit2.Tree | None:
    """The subtree ``name`` of ``tree`` if it is one."""
    if tree is None or name not in tree:
        return None
    node = tree[name]
    return node if isinstance(node, pygit2.Tree) else None


def write_files(
    repo: pygit2.Repository, tree: pygit2.Tree | None, files: Mapping[Parts, pygit2.Oid]
) -> pygit2.Oid:
    """A copy of ``tree`` (or an empty tree) with each ``parts -> blob`` set, grouped per folder."""
    builder = repo.TreeBuilder(tree) if tree is not None else repo.TreeBuilder()
    nested: dict[str, dict[Parts, pygit2.Oid]] = defaultdict(dict)
    for parts, blob in files.items():
        if len(parts) == 1:
            builder.insert(parts[0], blob, FileMode.BLOB)
        else:
            nested[parts[0]][parts[1:]] = blob
    for name, inner in nested.items():
        builder.insert(name, write_files(repo, subtree(repo, tree, name), inner), FileMode.TREE)
    return builder.write()


def merge_history_trees(
    repo: pygit2.Repository, base: pygit2.Tree | None, ours: pygit2.Tree, theirs: pygit2.Tree
) -> pygit2.Oid:
    """A root tree holding the union of both sides' history files; other root entries come from ours."""
    base_files = dict(history_files(subtree(repo, base, HISTORY)))
    our_files = dict(history_files(subtree(repo, ours, HISTORY)))
    their_files = dict(history_files(subtree(repo, theirs, HISTORY)))
    changed: dict[Parts, pygit2.Oid] = {}
    for parts, their_blob in their_files.items():
        our_blob = our_files.get(parts)
        base_blob = base_files.get(parts)
        if our_blob == their_blob or their_blob == base_blob:
            continue  # ours already holds every line of this file
        if our_blob is None or our_blob == base_blob:
            changed[parts] = their_blob
            continue
        merged = union_lines(_data(repo, base_blob), _data(repo, our_blob), _data(repo, their_blob))
        changed[parts] = repo.create_blob(merged)
    history = write_files(repo, subtree(repo, ours, HISTORY), changed)
    root = repo.TreeBuilder(ours)
    root.insert(HISTORY, history, FileMode.TREE)
    return root.write()


def _data(repo: pygit2.Repository, blob: pygit2.Oid | None) -> bytes | None:
    if blob is None:
        return None
    obj = repo[blob]
    return obj.data if isinstance(obj, pygit2.Blob) else None
