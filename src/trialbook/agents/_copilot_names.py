"""The Copilot CLI's credential variables, in a module of their own so reading them loads no SDK.

The run's masker needs these names before any trial starts, for every run, Copilot or not; the Copilot
adapter package imports ``github-copilot-sdk``, whose generated modules take longer to import than a
whole script-agent trial takes to run and hold more memory than the rest of trialbook.
"""

from __future__ import annotations

__all__ = ["TOKEN_VARIABLES"]

TOKEN_VARIABLES = ("COPILOT_GITHUB_TOKEN", "GH_TOKEN", "GITHUB_TOKEN")
"""Where the CLI looks for its token, in its order; only the first comes from the runner's environment."""
