"""Check that the version, CHANGELOG.md and the docs' pinned examples agree (run by .ci/run).

The version lives in one place (``src/trialbook/__init__.py``). CHANGELOG.md must have an
``## Unreleased`` section or one for that version, and every ``uses: OWNER/trialbook@<sha> # vX.Y.Z``
comment in the docs must name it, since the docs tell users to pin the action that way
(docs/releasing.md). Exit code 1 with one line per disagreement.

With ``--tag vX.Y.Z`` (the release workflow, before it publishes) the tag must name that version and the
changelog must have its section: a tag pushed without the release commit never reaches PyPI.

    python scripts/check_release.py [--tag vX.Y.Z] [ROOT]
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

_VERSION = re.compile(r'^__version__ = "(?P<version>\d+\.\d+\.\d+)"$', re.MULTILINE)
_PIN = re.compile(r"trialbook@[^\n#`]+# v(?P<version>\d+\.\d+\.\d+)")
_SECTION = re.compile(r"^## (?P<name>Unreleased|\d+\.\d+\.\d+)\b", re.MULTILINE)


def problems(root: Path, tag: str | None = None) -> list[str]:
    """Every disagreement between the version, the changelog, the docs under ``root`` and ``tag``."""
    found = _VERSION.search((root / "src/trialbook/__init__.py").read_text(encoding="utf-8"))
    if found is None:
        return ['src/trialbook/__init__.py: no __version__ = "X.Y.Z" line']
    version = found["version"]
    errors = []
    sections = [m["name"] for m in _SECTION.finditer((root / "CHANGELOG.md").read_text(encoding="utf-8"))]
    if not sections or sections[0] not in ("Unreleased", version):
        first = sections[0] if sections else "none"
        errors.append(f"CHANGELOG.md: the first section is {first}; expected Unreleased or {version}")
    if tag is not None:
        if tag != f"v{version}":
            errors.append(f"the tag {tag} does not name the version {version} (expected v{version})")
        if version not in sections:
            errors.append(f"CHANGELOG.md: no ## {version} section for the release")
    for path in sorted([root / "README.md", *(root / "docs").rglob("*.md")]):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            for pin in _PIN.finditer(line):
                if pin["version"] != version:
                    rel = path.relative_to(root)
                    errors.append(f"{rel}:{number}: pins v{pin['version']}, but the version is {version}")
    return errors


def main() -> int:
    """Print every disagreement (or that there is none); exit code 1 when there is one."""
    args = sys.argv[1:]
    tag = None
    if args[:1] == ["--tag"] and len(args) >= 2:
        tag, args = args[1], args[2:]
    root = Path(args[0]) if args else Path(__file__).resolve().parents[1]
    errors = problems(root, tag)
    for error in errors:
        print(error)
    if not errors:
        print("release: version, CHANGELOG.md and the docs' pins agree")
    return 1 if errors else 0


if __name__ == "__main__":
    raise SystemExit(main())
