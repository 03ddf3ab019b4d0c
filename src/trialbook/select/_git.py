"""Reading the user's repository without touching it: HEAD, and files as they were at a base ref."""

from __future__ import annotations

from pathlib import Path

import pygit2

from ..errors import UsageError

__all__ = ["BaseTree", "open_repository"]


def open_repository(path: Path) -> pygit2.Repository | None:
    """The repository containing ``path``, or ``None`` outside one."""
    found = pygit2.discover_repository(str(path))
    return pygit2.Repository(found) if found is not None else None


class BaseTree:
    """Files of the repository at a base ref, read from git objects (no checkout)."""

    def __init__(self, repo_path: Path, ref: str) -> None:
        repo = open_repository(repo_path)
        if repo is None:
            raise UsageError(
                f"--changed compares against git history, but {repo_path.resolve()} is not in a repository"
            )
        self.repo = repo
        self.root = Path(repo.workdir).resolve() if repo.workdir else repo_path.resolve()
        self.ref = ref
        try:
            commit = repo.revparse_single(ref).peel(pygit2.Commit)
        except (KeyError, ValueError, pygit2.GitError):
            raise UsageError(
                f"--base {ref} does not resolve to a commit in {self.root}. The base must be fetched: in "
                "GitHub Actions check out with `fetch-depth: 0` (a depth of 1 has no base), or run "
                f"`git fetch origin {ref.removeprefix('origin/')}` first."
            ) from None
        self.commit = commit
        self.tree = commit.tree

    def relative(self, path: Path) -> str | None:
        """``path`` relative to the repository root (POSIX), or ``None`` when outside it."""
        try:
            return path.resolve().relative_to(self.root).as_posix()
        except ValueError:
            return None

    def blob_id(self, rel: str) -> pygit2.Oid | None:
        """The blob id of ``rel`` at the base, or ``None`` when it did not exist there as a file."""
        try:
            entry = self.tree[rel]
        except KeyError:
            return None
        return entry.id if entry.type_str == "blob" else None

    def file_ids(self, rel_dir: str) -> dict[str, pygit2.Oid]:
        """``{path relative to rel_dir: blob id}`` of every file under ``rel_dir`` at the base."""
        try:
            top = self.tree[rel_dir] if rel_dir not in ("", ".") else self.tree
        except KeyError:
            return {}
        if top.type_str != "tree":
            return {}
        found: dict[str, pygit2.Oid] = {}

        def walk(tree: pygit2.Tree, prefix: str) -> None:
            for entry in tree:
                name = f"{prefix}{entry.name}"
                if entry.type_str == "tree":
                    walk(self.repo[entry.id].peel(pygit2.Tree), f"{name}/")
                elif entry.type_str == "blob":
                    found[name] = entry.id

        walk(self.repo[top.id].peel(pygit2.Tree), "")
        return found
