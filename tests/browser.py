"""Debian's chromium for the viewer tests, installed with apt-get on first use (see tests.system).

Playwright drives it through ``executable_path``; Playwright's own browser download is never used.
"""

from __future__ import annotations

from pathlib import Path

from tests.system import ensure


def ensure_chromium() -> Path:
    """The path of Debian's chromium, installing the package once if it is missing."""
    return ensure("chromium")


if __name__ == "__main__":
    print(f"chromium: {ensure_chromium()}")
