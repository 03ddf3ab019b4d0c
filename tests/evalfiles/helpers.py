"""Writing eval files into a temporary project and reading back what the loader says about them."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from trialbook.errors import ConfigError
from trialbook.evalfiles import EvalSpec, load_evals

KNOWN_AGENTS = frozenset({"literal", "copilot", "claude-code", "codex"})


def write(root: Path, relative: str, text: str) -> Path:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return path


def load(*paths: Path | str) -> list[EvalSpec]:
    return load_evals([Path(p) for p in paths], known_agents=KNOWN_AGENTS)


def problems(*paths: Path | str) -> list[str]:
    with pytest.raises(ConfigError) as caught:
        load(*paths)
    assert str(caught.value) == "\n".join(caught.value.problems)
    return caught.value.problems
