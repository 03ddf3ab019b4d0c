"""An eval as the runner sees it after loading: every path absolute, every value checked."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from ..agents import AgentSpec
from ..assertions import Assertion
from ..sandbox import DEFAULT_OUTPUT_LIMIT
from ._compare import CompareSpec
from ._inputs import InstructionFile, SkillFolder
from ._triggers import TriggerOf, TriggerSpec

__all__ = ["DEFAULT_TIMEOUT_S", "EvalSpec", "ShimSpec"]

DEFAULT_TIMEOUT_S = 600.0
"""Ten minutes per trial: enough for an agent to set up a project, short enough to notice a hang."""


@dataclass(frozen=True)
class ShimSpec:
    """A binary put first on the sandbox's ``PATH`` so every call of it is recorded.

    ``passthrough`` then runs the real binary; ``stub`` runs ``script`` instead (a shell snippet), or
    nothing, exiting 0, when ``script`` is ``None``.
    """

    name: str
    mode: Literal["stub", "passthrough"]
    script: str | None = None


@dataclass(frozen=True, kw_only=True)
class EvalSpec:
    """One loaded eval file entry.

    ``prompt_template`` is the prompt before rendering (placeholders intact): rendering needs secrets from
    the environment, which exist only at run time. ``lines`` maps field paths (``secrets.NEON_API_KEY``,
    ``timeout``) to the line they were written on, so run-time problems can still point at the file.
    """

    id: str
    source: Path
    prompt_template: str
    prompt_path: Path | None = None
    params: Mapping[str, str] = field(default_factory=dict)
    secrets: tuple[str, ...] = ()
    agents: tuple[AgentSpec, ...] = ()
    trials: int = 1
    pass_rate: float = 1.0
    min_trials: int | None = None
    negative_control: bool = True
    template: Path | None = None
    template_exclude: tuple[str, ...] = ()
    isolation: str = "none"
    """``sandbox.isolation``: ``none``, ``bwrap`` or ``auto`` (bwrap where it works); docs/isolation.md."""
    network: str | None = None
    """``sandbox.network`` under isolation: ``host`` (as the runner), ``model`` (only the agent's model
    endpoints) or ``none`` (nothing); ``None`` for the agent's own default (``none`` for the literal and
    script agents, ``host`` for the agent CLIs)."""
    shims: tuple[ShimSpec, ...] = ()
    instructions: tuple[InstructionFile, ...] = ()
    skills: tuple[SkillFolder, ...] = ()
    compare: CompareSpec | None = None
    """With/without arms (``compare:``): names already checked against ``instructions`` and ``skills``."""
    triggers: TriggerSpec | None = None
    """A trigger eval's skill and labelled queries, before loading expands it into one eval per query."""
    trigger: TriggerOf | None = None
    """For one query of a trigger eval: the group it belongs to and its label (``None`` otherwise)."""
    assertions: tuple[Assertion, ...] = ()
    max_cost_usd: float | None = None
    timeout_s: float = DEFAULT_TIMEOUT_S
    output_limit: int = DEFAULT_OUTPUT_LIMIT
    """Bytes kept of each stream a trial captures (``limits.output``)."""
    checks_timeout_s: float | None = None
    """``limits.checks`` as written; :attr:`check_deadline_s` gives the one in force."""
    evals_root: Path
    lines: Mapping[str, int] = field(default_factory=dict, compare=False, repr=False)

    @property
    def check_deadline_s(self) -> float:
        """Seconds the trial's checks may take together (``limits.checks``, or the default)."""
        from ._limits import check_deadline

        # A judge's requests are bounded like a command: the panel's longest wait counts the same way.
        timeouts = [
            float(getattr(a, "timeout_s", 0.0)) for a in self.assertions if a.kind in ("succeeds", "judge")
        ]
        return check_deadline(self.checks_timeout_s, timeouts)

    def line_of(self, field_path: str) -> int:
        """The line ``field_path`` (or its closest written parent) is on; 1 when it was not written."""
        path = field_path
        while path:
            if path in self.lines:
                return self.lines[path]
            path = path.rpartition(".")[0]
        return 1
