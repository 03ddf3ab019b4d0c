"""The runner variables each agent CLI is handed, in a module that imports nothing of the adapters.

The run's masker needs these names before any trial starts, for every run; importing the adapters to
read them (the Claude Code and Codex modules with their stream parsers and audit proxy, the Copilot
package with its SDK) cost more than a whole script-agent trial.
"""

from __future__ import annotations

from ._copilot_names import TOKEN_VARIABLES as COPILOT_VARIABLES

__all__ = ["CLAUDE_PASSTHROUGH", "CODEX_PASSTHROUGH", "COPILOT_VARIABLES"]

CLAUDE_PASSTHROUGH = ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL")
"""The runner's variables the Claude Code CLI gets."""
CODEX_PASSTHROUGH = ("CODEX_API_KEY", "OPENAI_API_KEY")
"""The runner's variables the Codex CLI gets."""
