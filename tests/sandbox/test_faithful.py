"""Faithful sandboxes: trialbook's own virtualenv stays out of PATH, templates leave out .git, .trialbook
and exclude: globs, and the copy and the hash always agree on what a trial starts from."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.sandbox.conftest import MakeSandbox
from trialbook.evidence import AgentResult
from trialbook.sandbox import TemplateFilter, check_pattern, runner_path
from trialbook.sandbox._host import own_python_dirs
from trialbook.select import tree_hash

RESULT = AgentResult(agent_name="test", agent_version=None, success=True, error=None, stop_reason="completed")


def test_the_virtualenv_running_trialbook_is_not_on_the_sandbox_path(
    make_sandbox: MakeSandbox, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The tests run from trialbook's own virtualenv, as `uv run trialbook` would.
    assert sys.prefix != sys.base_prefix
    venv_bin = str(Path(sys.prefix) / "bin")
    monkeypatch.setenv("PATH", f"{venv_bin}{os.pathsep}/usr/bin{os.pathsep}/bin")
    monkeypatch.setenv("VIRTUAL_ENV", sys.prefix)
    sandbox = make_sandbox()
    assert sandbox.env["PATH"] == f"{sandbox.shim_dir}:/usr/bin:/bin"
    outcome = sandbox.finished(RESULT).run("command -v python3; echo ${VIRTUAL_ENV-unset}", timeout_s=30)
    lines = outcome.output.splitlines()
    assert not lines[0].startswith(sys.prefix)
    assert lines[-1] == "unset"


def test_a_system_python_keeps_its_folder(tmp_path: Path) -> None:
    """Outside a virtualenv the interpreter's folder is the machine's (/usr/bin): nothing is dropped."""
    assert own_python_dirs(prefix="/usr", base_prefix="/usr", executable="/usr/bin/python3", environ={}) == []
    assert runner_path("/usr/bin:/bin", dropped=[]) == "/usr/bin:/bin"


def test_only_the_virtualenv_folders_are_dropped_in_order(tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    other = tmp_path / "tools"
    other.mkdir()
    dropped = own_python_dirs(
        prefix=str(venv), base_prefix="/usr", executable=str(venv / "bin" / "python"), environ={}
    )
    path = os.pathsep.join([str(venv / "bin"), str(other), "/usr/bin", str(venv / "bin") + "/", "/bin"])
    assert runner_path(path, dropped=dropped) == os.pathsep.join([str(other), "/usr/bin", "/bin"])


def test_a_different_activated_virtualenv_is_the_users_and_stays(tmp_path: Path) -> None:
    mine, theirs = tmp_path / "mine", tmp_path / "theirs"
    for venv in (mine, theirs):
        (venv / "bin").mkdir(parents=True)
    dropped = own_python_dirs(
        prefix=str(mine),
        base_prefix="/usr",
        executable=str(mine / "bin/python"),
        environ={"VIRTUAL_ENV": str(theirs)},
    )
    assert str(theirs / "bin") not in dropped
    assert runner_path(f"{theirs}/bin:{mine}/bin:/usr/bin", dropped=dropped) == f"{theirs}/bin:/usr/bin"


def _tree(root: Path, files: list[str]) -> None:
    for rel in files:
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(rel)


def _files(root: Path) -> set[str]:
    return {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()}


def test_template_copies_leave_out_git_trialbook_and_exclude_globs(
    make_sandbox: MakeSandbox, tmp_path: Path
) -> None:
    template = tmp_path / "repo"
    _tree(
        template,
        [
            ".git/HEAD",
            ".git/objects/ab/cdef",
            ".trialbook/results/evals/x/literal/trial-1/literal.log",
            "sub/.git",  # a submodule's .git file
            "node_modules/left-pad/index.js",
            "web/node_modules/x.js",
            "logs/today.log",
            "build/out/app.bin",
            "docs/a.md",
            "docs/img/b.png",
            "src/main.py",
            ".github/workflows/ci.yml",
            "README.md",
        ],
    )
    sandbox = make_sandbox(template=template, exclude=("node_modules", "*.log", "build/**", "docs/**/*.png"))
    assert _files(sandbox.workdir) == {
        "docs/a.md",
        "src/main.py",
        ".github/workflows/ci.yml",
        "README.md",
    }


@pytest.mark.parametrize(
    ("pattern", "path", "is_dir", "excluded"),
    [
        ("*.log", "a.log", False, True),
        ("*.log", "deep/er/a.log", False, True),
        ("*.log", "a.log.txt", False, False),
        ("node_modules", "web/node_modules", True, True),
        ("build/out", "build/out", True, True),
        ("build/out", "x/build/out", True, False),
        ("/build", "build", True, True),
        ("docs/**/*.png", "docs/a.png", False, True),
        ("docs/**/*.png", "docs/x/y/a.png", False, True),
        ("docs/**/*.png", "other/docs/a.png", False, False),
        ("cache/", "cache", True, True),
        ("cache/", "cache", False, False),
        ("file?.txt", "file1.txt", False, True),
        ("file?.txt", "file/.txt", False, False),
        ("[ab].c", "a.c", False, True),
        ("[!ab].c", "a.c", False, False),
        ("*", "a/b", False, True),
    ],
)
def test_exclude_glob_rules(pattern: str, path: str, is_dir: bool, excluded: bool) -> None:
    assert TemplateFilter.of([pattern]).excluded(path, is_dir=is_dir) is excluded


@pytest.mark.parametrize(
    ("pattern", "problem"),
    [("", "is empty"), ("/", "is empty"), ("../x", "'.' or '..'"), ("a/./b", "'.' or '..'"), ("a\\b", "'/'")],
)
def test_unusable_patterns_are_named(pattern: str, problem: str) -> None:
    message = check_pattern(pattern)
    assert message is not None and problem in message


NAMES = st.sampled_from(["a", "b.log", ".git", ".trialbook", "node_modules", "src", "x.txt", "keep"])


@settings(max_examples=60, deadline=None)
@given(
    paths=st.lists(st.lists(NAMES, min_size=1, max_size=4), min_size=1, max_size=12),
    patterns=st.lists(st.sampled_from(["*.log", "node_modules", "src/**", "a/", "keep/x.txt"]), max_size=3),
)
def test_what_is_copied_is_exactly_what_is_hashed(
    tmp_path_factory: pytest.TempPathFactory, paths: list[list[str]], patterns: list[str]
) -> None:
    """Changing any file left out of the copy never changes the hash; changing a copied one always does."""
    root = tmp_path_factory.mktemp("tpl")
    written: list[str] = []
    for parts in paths:
        target = root.joinpath(*parts)
        if any(p.is_file() for p in [root.joinpath(*parts[:i]) for i in range(1, len(parts))]):
            continue
        if target.is_dir():
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text("v1")
        written.append("/".join(parts))
    keep = TemplateFilter.of(patterns)
    copy = tmp_path_factory.mktemp("copy") / "work"
    from trialbook.sandbox._sandbox import _copy_template

    _copy_template(root, copy, keep)
    copied = _files(copy)
    before = tree_hash(root, keep)
    for rel in written:
        (root / rel).write_text("v2")
        changed = tree_hash(root, keep) != before
        assert changed is (rel in copied), rel
        (root / rel).write_text("v1")
    assert copied <= set(written)
    assert not any(part in (".git", ".trialbook") for rel in copied for part in rel.split("/"))
