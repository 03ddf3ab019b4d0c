"""The eval-file and assertion references document every key and kind the loader reads."""

from pathlib import Path

import pytest

from trialbook.evalfiles._read import READERS
from trialbook.evalfiles._read_assertions import ASSERTION_READERS

DOCS = Path(__file__).resolve().parents[2] / "docs"


@pytest.mark.parametrize("key", sorted(READERS))
def test_every_eval_file_key_has_a_row(key: str) -> None:
    assert f"| `{key}` |" in (DOCS / "eval-files.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("kind", sorted(ASSERTION_READERS))
def test_every_assertion_has_a_row(kind: str) -> None:
    assert f"| `{kind}` | `- {kind}: " in (DOCS / "assertions.md").read_text(encoding="utf-8")
