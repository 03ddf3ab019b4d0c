"""Background sandbox removal: all gone once ``close`` returns, the queue is bounded, errors surface."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Literal

import pytest

from trialbook.sandbox import Sandbox, create_sandbox
from trialbook.sandbox._remover import SandboxRemover


def _sandbox(root: Path, files: int = 0) -> Sandbox:
    box = create_sandbox(root=root, template=None, shims=(), secrets={}, extra_env={})
    for n in range(files):
        folder = box.workdir / f"d{n % 7}"
        folder.mkdir(exist_ok=True)
        (folder / f"f{n}").write_text("x" * 100)
    (box.home / ".cache" / "ro").mkdir(parents=True)
    (box.home / ".cache" / "ro").chmod(0o500)  # read-only, as Go's module cache leaves it
    return box


class _Blocked(Sandbox):
    """A sandbox whose removal waits for ``gate``: a disk slower than any queue."""

    gate = threading.Event()

    def close(self, keep: bool = False) -> Path | None:
        assert self.gate.wait(30)
        return super().close(keep)


class _Broken(Sandbox):
    def close(self, keep: bool = False) -> Path | None:
        super().close(keep)
        raise OSError(5, "Input/output error", str(self.path))


def test_close_returns_only_once_every_queued_folder_is_gone(tmp_path: Path) -> None:
    boxes = [_sandbox(tmp_path / "trials", files=60) for _ in range(24)]
    remover = SandboxRemover(limit=4)
    # Queued from several threads at once, as finishing trials do.
    with ThreadPoolExecutor(6) as pool:
        list(pool.map(remover.remove, boxes))
    remover.close()
    assert list((tmp_path / "trials").iterdir()) == []


def test_a_full_queue_makes_the_next_trial_wait(tmp_path: Path) -> None:
    _Blocked.gate.clear()
    boxes = []
    for _ in range(3):
        box = _sandbox(tmp_path / "trials")
        box.__class__ = _Blocked
        boxes.append(box)
    remover = SandboxRemover(limit=2, workers=1)
    remover.remove(boxes[0])
    remover.remove(boxes[1])
    third = threading.Thread(target=remover.remove, args=(boxes[2],))
    third.start()
    third.join(0.5)
    assert third.is_alive(), "a third folder was queued past the limit of two"
    _Blocked.gate.set()
    third.join(30)
    assert not third.is_alive()
    remover.close()
    assert list((tmp_path / "trials").iterdir()) == []


def test_a_failed_removal_is_returned_by_close_and_the_others_still_go(tmp_path: Path) -> None:
    broken = _sandbox(tmp_path / "trials")
    broken.__class__ = _Broken
    fine = [_sandbox(tmp_path / "trials", files=10) for _ in range(3)]
    remover = SandboxRemover(limit=8)
    remover.remove(fine[0])
    remover.remove(broken)
    remover.remove(fine[1])
    remover.remove(fine[2])
    (problem,) = remover.close()
    assert str(broken.path) in problem
    assert "Input/output error" in problem
    assert list((tmp_path / "trials").iterdir()) == []


def test_after_close_a_sandbox_is_removed_at_once(tmp_path: Path) -> None:
    remover = SandboxRemover(limit=1)
    remover.close()
    box = _sandbox(tmp_path / "trials", files=5)
    remover.remove(box)
    assert not box.path.exists()


def test_removal_never_reaches_through_a_link_put_in_place_of_home_or_tmp(tmp_path: Path) -> None:
    """An agent swaps HOME and TMPDIR for links to folders outside: only the links go, not their files."""
    outside = tmp_path / "outside"
    (outside / "keep").mkdir(parents=True)
    (outside / "keep" / "file").write_text("precious")
    box = create_sandbox(root=tmp_path / "trials", template=None, shims=(), secrets={}, extra_env={})
    box.home.rmdir()
    box.home.symlink_to(outside / "keep")
    box.tmp.rmdir()
    box.tmp.symlink_to(outside)
    (box.workdir / "out.txt").write_text("ok")
    box.close()
    assert not box.path.exists()
    assert (outside / "keep" / "file").read_text() == "precious"


def test_a_home_with_files_is_removed_whole(tmp_path: Path) -> None:
    box = _sandbox(tmp_path / "trials", files=3)  # a read-only folder in HOME, files in work/
    (box.tmp / "t").write_text("x")
    box.close()
    assert list((tmp_path / "trials").iterdir()) == []


def test_a_failed_removal_is_returned_by_close_not_raised(tmp_path: Path) -> None:
    broken = _sandbox(tmp_path / "trials")
    broken.__class__ = _Broken
    remover = SandboxRemover(limit=4)
    remover.remove(broken)  # the trial that handed it over goes on
    (problem,) = remover.close()
    assert str(broken.path) in problem and "Input/output error" in problem


@pytest.mark.parametrize("copy", [None, "copy"])
def test_a_removal_goes_to_the_background(tmp_path: Path, copy: Literal["copy"] | None) -> None:
    """The trial that hands its folder over goes on; the removal happens on the remover's thread."""
    _Blocked.gate.clear()
    box = _sandbox(tmp_path / "trials")
    box.__class__ = _Blocked
    box.copy = copy
    remover = SandboxRemover(limit=2, workers=1)
    remover.remove(box)  # returns while the removal waits for the gate: it is not done here
    assert box.path.exists()
    _Blocked.gate.set()
    assert remover.close() == []
    assert not box.path.exists()
