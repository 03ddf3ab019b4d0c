"""Template copies: reflinks where the filesystem clones, a real copy elsewhere, the same tree either way.

The reflink cases run on a real XFS filesystem made for the test (a loopback image, ``mkfs.xfs`` from
xfsprogs, installed on first use by tests.system); mounting it needs root, which CI has. Everywhere else
the copy is checked against what ``cp --reflink=always`` says the filesystem can do, so the detection is
tested honestly on whatever filesystem the temp folder is on.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.system import ensure
from trialbook.errors import ConfigError
from trialbook.sandbox import create_sandbox
from trialbook.sandbox._copy import copy_tree, reflink_support
from trialbook.sandbox._special import SpecialFileError

TRIALBOOK = Path(sys.executable).parent / "trialbook"


def _reflinks_work(folder: Path) -> bool:
    """What coreutils finds: ``cp --reflink=always`` fails where the filesystem cannot clone."""
    (folder / ".probe").write_text("x")
    done = subprocess.run(
        ["cp", "--reflink=always", str(folder / ".probe"), str(folder / ".probe2")],
        capture_output=True,
        check=False,
    )
    for name in (".probe", ".probe2"):
        (folder / name).unlink(missing_ok=True)
    return done.returncode == 0


def _template(root: Path) -> Path:
    root.mkdir(parents=True)
    (root / "src").mkdir()
    (root / "src" / "main.py").write_text("print('hi')\n")
    (root / "run.sh").write_text("#!/bin/sh\necho run\n")
    (root / "run.sh").chmod(0o755)
    (root / "readonly.txt").write_text("keep\n")
    (root / "readonly.txt").chmod(0o444)
    (root / "empty").write_bytes(b"")
    (root / "link").symlink_to("src/main.py")
    (root / "dangling").symlink_to("nowhere")
    (root / "locked").mkdir()
    (root / "locked" / "inner.txt").write_text("inner\n")
    (root / "locked").chmod(0o555)
    (root / "node_modules").mkdir()
    (root / "node_modules" / "x.js").write_text("x\n")
    os.utime(root / "src" / "main.py", ns=(1_000_000_123, 2_000_000_456))
    return root


def _shape(root: Path) -> dict[str, tuple[object, ...]]:
    """Every entry's kind, mode, modification time and content (or link target)."""
    shape: dict[str, tuple[object, ...]] = {}
    for folder, dirs, names in os.walk(root):
        for name in [*dirs, *names]:
            path = Path(folder) / name
            info = path.lstat()
            rel = path.relative_to(root).as_posix()
            if stat.S_ISLNK(info.st_mode):
                shape[rel] = ("link", os.readlink(path))
            elif stat.S_ISDIR(info.st_mode):
                shape[rel] = ("dir", stat.S_IMODE(info.st_mode), info.st_mtime_ns)
            else:
                shape[rel] = ("file", stat.S_IMODE(info.st_mode), info.st_mtime_ns, path.read_bytes())
    return shape


def _unlock(root: Path) -> None:
    for folder, _, _ in os.walk(root):
        os.chmod(folder, 0o755)


def test_the_copy_is_the_template_less_what_is_left_out(tmp_path: Path) -> None:
    template = _template(tmp_path / "template")
    work = tmp_path / "work"
    method = copy_tree(template, work, lambda relative, is_dir: relative != "node_modules")
    expected = {rel: entry for rel, entry in _shape(template).items() if not rel.startswith("node_modules")}
    try:
        assert _shape(work) == expected
        assert stat.S_IMODE(work.stat().st_mode) == stat.S_IMODE(template.stat().st_mode)
    finally:
        _unlock(work)
        _unlock(template)
    assert method == ("reflink" if _reflinks_work(tmp_path) else "copy")
    assert reflink_support(template.stat().st_dev, work.stat().st_dev) is (method == "reflink")


def _raised_without_blocking(copy: Callable[[], object]) -> BaseException | None:
    """What ``copy`` raised, run in a thread: one that opened a FIFO would wait for a writer forever."""
    outcome: list[BaseException | None] = []

    def attempt() -> None:
        try:
            copy()
            outcome.append(None)
        except BaseException as exc:
            outcome.append(exc)

    worker = threading.Thread(target=attempt, daemon=True)
    worker.start()
    worker.join(30)
    assert not worker.is_alive(), "the copy opened the FIFO and waits for a writer"
    return outcome[0]


def test_a_fifo_in_the_template_is_refused_without_being_opened(tmp_path: Path) -> None:
    template = tmp_path / "template"
    template.mkdir()
    (template / "a.txt").write_text("a\n")
    os.mkfifo(template / "pipe")
    raised = _raised_without_blocking(
        lambda: create_sandbox(root=tmp_path / "boxes", template=template, shims=(), secrets={}, extra_env={})
    )
    assert isinstance(raised, ConfigError)
    assert "pipe is a FIFO" in str(raised)
    assert not list((tmp_path / "boxes").iterdir()), "the half-made sandbox was left behind"


def _swapping(template: Path, name: str, swap: Callable[[Path], None]) -> Callable[[str, bool], bool]:
    """A ``kept`` that swaps ``name`` for something else once the listing has said it is a file."""

    def kept(relative: str, is_dir: bool) -> bool:
        if relative == name:
            os.unlink(template / name)
            swap(template / name)
        return True

    return kept


def test_a_file_swapped_for_a_fifo_after_the_listing_is_refused_without_blocking(tmp_path: Path) -> None:
    template = tmp_path / "template"
    template.mkdir()
    (template / "a.txt").write_text("a\n")
    raised = _raised_without_blocking(
        lambda: copy_tree(template, tmp_path / "work", _swapping(template, "a.txt", os.mkfifo))
    )
    assert isinstance(raised, SpecialFileError) and "a FIFO" in str(raised)


def test_a_file_swapped_for_a_link_after_the_listing_is_not_followed(tmp_path: Path) -> None:
    template = tmp_path / "template"
    template.mkdir()
    (template / "a.txt").write_text("a\n")
    secret = tmp_path / "outside.txt"
    secret.write_text("not the template's")
    with pytest.raises(OSError, match="symbolic links"):  # ELOOP: O_NOFOLLOW refused the link
        copy_tree(template, tmp_path / "work", _swapping(template, "a.txt", lambda p: p.symlink_to(secret)))
    assert not (tmp_path / "work" / "a.txt").exists()


def test_a_file_swapped_for_another_file_is_copied_with_that_files_mode_and_times(tmp_path: Path) -> None:
    template = tmp_path / "template"
    template.mkdir()
    (template / "a.txt").write_text("old\n")

    def other(path: Path) -> None:
        path.write_text("new\n")
        path.chmod(0o640)
        os.utime(path, ns=(1_000_000_000, 2_000_000_000))

    copy_tree(template, tmp_path / "work", _swapping(template, "a.txt", other))
    copied = tmp_path / "work" / "a.txt"
    assert copied.read_text() == "new\n"
    assert stat.S_IMODE(copied.stat().st_mode) == 0o640
    assert copied.stat().st_mtime_ns == 2_000_000_000


def test_a_template_without_files_reports_copy(tmp_path: Path) -> None:
    template = tmp_path / "template"
    (template / "only" / "folders").mkdir(parents=True)
    with create_sandbox(root=tmp_path, template=template, shims=(), secrets={}, extra_env={}) as box:
        assert box.copy == "copy"
        assert (box.workdir / "only" / "folders").is_dir()
    with create_sandbox(root=tmp_path, template=None, shims=(), secrets={}, extra_env={}) as box:
        assert box.copy is None


@pytest.fixture(scope="module")
def xfs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A freshly made XFS filesystem (reflinks on by default since xfsprogs 5.1), mounted for the module."""
    if os.geteuid() != 0:
        pytest.skip("mounting a loopback filesystem needs root (CI runs as root)")
    mkfs = ensure("xfsprogs")
    base = tmp_path_factory.mktemp("xfs")
    image, mount = base / "fs.img", base / "mnt"
    with image.open("wb") as handle:
        handle.truncate(320 * 1024 * 1024)  # the smallest XFS mkfs.xfs accepts is 300 MB
    subprocess.run([mkfs, "-q", "-m", "reflink=1", str(image)], check=True)
    mount.mkdir()
    subprocess.run(["mount", "-o", "loop", str(image), str(mount)], check=True)
    try:
        yield mount
    finally:
        subprocess.run(["umount", str(mount)], check=False)
        if os.path.ismount(mount):
            subprocess.run(["umount", "-l", str(mount)], check=False)


def _used(folder: Path) -> int:
    info = os.statvfs(folder)
    return (info.f_blocks - info.f_bfree) * info.f_frsize


def test_on_xfs_files_are_cloned_and_a_write_stays_in_its_sandbox(xfs: Path) -> None:
    assert _reflinks_work(xfs)
    template = _template(xfs / "template")
    big = template / "big.bin"
    big.write_bytes(os.urandom(1024 * 1024) * 32)
    os.sync()
    before = _used(xfs)
    boxes = [
        create_sandbox(root=xfs / "boxes", template=template, shims=(), secrets={}, extra_env={})
        for _ in range(3)
    ]
    try:
        os.sync()
        assert [box.copy for box in boxes] == ["reflink"] * 3
        # Three copies of 32 MB take (nearly) no space: the blocks are shared, not written again.
        assert _used(xfs) - before < 8 * 1024 * 1024
        expected = _shape(template)
        assert _shape(boxes[0].workdir) == expected
        # Copy on write: what one trial changes, neither the template nor another trial sees.
        with (boxes[0].workdir / "big.bin").open("r+b") as handle:
            handle.write(b"changed by trial one")
        (boxes[1].workdir / "src" / "main.py").write_text("trial two\n")
        assert big.read_bytes()[:20] != b"changed by trial one"
        assert (boxes[2].workdir / "big.bin").read_bytes() == big.read_bytes()
        assert (template / "src" / "main.py").read_text() == "print('hi')\n"
        assert (boxes[2].workdir / "src" / "main.py").read_text() == "print('hi')\n"
    finally:
        for box in boxes:
            _unlock(box.workdir)
            box.close()
        _unlock(template)


def test_a_run_reports_how_its_sandboxes_were_copied(xfs: Path, tmp_path: Path) -> None:
    """``sandbox.copy`` in suite.json: ``reflink`` with template and sandboxes on XFS, else what cp finds."""
    template = xfs / "run-template"
    template.mkdir()
    (template / "README.md").write_text("hello\n")
    outside = tmp_path / "template"
    shutil.copytree(template, outside)
    for name, source, tmpdir in (("xfs", template, xfs / "tmp"), ("local", outside, tmp_path / "tmp")):
        tmpdir.mkdir()
        evals = tmp_path / name / "evals"
        evals.mkdir(parents=True)
        (evals / "copy.eval.yaml").write_text(
            "prompt_text: read it\n"
            "agents: [{name: reader, script: 'cat README.md > seen.txt'}]\n"
            f"sandbox: {{template: {source}}}\n"
            "trials: 2\n"
            "assert:\n  - file_contains: {path: seen.txt, pattern: hello}\n"
        )
        results = tmp_path / name / "results"
        done = subprocess.run(
            [str(TRIALBOOK), "eval", str(evals), "--unsafe-local", "--results-dir", str(results)],
            cwd=tmp_path / name,  # each run its own history: the second eval of the same id is no cache hit
            env={**os.environ, "TMPDIR": str(tmpdir)},
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        assert done.returncode == 0, done.stdout + done.stderr
        suite = json.loads((results / "suite.json").read_text())
        (test,) = suite["tests"]
        expected = "reflink" if name == "xfs" else ("reflink" if _reflinks_work(tmp_path) else "copy")
        sandbox = {"copy": expected, "isolation": "none", "network": "host"}
        assert test["properties"]["sandbox"] == sandbox, name
        assert not list(tmpdir.iterdir()), "a sandbox was left behind"
