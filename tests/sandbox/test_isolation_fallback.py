"""Where user namespaces are off but bubblewrap runs (as root), trials are isolated without ``_inside``."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.system import ensure
from trialbook.sandbox import _isolation
from trialbook.sandbox._covers import ShimCover


@pytest.fixture
def no_user_namespaces(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    real = ensure("bubblewrap")
    fake = tmp_path / "bwrap"
    fake.write_text(
        '#!/bin/sh\nfor a; do if [ "$a" = --unshare-user ]; then\n'
        "  echo 'bwrap: No permissions to create new namespace' >&2; exit 1\nfi; done\n"
        f'exec {real} "$@"\n'
    )
    fake.chmod(0o755)
    monkeypatch.setattr(_isolation, "find_bwrap", lambda: str(fake))
    _isolation.inside_python.cache_clear()
    yield
    _isolation.inside_python.cache_clear()


def test_without_user_namespaces_the_trial_runs_isolated_with_its_covers_and_no_first_process(
    tmp_path: Path, no_user_namespaces: None
) -> None:
    assert _isolation.inside_python() is None
    root = tmp_path / "trial"
    for name in ("work", "home", "tmp", "shims"):
        (root / name).mkdir(parents=True)
    shim = root / "shims/uname"
    shim.write_text("#!/bin/sh\necho shimmed\n")
    shim.chmod(0o755)
    cover = ShimCover(shim, (Path("/usr/bin/uname").resolve(),))
    isolation = _isolation.Isolation(root=root, network="none", shims=(cover,))
    argv = isolation.wrap(
        ["sh", "-c", "/usr/bin/uname; echo x > /etc/x 2>/dev/null || echo read-only"], root, {}
    )
    assert "--unshare-user" not in argv and "-c" in argv and argv[argv.index("--") + 1] == "sh"
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60, check=True)
    assert done.stdout.split() == ["shimmed", "read-only"]  # covered, and no layer over /etc
    assert isolation.network_refused() is None  # no watch without _inside: unknown, not "none refused"
