"""What the real-CLI tests of this folder share."""

from __future__ import annotations

import pytest

MODEL_CREDENTIALS = ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "CODEX_API_KEY", "OPENAI_API_KEY")


@pytest.fixture
def no_model_credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    """The runner's own model credentials are out of the test's environment: only the eval's reach a CLI."""
    for name in MODEL_CREDENTIALS:
        monkeypatch.delenv(name, raising=False)
