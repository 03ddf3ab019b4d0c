"""The Copilot CLI's own binary behind npm's loader, so the process trialbook starts and watches is the CLI.

``npm install @github/copilot`` makes ``.bin/copilot`` a link to ``npm-loader.js``, a Node script that
starts the platform package's native binary (``@github/copilot-linux-x64``'s ``copilot``) as its child,
on the same pipes, and waits for it. Started through the loader, the process the SDK holds is Node, not
the CLI: a CLI killed under a trial was reported as the loader's ``exit code 1`` (its message: "no
platform package found"), and a loader killed alone left the CLI serving the session, so the trial ended
as the CLI's exit or as a completed turn depending on which the event loop heard of first. The binary is
found here as the loader finds it (Node's package lookup from the loader's folder, the musl build first on
a Linux without glibc) and started directly; any other path, and a loader whose platform package is
missing, is started as given.
"""

from __future__ import annotations

import json
import os
import platform
import sys
from collections.abc import Iterator
from pathlib import Path

__all__ = ["native_cli"]

LOADER = "npm-loader.js"
PACKAGE = "@github/copilot"
_ARCHES = {"x86_64": "x64", "amd64": "x64", "aarch64": "arm64", "arm64": "arm64"}


def native_cli(cli_path: str) -> str:
    """The native CLI when ``cli_path`` is (a link to) the loader of ``@github/copilot``, else ``cli_path``.

    The loader's folder holds the ``package.json`` of ``@github/copilot``: a file of that name in
    another package is not it.
    """
    loader = Path(os.path.realpath(cli_path))
    if loader.name != LOADER or _name(loader.parent) != PACKAGE:
        return cli_path
    for package in _platform_packages():
        for folder in _lookup(loader.parent, package):
            binary = _entry(folder)
            if binary is not None:
                return str(binary)
    return cli_path


def _platform_packages() -> list[str]:
    """The platform packages the loader tries, in its order (``@github/copilot-linux-x64``, ...)."""
    arch = _ARCHES.get(platform.machine().lower())
    if arch is None:
        return []
    if sys.platform.startswith("linux"):
        systems = ["linux"] if platform.libc_ver()[0] == "glibc" else ["linuxmusl", "linux"]
    else:
        systems = [sys.platform]
    return [f"{PACKAGE}-{system}-{arch}" for system in systems]


def _lookup(start: Path, package: str) -> Iterator[Path]:
    """Where Node looks for ``package`` from a module in ``start``: each ``node_modules`` up the tree."""
    for folder in (start, *start.parents):
        if folder.name != "node_modules":
            yield folder / "node_modules" / package


def _name(folder: Path) -> str | None:
    manifest = _manifest(folder)
    name = manifest.get("name") if manifest is not None else None
    return name if isinstance(name, str) else None


def _manifest(folder: Path) -> dict[str, object] | None:
    try:
        data = json.loads((folder / "package.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _entry(folder: Path) -> Path | None:
    """The executable a platform package exports as ``.``: what the loader's ``import.meta.resolve`` finds."""
    manifest = _manifest(folder)
    exports = manifest.get("exports") if manifest is not None else None
    target = exports.get(".") if isinstance(exports, dict) else exports
    if not isinstance(target, str):
        return None
    binary = (folder / target).resolve()
    if not binary.is_relative_to(folder.resolve()) or not binary.is_file() or not os.access(binary, os.X_OK):
        return None
    return binary
