"""The ``judge`` assertion: a panel of models grades what files and commands cannot show.

The assertion is pure: it builds the text each judge is shown from the finished trial and decides from
the answers, but it asks no model itself. Answers come through :class:`JudgeAsker`, which the runner
implements at its edge (masking, HTTP, the cache, the evidence of every call). A trial checked without
one (a negative control, a Python test) records an error: a judge that was never asked never passes.

Calibration comes first: the panel grades the ``judge_examples`` (labelled texts) and, if it grades
any of them wrong, its verdict on the trial does not count. The record then carries
:data:`UNCALIBRATED`, which makes the eval ``judge_uncalibrated`` instead of pass or fail.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar, Literal, Protocol

from ..evidence import AssertionRecord, JsonObject, JsonValue
from ._base import exit_text, make_label
from ._panel import Answer, PanelVerdict, Rule, calibration_misses, panel_verdict
from ._trial import FinishedTrial

__all__ = [
    "ASK_TIMEOUT_S",
    "PROVIDERS",
    "SHOW_ITEMS",
    "UNCALIBRATED",
    "Example",
    "Judge",
    "JudgeAsker",
    "JudgeRef",
    "is_uncalibrated",
]

PROVIDERS = ("anthropic", "openai")
"""The chat APIs a judge is asked through: Anthropic Messages and OpenAI Chat Completions."""

SHOW_ITEMS = ("final_message", "command_log", "diff")
"""What a judge may be shown besides named files (``{file: PATH}``)."""

UNCALIBRATED = "judge_uncalibrated"
"""Starts the ``error`` of a judge record whose panel missed a calibration example."""

ASK_TIMEOUT_S = 120.0
"""A judge that has not answered by then is that judge's error, never a pass."""

MAX_REASON_SHOWN = 300
"""Characters of each judge's reason the record's ``actual`` keeps; the evidence keeps more."""


@dataclass(frozen=True)
class JudgeRef:
    """One judge as the eval file names it.

    ``base_url`` and ``api_key`` are ``None`` when the provider's environment variables give them
    (``ANTHROPIC_BASE_URL``/``ANTHROPIC_API_KEY``, ``OPENAI_BASE_URL``/``OPENAI_API_KEY``), as for the
    agents. ``api_key`` is kept as written (``{{ secrets.NAME }}``): its value is filled in at the edge.
    """

    provider: str
    model: str
    base_url: str | None = None
    api_key: str | None = None

    @property
    def name(self) -> str:
        """How reports and evidence name the judge: ``anthropic:claude-sonnet-4-5``."""
        return f"{self.provider}:{self.model}"

    def to_json(self) -> JsonObject:
        """What decides the judge's answers; the key itself never (only whether one is written)."""
        return {
            "provider": self.provider,
            "model": self.model,
            "base_url": self.base_url,
            "api_key": None if self.api_key is None else "written",
        }


@dataclass(frozen=True)
class Example:
    """A labelled calibration case: a text the panel must grade as ``verdict``."""

    text: str
    verdict: Literal["pass", "fail"]


class JudgeAsker(Protocol):
    """The runner's side of a judge assertion: asking models and what only the runner knows."""

    def ask(self, judge: JudgeRef, rubric: str, shown: str) -> Answer:
        """One judge's parsed answer on ``shown`` (an error :class:`Answer` when it gave none)."""
        ...

    def diff(self) -> str | None:
        """The agent's changes as unified diffs, already masked; ``None`` when they are not known."""
        ...


def is_uncalibrated(record: AssertionRecord) -> bool:
    """Whether ``record`` is a judge assertion whose panel failed its calibration examples."""
    return record.kind == Judge.kind and (record.error or "").startswith(UNCALIBRATED)


@dataclass(frozen=True)
class Judge:
    """A panel of ``judges`` grades the trial against ``rubric`` from what ``show`` names.

    ``show`` holds ``final_message``, ``command_log``, ``diff`` and ``file:PATH`` items, in the order
    the judges see them. ``rubric_file`` is the file the rubric was read from, as written (for the label).
    With ``pairwise`` the trial is still graded on its own; the runner also keeps what ``show`` shows
    and, once both arms finished, has each judge compare the arms' material (see docs/judges.md).
    """

    rubric: str
    judges: tuple[JudgeRef, ...]
    show: tuple[str, ...] = ("final_message",)
    rule: Rule = "majority"
    examples: tuple[Example, ...] = ()
    rubric_file: str | None = None
    pairwise: bool = False
    """Also compare the ``with`` and ``without`` arms of a ``compare:`` eval trial by trial (reported)."""
    kind: ClassVar[str] = "judge"

    @property
    def timeout_s(self) -> float:
        """The longest the panel can take: every judge on every example and on the trial, one at a time."""
        return ASK_TIMEOUT_S * len(self.judges) * (len(self.examples) + 1)

    @property
    def label(self) -> str:
        """``judge "<rubric's first line>"``, or ``judge "<rubric file>"``."""
        if self.rubric_file is not None:
            return make_label(self.kind, self.rubric_file)
        first = self.rubric.strip().splitlines()[0] if self.rubric.strip() else ""
        return make_label(self.kind, first if len(first) <= 60 else first[:57] + "...")

    def check(self, trial: FinishedTrial) -> AssertionRecord:
        """Without a way to ask the judges there is no verdict: an error, never a pass."""
        return AssertionRecord(
            self.kind, self.label, False, self._expected(), "no judge was asked",
            error="this check needs the runner's judges (trialbook eval); it cannot run here",
        )  # fmt: skip

    def judge(self, trial: FinishedTrial, asker: JudgeAsker) -> AssertionRecord:
        """Calibrate the panel on the examples, then have it grade the trial."""
        missed = self.calibrate(asker)
        if missed:
            actual = "the panel graded calibration examples wrong, so its verdict does not count: " + missed
            return AssertionRecord(
                self.kind, self.label, False, self._expected(), actual, error=f"{UNCALIBRATED}: {missed}"
            )
        shown = self.shown(trial, asker)
        answers = [asker.ask(judge, self.rubric, shown) for judge in self.judges]
        verdict = panel_verdict(answers, self.rule)
        actual = f"the panel said {verdict} ({self.rule}):\n" + self._answers_text(answers)
        error = None
        if verdict == "error":
            error = "judges in error kept the panel from a verdict: " + "; ".join(
                f"{judge.name}: {answer.error}"
                for judge, answer in zip(self.judges, answers, strict=True)
                if answer.error is not None
            )
        return AssertionRecord(self.kind, self.label, verdict == "pass", self._expected(), actual, error)

    def calibrate(self, asker: JudgeAsker) -> str:
        """What the panel got wrong on the labelled examples, one clause each; empty: none."""
        if not self.examples:
            return ""
        decided: list[PanelVerdict] = []
        for example in self.examples:
            answers = [asker.ask(judge, self.rubric, example.text) for judge in self.judges]
            decided.append(panel_verdict(answers, self.rule))
        misses = calibration_misses([example.verdict for example in self.examples], decided)
        return "; ".join(
            f"example {index + 1}: labelled {self.examples[index].verdict}, the panel said {decided[index]}"
            for index in misses
        )

    def shown(self, trial: FinishedTrial, asker: JudgeAsker) -> str:
        """The material the judges see, one titled section per ``show`` item (not yet masked)."""
        return "\n\n".join(self._section(item, trial, asker) for item in self.show)

    def _section(self, item: str, trial: FinishedTrial, asker: JudgeAsker) -> str:
        if item == "final_message":
            said = trial.result.final_response
            return "## The agent's final message\n" + ("(the agent said nothing)" if said is None else said)
        if item == "command_log":
            calls = trial.calls
            lines = [f"{n}. {call.line} ({exit_text(call)})" for n, call in enumerate(calls, start=1)]
            return "## Commands the agent ran (shimmed)\n" + ("\n".join(lines) or "(none recorded)")
        if item == "diff":
            diff = asker.diff()
            return "## The agent's changes\n" + ("(not known)" if diff is None else diff or "(no changes)")
        path = item.removeprefix("file:")
        text = trial.read_text(path)
        return f"## File {path}\n" + ("(no such text file)" if text is None else text)

    def _expected(self) -> str:
        names = ", ".join(judge.name for judge in self.judges)
        return f"the panel ({names}; {self.rule}) grades the trial pass against the rubric"

    def _answers_text(self, answers: Sequence[Answer]) -> str:
        lines = []
        for judge, answer in zip(self.judges, answers, strict=True):
            if answer.verdict is None:
                lines.append(f"  {judge.name}: error: {answer.error}")
            else:
                reason = answer.reason[:MAX_REASON_SHOWN]
                lines.append(f"  {judge.name}: {answer.verdict}: {reason}")
        return "\n".join(lines)

    def to_json(self) -> JsonObject:
        """Rubric text, what is shown, the judges, the rule and the examples: each can change the verdict."""
        examples: list[JsonValue] = [{"text": e.text, "verdict": e.verdict} for e in self.examples]
        return {
            "kind": self.kind,
            "rubric": self.rubric,
            "show": list(self.show),
            "judges": [judge.to_json() for judge in self.judges],
            "rule": self.rule,
            "examples": examples,
            # Only when asked: evals judged before pairwise existed keep their cache key.
            **({"pairwise": True} if self.pairwise else {}),
        }
