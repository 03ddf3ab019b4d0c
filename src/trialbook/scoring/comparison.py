"""With/without arms: does an instruction file or skill change how often the agent passes (pure)?

An eval with ``compare:`` runs twice per agent: the ``with`` arm as declared, the ``without`` arm with the
compared instruction files and skills removed and everything else the same. The effect of the inputs is
exactly the difference between the two pass rates, and :func:`~trialbook.scoring.stats.fisher_two_sided` says
whether that difference is more than chance. The verdict is one of three words, decided at a documented
level (:data:`COMPARE_ALPHA`), and only ever reported: the ``pass_rate`` of the ``with`` arm decides the
eval, never the comparison.

Whether the inputs reached the model is a separate count (``loaded``): a "no significant difference"
from an arm whose instruction never loaded says nothing about the instruction. Trials where no audit ran
are unknown, never counted as loaded.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from ..evidence import JsonObject, JsonValue
from .stats import COMPARE_ALPHA, fisher_two_sided, smallest_two_sided_p

__all__ = [
    "ARMS",
    "COMPARE_ALPHA",
    "COMPARISON_TEST_NAME",
    "Arm",
    "ComparedPair",
    "Comparison",
    "Effect",
    "PairwiseJudged",
    "format_p_value",
    "loaded_counts",
]

Arm = Literal["with", "without"]
ARMS: tuple[Arm, ...] = ("with", "without")

Effect = Literal["helps", "hurts", "no significant difference"]

COMPARISON_TEST_NAME = "two-sided Fisher exact test"


def format_p_value(p: float) -> str:
    """``p = 0.0198`` (three significant digits), or ``p < 0.001`` below that."""
    if p < 0.001:
        return "p < 0.001"
    return f"p = {p:.3g}"


def loaded_counts(trials: Sequence[bool | None]) -> tuple[int, int]:
    """How many trials loaded every compared input, and how many are unknown (no audit said).

    ``trials`` holds, per trial of the ``with`` arm, ``True`` when every compared input reached the model,
    ``False`` when one did not, ``None`` when that was not observed.
    """
    loaded = sum(1 for value in trials if value is True)
    unknown = sum(1 for value in trials if value is None)
    return loaded, unknown


@dataclass(frozen=True)
class PairwiseJudged:
    """What pairwise judges made of a compared pair: one decision per judge, trial index and judge check.

    Each decision asked one judge both orders of the two arms' material; a preference that flipped with
    the order is a tie, an unusable answer in either order an error (never a preference).
    ``judge_cost_usd`` is what the pairwise requests cost, ``None`` when some of it is unknown.
    """

    with_preferred: int
    without_preferred: int
    ties: int
    errors: int
    judge_calls: int
    judge_cost_usd: float | None

    def text(self) -> str:
        """``judges: with preferred 2, without preferred 0, 1 tie, 0 errors``."""
        ties = f"{self.ties} tie" + ("" if self.ties == 1 else "s")
        errors = f"{self.errors} error" + ("" if self.errors == 1 else "s")
        return (
            f"judges: with preferred {self.with_preferred}, without preferred {self.without_preferred}, "
            f"{ties}, {errors}"
        )

    def to_json(self) -> JsonObject:
        """The counts and cost, as ``pairwise`` of a comparison in ``suite.json`` and the manifest."""
        return {
            "with_preferred": self.with_preferred,
            "without_preferred": self.without_preferred,
            "ties": self.ties,
            "errors": self.errors,
            "judge_calls": self.judge_calls,
            "judge_cost_usd": self.judge_cost_usd,
        }

    @classmethod
    def from_json(cls, value: JsonValue) -> PairwiseJudged | None:
        """Read back :meth:`to_json`; ``None`` when it is not one."""
        if not isinstance(value, dict):
            return None
        cost = value.get("judge_cost_usd")
        try:
            counts = [
                _count(value.get(name))
                for name in ("with_preferred", "without_preferred", "ties", "errors", "judge_calls")
            ]
        except ValueError:
            return None
        known = isinstance(cost, int | float) and not isinstance(cost, bool)
        with_preferred, without_preferred, ties, errors, calls = counts
        usd = float(cost) if known and isinstance(cost, int | float) else None
        return cls(with_preferred, without_preferred, ties, errors, calls, usd)


@dataclass(frozen=True, kw_only=True)
class Comparison:
    """The two arms of one eval × agent and the test of their difference.

    Attributes:
        with_passed: trials of the ``with`` arm that passed.
        with_trials: trials of the ``with`` arm that finished.
        without_passed: the same for the ``without`` arm.
        without_trials: the same for the ``without`` arm.
        dropped: the instruction files and skills the ``without`` arm leaves out, as declared.
        loaded: trials of the ``with`` arm in which every dropped input reached the model; ``None`` when
            the count is not known for any trial.
        loaded_unknown: trials of the ``with`` arm for which loading was not observed.
        alpha: the level the effect is decided at.
        pairwise: what ``pairwise: true`` judges preferred; ``None`` when none compared the arms.
    """

    with_passed: int
    with_trials: int
    without_passed: int
    without_trials: int
    dropped: tuple[str, ...] = ()
    loaded: int | None = None
    loaded_unknown: int = 0
    alpha: float = COMPARE_ALPHA
    test: str = field(default=COMPARISON_TEST_NAME)
    pairwise: PairwiseJudged | None = None

    def __post_init__(self) -> None:
        if not 0 < self.alpha < 1:
            raise ValueError(f"alpha must be between 0 and 1, got {self.alpha}")
        for arm, passed, trials in (
            ("with", self.with_passed, self.with_trials),
            ("without", self.without_passed, self.without_trials),
        ):
            if not 0 <= passed <= trials:
                raise ValueError(f"{arm} arm: need 0 <= passed <= trials, got {passed}/{trials}")
        if self.loaded is not None and not 0 <= self.loaded + self.loaded_unknown <= self.with_trials:
            raise ValueError(
                f"loaded {self.loaded} + unknown {self.loaded_unknown} > {self.with_trials} trials"
            )

    @property
    def p_value(self) -> float:
        """Two-sided exact p-value of the difference in pass rate between the arms."""
        return float(
            fisher_two_sided(self.with_passed, self.with_trials, self.without_passed, self.without_trials)
        )

    @property
    def effect(self) -> Effect:
        """``helps`` or ``hurts`` when the difference is significant at ``alpha``, in its direction."""
        if self.with_trials == 0 or self.without_trials == 0 or self.p_value > self.alpha:
            return "no significant difference"
        # Compare the rates without dividing: a/b > c/d  <=>  a*d > c*b for positive b, d.
        ahead = self.with_passed * self.without_trials - self.without_passed * self.with_trials
        return "helps" if ahead > 0 else "hurts"

    @property
    def decidable(self) -> bool:
        """Whether these trial counts could show a significant difference at ``alpha`` at all."""
        if self.with_trials == 0 or self.without_trials == 0:
            return False
        return float(smallest_two_sided_p(self.with_trials, self.without_trials)) <= self.alpha

    def loaded_text(self) -> str:
        """``loaded 10/10``, ``loaded 7/10, 3 unknown``, ``loaded ?/10`` (no trial's loading known)."""
        if self.loaded is None or self.loaded_unknown >= self.with_trials:
            return f"loaded ?/{self.with_trials}"
        unknown = f", {self.loaded_unknown} unknown" if self.loaded_unknown else ""
        return f"loaded {self.loaded}/{self.with_trials}{unknown}"

    def text(self) -> str:
        """``with 9/10 (loaded 10/10) · without 3/10 · helps, p = 0.0198``."""
        line = (
            f"with {self.with_passed}/{self.with_trials} ({self.loaded_text()}) · "
            f"without {self.without_passed}/{self.without_trials} · {self.effect}"
        )
        if self.with_trials and self.without_trials:
            line += f", {format_p_value(self.p_value)}"
        if not self.decidable:
            line += f" (too few trials to reach p ≤ {self.alpha:g})"
        if self.pairwise is not None:
            line += f" · {self.pairwise.text()}"
        return line

    def to_json(self) -> JsonObject:
        """The comparison for ``suite.json``, the run manifest and ``--json`` (docs/instructions.md)."""
        known = self.with_trials and self.without_trials
        return {
            "with": {"passed": self.with_passed, "trials": self.with_trials},
            "without": {"passed": self.without_passed, "trials": self.without_trials},
            "dropped": list(self.dropped),
            "loaded": self.loaded,
            "loaded_unknown": self.loaded_unknown,
            "test": self.test,
            "p_value": self.p_value if known else None,
            "alpha": self.alpha,
            "effect": self.effect,
            "decidable": self.decidable,
            "pairwise": None if self.pairwise is None else self.pairwise.to_json(),
            "text": self.text(),
        }

    @classmethod
    def from_json(cls, value: Mapping[str, JsonValue]) -> Comparison | None:
        """Read back :meth:`to_json` (a saved run folder); ``None`` when it is not one."""
        with_arm, without_arm = value.get("with"), value.get("without")
        dropped, loaded, alpha = value.get("dropped", []), value.get("loaded"), value.get("alpha")
        if not (isinstance(with_arm, dict) and isinstance(without_arm, dict) and isinstance(dropped, list)):
            return None
        if not isinstance(alpha, int | float) or isinstance(alpha, bool):
            return None
        try:
            return cls(
                with_passed=_count(with_arm.get("passed")),
                with_trials=_count(with_arm.get("trials")),
                without_passed=_count(without_arm.get("passed")),
                without_trials=_count(without_arm.get("trials")),
                dropped=tuple(str(name) for name in dropped),
                loaded=None if loaded is None else _count(loaded),
                loaded_unknown=_count(value.get("loaded_unknown", 0)),
                alpha=float(alpha),
                pairwise=PairwiseJudged.from_json(value.get("pairwise")),
            )
        except ValueError:
            return None


def _count(value: JsonValue | None) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise ValueError(f"expected a count, got {value!r}")
    return value


@dataclass(frozen=True)
class ComparedPair:
    """One compared eval × agent: the eval's id, the ``with`` arm's agent label, and the comparison."""

    eval_id: str
    agent: str
    comparison: Comparison

    def to_json(self) -> JsonObject:
        """``{"id", "agent", **comparison}``, as the run manifest and ``--json`` list it."""
        return {"id": self.eval_id, "agent": self.agent, **self.comparison.to_json()}

    @classmethod
    def from_json(cls, value: Mapping[str, JsonValue]) -> ComparedPair | None:
        """Read back :meth:`to_json`; ``None`` when it is not one."""
        eval_id, agent = value.get("id"), value.get("agent")
        comparison = Comparison.from_json(value)
        if not isinstance(eval_id, str) or not isinstance(agent, str) or comparison is None:
            return None
        return cls(eval_id, agent, comparison)
