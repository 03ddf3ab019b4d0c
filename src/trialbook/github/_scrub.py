"""Keep GitHub tokens out of the process tree that runs agents.

An agent runs as the same user as trialbook, so it can read ``/proc/<pid>/environ`` of trialbook and of
every ancestor it shares a user with. Leaving a token out of the agents' own environment is therefore not
enough: the process that starts them must not carry one either. ``trialbook ci --stage run`` replaces
itself (``execve``) with a copy of itself whose environment lacks every variable below, before it reads an
eval file; the action ``exec``s it, so no shell above it keeps the original environment.

What is removed: the names GitHub, the GitHub CLI and trialbook use for tokens, Actions' runtime and
OIDC request tokens, and every ``INPUT_*`` variable (a composite action's inputs, which some runners
export, including the ``github-token`` input). ``COPILOT_GITHUB_TOKEN`` stays: it is the ``copilot``
agent's own credential. An eval that wants a GitHub token of its own declares it under another name.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping, Sequence

__all__ = ["SCRUBBED", "TOKEN_NAMES", "scrubbed", "token_variables"]

TOKEN_NAMES = frozenset(
    {
        "GITHUB_TOKEN",
        "GH_TOKEN",
        "GH_ENTERPRISE_TOKEN",
        "GITHUB_ENTERPRISE_TOKEN",
        "TRIALBOOK_GITHUB_TOKEN",
        "ACTIONS_RUNTIME_TOKEN",
        "ACTIONS_ID_TOKEN_REQUEST_TOKEN",
        "ACTIONS_ID_TOKEN_REQUEST_URL",
    }
)
SCRUBBED = "TRIALBOOK_TOKENS_SCRUBBED"
"""Set in the re-executed process, so it never tries again (and tests can see it happened)."""


def token_variables(environ: Mapping[str, str]) -> list[str]:
    """The names in ``environ`` that must not reach a process that runs agents (pure)."""
    return sorted(name for name in environ if name in TOKEN_NAMES or name.startswith("INPUT_"))


def scrubbed(environ: Mapping[str, str]) -> dict[str, str]:
    """``environ`` without :func:`token_variables`, marked as scrubbed (pure)."""
    removed = set(token_variables(environ))
    env = {name: value for name, value in environ.items() if name not in removed}
    env[SCRUBBED] = "1"
    return env


def reexec_without_tokens(argv: Sequence[str]) -> None:
    """Replace this process with ``python -m trialbook <argv>`` minus the token variables.

    Returns only when there is nothing to remove (or it was done already).
    """
    if os.environ.get(SCRUBBED) or not token_variables(os.environ):
        return
    sys.stdout.flush()
    sys.stderr.flush()
    os.execve(sys.executable, [sys.executable, "-m", "trialbook", *argv], scrubbed(os.environ))
