"""Under bubblewrap a shim covers the real binary's own paths: a call by absolute path is recorded too."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.system import ensure
from trialbook.sandbox._covers import REAL_VIEWS, ShimCover, cover_args, real_routes, shim_cover

from .isolated import run_isolated

UNAME = Path("/usr/bin/uname")

CALLER = "/usr/bin/uname -s > by-path.txt; uname -s > by-name.txt; /bin/id -u > id.txt 2>&1; touch started"


@pytest.mark.parametrize("isolation", ["none", "bwrap"])
def test_a_shimmed_binary_called_by_its_absolute_path_is_recorded_only_under_bwrap(
    tmp_path: Path, isolation: str
) -> None:
    if isolation == "bwrap":
        ensure("bubblewrap")
    run = run_isolated(
        tmp_path,
        CALLER,
        isolation,
        extra="shims: {uname: passthrough, id: {script: 'echo stub-id'}}\n",
        checks="[file_exists: started, {file_contains: {path: by-path.txt, pattern: Linux}}]",
    )
    assert run.done.returncode == 0, run.done.stdout + run.done.stderr
    calls = [(call["argv"], call["path"]) for call in run.calls()]
    shims = next(Path(path).parent for _, path in calls if path.endswith("/shims/uname"))
    if isolation == "none":  # the absolute paths bypass the shims: only the call by name is recorded
        assert calls == [(["uname", "-s"], str(shims / "uname"))]
        return
    # Recorded alike, each with the path it was called by; the passthrough still ran the real uname.
    assert calls == [
        (["uname", "-s"], "/usr/bin/uname"),
        (["uname", "-s"], str(shims / "uname")),
        (["id", "-u"], "/bin/id"),
    ]


def test_covers_follow_links_to_the_file_and_skip_what_is_hidden_or_the_trials_own(tmp_path: Path) -> None:
    bin_dir, hidden = tmp_path / "bin", tmp_path / "hidden"
    (tmp_path / "pkg").mkdir()
    for folder in (bin_dir, hidden):
        folder.mkdir()
    real = tmp_path / "pkg/tool.js"
    real.write_text("#!/bin/sh\n")
    real.chmod(0o755)
    (bin_dir / "tool").symlink_to("../pkg/tool.js")
    (hidden / "tool").write_text("#!/bin/sh\n")
    (hidden / "tool").chmod(0o755)
    shim = tmp_path / "trial/shims/tool"
    cover = shim_cover(shim, f"{hidden}{os.pathsep}{bin_dir}", passthrough=True)
    assert cover.targets == (hidden / "tool", real)
    assert cover.reals == (hidden / "tool", real)
    root = tmp_path / "trial"
    assert real_routes(cover, root)[1] == root / REAL_VIEWS / real.relative_to("/")
    args = cover_args([cover], root, [hidden])
    # The real binary's top folder is shown under real/ (it holds the hidden folder: so its own folder);
    # the shim covers the file the link names, never the hidden copy.
    assert args == [
        "--ro-bind", str(real.parent), f"{root}/{REAL_VIEWS}{real.parent}",
        "--ro-bind", str(shim), str(real),
    ]  # fmt: skip


def test_a_stub_shim_covers_but_runs_nothing_real() -> None:
    cover = shim_cover(Path("/nowhere/shims/uname"), "/usr/bin", passthrough=False)
    assert cover.reals == () and UNAME.resolve() in cover.targets
    assert cover_args([ShimCover(Path("/s/uname"), ())], Path("/s"), []) == []
