"""trialbook's pytest plugin: agent fixtures and a schema-4.0 evidence file for the whole session.

Registered through the ``pytest11`` entry point, so it loads in every pytest session of every project
with trialbook installed. It therefore costs nothing where it is unused: loading it adds two options and
four fixtures, and imports neither the evidence model nor any agent SDK. Recording starts only with
``--trialbook-evidence``; the hooks that need pytest-xdist are registered only when xdist is active
(see :mod:`._recorder`).
"""

from __future__ import annotations

import pytest

from ._fixtures import agent_eval, copilot_eval, loopback_api, loopback_model

__all__ = ["agent_eval", "copilot_eval", "loopback_api", "loopback_model"]


def pytest_addoption(parser: pytest.Parser) -> None:
    """Add ``--trialbook-evidence PATH`` and ``--trialbook-unsafe-local``."""
    group = parser.getgroup("trialbook")
    group.addoption(
        "--trialbook-evidence",
        metavar="PATH",
        default=None,
        help="write the session's schema-4.0 evidence (outcomes, properties, agent executions) to PATH",
    )
    group.addoption(
        "--trialbook-unsafe-local",
        action="store_true",
        default=False,
        help="let copilot_eval and agent_eval run agents outside CI (CI=true allows them anyway)",
    )


def pytest_configure(config: pytest.Config) -> None:
    """Start recording test outcomes, only when the session asked for an evidence file."""
    path = config.getoption("trialbook_evidence", default=None)
    if path is None:
        return
    from ._recorder import register

    register(config, str(path))
