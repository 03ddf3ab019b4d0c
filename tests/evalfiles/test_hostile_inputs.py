"""Hostile eval files: ``validate`` refuses each with file, line and field, quickly and in little memory.

Every case runs the real ``trialbook validate`` in a child process under an address-space limit (so a
regression fails by running out of memory rather than taking the machine with it); the child's own peak
RSS, read with ``wait4``, must stay under 200 MB and it must end within a generous timeout.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

from trialbook.errors import ConfigError
from trialbook.evalfiles._bounds import MAX_DEPTH, MAX_EXPANDED_NODES, YamlTooLarge, check_yaml_bounds
from trialbook.evalfiles._nodes import _LOADER
from trialbook.sandbox import create_sandbox
from trialbook.select import tree_hash

from ..peak import measure
from .helpers import load, problems, write

OK = "prompt_text: hi\nagents: [literal]\n"
PEAK_RSS_LIMIT_KB = 200 * 1024
ADDRESS_SPACE_LIMIT = 2 << 30  # a guard only: the peak RSS is what the test asserts
TIMEOUT_S = 60.0


def _laughs(levels: int, fan_out: int = 10) -> str:
    lines = [f"l0: &l0 [{', '.join(['lol'] * fan_out)}]"]
    for level in range(1, levels + 1):
        lines.append(f"l{level}: &l{level} [{', '.join([f'*l{level - 1}'] * fan_out)}]")
    return OK + "params:\n  " + "\n  ".join(lines) + f"\n  top: *l{levels}\n"


def _nested_flow(depth: int) -> str:
    return OK + "params: " + "[" * depth + "]" * depth + "\n"


def _nested_block(depth: int) -> str:
    body = "".join(" " * (i + 1) + f"k{i}:\n" for i in range(depth))
    return OK + "params:\n" + body + " " * (depth + 1) + "v\n"


def validate(project: Path, target: str) -> tuple[int, str, int]:
    """Run ``trialbook validate target`` in a memory-limited child: exit code, stderr, peak RSS in KB."""
    trialbook = Path(sys.executable).with_name("trialbook")
    measured = measure(
        [str(trialbook), "validate", target],
        cwd=project,
        address_space=ADDRESS_SPACE_LIMIT,
        timeout_s=TIMEOUT_S,
    )
    if measured.code is None:
        pytest.fail(f"validate {target} did not finish within {TIMEOUT_S:g}s")
    return measured.code, measured.stderr, measured.peak_kb


HOSTILE = {
    "laughs-6": (_laughs(6), 8, "params.l4[7]", "expands the file to more than 100,000 values"),
    "laughs-9": (_laughs(9), 8, "params.l4[7]", "expands the file to more than 100,000 values"),
    "laughs-30": (_laughs(30, fan_out=2), 18, "params.l14[1]", "expands the file"),
    "flow-1000": (_nested_flow(1000), 3, "params[0][0][0]...", "nested more than 64 levels deep"),
    "block-1000": (_nested_block(1000), 67, "params.k0.k1.k2...", "nested more than 64 levels deep"),
    "shim-dot": (OK + "shims:\n  .: stub\n", 4, "shims..", "'.' names a folder, not a command"),
    "shim-dotdot": (OK + "shims:\n  ..: passthrough\n", 4, "shims...", "'..' names a folder"),
    "shim-slash": (OK + "shims:\n  bin/npm: stub\n", 4, "shims.bin/npm", "holds a '/'"),
    "shim-empty": (OK + 'shims:\n  "": stub\n', 4, "shims.", "the name is empty"),
    "shim-nul": (OK + 'shims:\n  "np\\0m": stub\n', 4, "shims.np\0m", "holds a NUL character"),
    "path-nul": (
        OK + 'assert:\n  - file_exists: "a\\0b"\n',
        4,
        "assert[0].file_exists",
        "holds a NUL character",
    ),
    "path-control": (
        OK + 'assert:\n  - file_contains: {path: "a\\x01b", pattern: x}\n',
        4,
        "assert[0].file_contains.path",
        "holds a control character",
    ),
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_validate_refuses_hostile_file_in_bounded_memory(tmp_path: Path, case: str) -> None:
    body, line, field, problem = HOSTILE[case]
    write(tmp_path, "evals/x.eval.yaml", body)
    code, err, peak_kb = validate(tmp_path, "evals")
    assert code == 2, err
    assert "Traceback" not in err
    first = err.removeprefix("error: ").splitlines()[0]
    assert first.startswith(f"evals/x.eval.yaml:{line}: {field}: "), err
    assert problem in first
    assert 0 < peak_kb < PEAK_RSS_LIMIT_KB


def test_fifo_in_template_is_refused_by_validate_without_opening_it(tmp_path: Path) -> None:
    write(tmp_path, "evals/x.eval.yaml", OK + "sandbox:\n  template: tpl/\n")
    write(tmp_path, "evals/tpl/readme.md", "hi")
    os.mkfifo(tmp_path / "evals/tpl/pipe")  # nobody ever writes to it: opening it would block forever
    code, err, peak_kb = validate(tmp_path, "evals")
    assert code == 2, err
    assert err == (
        "error: evals/x.eval.yaml:4: sandbox.template: tpl/pipe is a FIFO (named pipe) "
        "(remove it; a template may hold only files, folders and symlinks)\n"
    )
    assert 0 < peak_kb < PEAK_RSS_LIMIT_KB


def test_socket_in_nested_template_folder_is_refused(tmp_path: Path) -> None:
    import socket

    write(tmp_path, "evals/x.eval.yaml", OK + "sandbox:\n  template: tpl\n")
    (tmp_path / "evals/tpl/deep").mkdir(parents=True)
    with socket.socket(socket.AF_UNIX) as server:
        server.bind(str(tmp_path / "evals/tpl/deep/s"))
        assert problems(tmp_path / "evals") == [
            f"{_shown(tmp_path)}/evals/x.eval.yaml:4: sandbox.template: tpl/deep/s is a socket "
            "(remove it; a template may hold only files, folders and symlinks)"
        ]


def _shown(path: Path) -> str:
    from trialbook.evalfiles._problems import display_path

    return display_path(path)


def test_limits_leave_ordinary_anchors_and_nesting_alone(tmp_path: Path) -> None:
    body = OK + "assert: [&r {ran: npm}, *r, *r]\n"
    write(tmp_path, "evals/x.eval.yaml", body)
    assert len(load(tmp_path / "evals")[0].assertions) == 3
    deepest = "x: " + "[" * (MAX_DEPTH - 1) + "]" * (MAX_DEPTH - 1) + "\n"
    check_yaml_bounds(deepest, yaml.SafeLoader)
    with pytest.raises(YamlTooLarge):
        check_yaml_bounds("x: " + "[" * MAX_DEPTH + "]" * MAX_DEPTH + "\n", yaml.SafeLoader)


def test_budget_counts_expanded_values_exactly() -> None:
    # 1 root mapping + key + list + 99_997 scalars = MAX_EXPANDED_NODES values: allowed; one more is not.
    items = MAX_EXPANDED_NODES - 3
    check_yaml_bounds("x: [" + ", ".join(["a"] * items) + "]\n", _LOADER)
    with pytest.raises(YamlTooLarge):
        check_yaml_bounds("x: [" + ", ".join(["a"] * (items + 1)) + "]\n", _LOADER)

    def anchored(uses: int) -> str:
        return "a: &a [" + ", ".join(["a"] * 999) + "]\nb: [" + ", ".join(["*a"] * uses) + "]\n"

    check_yaml_bounds(anchored(98), _LOADER)  # 1 + 1 + 1000 + 1 + 1 + 98 * 1000 = 99_004
    with pytest.raises(YamlTooLarge) as caught:
        check_yaml_bounds(anchored(99), _LOADER)
    assert (caught.value.line, caught.value.field) == (2, "b[98]")


def _ends_within(seconds: float, work: Callable[[], object]) -> BaseException | None:
    """Run ``work`` in a thread; the exception it raised, failing the test when it never returns."""
    raised: list[BaseException] = []

    def run() -> None:
        try:
            work()
        except BaseException as exc:
            raised.append(exc)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    if thread.is_alive():
        pytest.fail("the template's FIFO was opened: the call blocked")
    return raised[0] if raised else None


def test_template_hash_and_copy_never_open_a_fifo(tmp_path: Path) -> None:
    template = tmp_path / "tpl"
    (template / "sub").mkdir(parents=True)
    (template / "a.txt").write_text("a")
    os.mkfifo(template / "sub" / "pipe")
    hashed = _ends_within(10, lambda: tree_hash(template))
    assert isinstance(hashed, ConfigError)
    assert "sub/pipe: the sandbox template holds a FIFO (named pipe)" in str(hashed)
    root = tmp_path / "sandboxes"
    copied = _ends_within(
        10,
        lambda: create_sandbox(root=root, template=template, shims=(), secrets={}, extra_env={}),
    )
    assert isinstance(copied, ConfigError)
    assert "a sandbox template may hold only files, folders and symlinks" in str(copied)
    assert list(root.iterdir()) == []  # the half-made sandbox is gone


def _skill_front_matter(body: str) -> Callable[[Path], None]:
    def make(folder: Path) -> None:
        write(folder, "SKILL.md", f"---\nname: hostile\n{body}\n---\nBody.\n")

    return make


def _skill_fifo(folder: Path) -> None:
    folder.mkdir(parents=True)
    os.mkfifo(folder / "SKILL.md")


def _skill_link_loop(folder: Path) -> None:
    write(folder, "SKILL.md", "---\nname: hostile\n---\nBody.\n")
    os.symlink("loop", folder / "loop")  # a link to itself: never followed, hashed as a link
    os.symlink(".", folder / "here")  # a link to its own folder: not walked into


def _skill_is_root(folder: Path) -> None:
    folder.parent.mkdir(parents=True, exist_ok=True)
    os.symlink("/", folder)  # the whole file system, if anything walked it


def _skill_many_files(folder: Path) -> None:
    write(folder, "SKILL.md", "---\nname: hostile\n---\nBody.\n")
    for n in range(1001):
        (folder / f"f{n}").touch()


def _skill_bad_name(folder: Path) -> None:
    write(folder, "SKILL.md", "---\nname: ../../etc\n---\nBody.\n")


HOSTILE_SKILLS: dict[str, tuple[Callable[[Path], None], str | None]] = {
    "front-matter-nested": (
        _skill_front_matter("x: " + "[" * 5000 + "]" * 5000),
        "its front matter is too large to read: lists and mappings are nested more than 64 levels deep",
    ),
    "front-matter-laughs": (
        _skill_front_matter("\n".join(_laughs(9).splitlines()[3:]).replace("  ", "")),
        "its front matter is too large to read: this alias expands the file to more than 100,000 values",
    ),
    "skill-md-fifo": (_skill_fifo, "the file ../skills/hostile/SKILL.md is not a regular file"),
    "skill-is-root": (_skill_is_root, "the file ../skills/hostile/SKILL.md does not exist"),
    "many-files": (_skill_many_files, "holds more than 1,000 files or 16,777,216 bytes"),
    "bad-name": (_skill_bad_name, "the skill name '../../etc' is not usable as a folder name"),
    "link-loop": (_skill_link_loop, None),
}


@pytest.mark.parametrize("case", sorted(HOSTILE_SKILLS))
def test_validate_refuses_a_hostile_skill_folder_in_bounded_memory(tmp_path: Path, case: str) -> None:
    make, problem = HOSTILE_SKILLS[case]
    make(tmp_path / "skills/hostile")
    write(tmp_path, "evals/x.eval.yaml", OK + "skills: [../skills/hostile]\n")
    code, err, peak_kb = validate(tmp_path, "evals")
    assert "Traceback" not in err
    assert 0 < peak_kb < PEAK_RSS_LIMIT_KB
    if problem is None:  # links that lead nowhere or in circles are copied as links, never followed
        assert code == 0, err
        return
    assert code == 2, err
    first = err.removeprefix("error: ").splitlines()[0]
    assert first.startswith("evals/x.eval.yaml:3: skills[0]: "), err
    assert problem in first, err
