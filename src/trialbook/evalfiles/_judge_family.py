"""Which judges share a model family with the agent they grade: ``trialbook validate`` warns about them.

Judges favour work of their own model family, so a Claude model grading Claude Code (or a GPT or ``o``
model grading Codex, or Copilot on an OpenAI model) is a weaker check than a judge from another family.
The family is read from model names and agent names only: a warning, never a refusal.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from ..agents import AgentSpec
from ._model import EvalSpec
from ._problems import display_path

__all__ = ["family_of_agent", "family_of_model", "shared_family_warnings"]

_OPENAI = re.compile(r"^(gpt-|o\d|codex|chatgpt)", re.IGNORECASE)
_ANTHROPIC = re.compile(r"^(claude|anthropic[/:])", re.IGNORECASE)
_AGENT_FAMILIES = {"claude-code": "anthropic", "codex": "openai"}


def family_of_model(model: str) -> str | None:
    """``anthropic`` for ``claude-*``, ``openai`` for ``gpt-*``/``o3``-like names, else ``None``."""
    name = model.rpartition("/")[2]
    if _ANTHROPIC.match(name) or _ANTHROPIC.match(model):
        return "anthropic"
    if _OPENAI.match(name):
        return "openai"
    return None


def family_of_agent(agent: AgentSpec) -> str | None:
    """The family of the model an agent runs: its ``model`` option, else its adapter's own family."""
    model = agent.options.get("model")
    if isinstance(model, str) and (found := family_of_model(model)) is not None:
        return found
    return _AGENT_FAMILIES.get(agent.name)


def shared_family_warnings(spec: EvalSpec) -> Iterator[str]:
    """One ``file:line: field: …`` warning per judge that shares a family with one of the eval's agents."""
    from ..assertions import Judge

    for index, assertion in enumerate(spec.assertions):
        if not isinstance(assertion, Judge):
            continue
        field = f"assert[{index}].judge"
        for number, judge in enumerate(assertion.judges):
            family = family_of_model(judge.model)
            graded = [agent.name for agent in spec.agents if family and family_of_agent(agent) == family]
            if graded:
                yield (
                    f"{display_path(spec.source)}:{spec.line_of(field)}: {field}.judges[{number}]: "
                    f"judge {judge.name} is of the {family} model family, like the agent(s) it grades "
                    f"({', '.join(graded)}); judges favour their own family's work (pick a judge of "
                    "another family)"
                )
