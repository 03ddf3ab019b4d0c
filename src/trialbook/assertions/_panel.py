"""How a panel of judge models decides: strict answers, majority or unanimous, pairwise ties, calibration.

Pure functions over the judges' raw answers. Asking the models is the caller's business; here a judge's
answer is only text, and text that is not exactly the agreed JSON shape is that judge's error, never a
pass: a model that rambles, wraps its answer in prose or invents a verdict must not be counted as
approving the agent's work.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

__all__ = [
    "ANSWER_SHAPE",
    "MAX_REASON_CHARS",
    "PREFERENCE_SHAPE",
    "Answer",
    "PairwiseTally",
    "PanelVerdict",
    "Rule",
    "calibration_misses",
    "pairwise",
    "panel_verdict",
    "parse_answer",
    "parse_preference",
    "tally_pairwise",
]

Rule = Literal["majority", "unanimous"]
PanelVerdict = Literal["pass", "fail", "tie", "error"]

ANSWER_SHAPE = '{"verdict": "pass" | "fail", "reason": "<one or two sentences>"}'
"""The one JSON object every judge must answer with, as the request states it."""

PREFERENCE_SHAPE = '{"better": "first" | "second", "reason": "<one or two sentences>"}'
"""The one JSON object a judge comparing two responses must answer with."""

MAX_REASON_CHARS = 2000
"""A reason longer than this is cut when recorded: a judge's explanation, not a second transcript."""


@dataclass(frozen=True)
class Answer:
    """One judge's parsed answer: ``verdict`` is ``None`` exactly when ``error`` says why it is unusable."""

    verdict: Literal["pass", "fail"] | None
    reason: str
    error: str | None = None


def _json_body(text: str) -> str:
    """``text`` without a fenced ``json`` block around it (models add one out of habit)."""
    body = text.strip()
    if body.startswith("```") and body.endswith("```") and len(body) >= 6:
        body = body[3:-3].strip()
        if body.startswith("json"):
            body = body[4:].strip()
    return body


def parse_answer(text: str | None) -> Answer:
    """Read a judge's answer strictly: one JSON object with ``verdict`` and ``reason`` and nothing else.

    A fenced block (```json … ```) around the object is tolerated, since models add one out of habit;
    anything else around it, a missing or extra key, or a verdict other than ``pass``/``fail`` is an
    error of that judge.
    """
    if text is None:
        return Answer(None, "", "the judge returned no text")
    try:
        value = json.loads(_json_body(text))
    except ValueError:
        return Answer(None, "", f"the answer is not JSON of the shape {ANSWER_SHAPE}")
    if not isinstance(value, dict) or set(value) != {"verdict", "reason"}:
        keys = sorted(value) if isinstance(value, dict) else type(value).__name__
        return Answer(None, "", f"the answer must hold exactly verdict and reason, got {keys}")
    verdict, reason = value["verdict"], value["reason"]
    if verdict not in ("pass", "fail"):
        return Answer(None, "", f"verdict must be 'pass' or 'fail', got {verdict!r}")
    if not isinstance(reason, str):
        return Answer(None, "", f"reason must be a string, got {type(reason).__name__}")
    return Answer(verdict, reason[:MAX_REASON_CHARS])


def parse_preference(text: str | None) -> Answer:
    """Read a pairwise answer as strictly as :func:`parse_answer`: ``{"better", "reason"}`` and nothing else.

    It is returned as an :class:`Answer` whose ``pass`` means "the first response is better" and
    ``fail`` "the second is", so :func:`pairwise` decides from two of them. A missing, extra or
    misspelt key, or a ``better`` other than ``first``/``second`` (``both``, ``neither``, ``1``), is an
    error of that judge, never a preference.
    """
    if text is None:
        return Answer(None, "", "the judge returned no text")
    try:
        value = json.loads(_json_body(text))
    except ValueError:
        return Answer(None, "", f"the answer is not JSON of the shape {PREFERENCE_SHAPE}")
    if not isinstance(value, dict) or set(value) != {"better", "reason"}:
        keys = sorted(value) if isinstance(value, dict) else type(value).__name__
        return Answer(None, "", f"the answer must hold exactly better and reason, got {keys}")
    better, reason = value["better"], value["reason"]
    if better not in ("first", "second"):
        return Answer(None, "", f"better must be 'first' or 'second', got {better!r}")
    if not isinstance(reason, str):
        return Answer(None, "", f"reason must be a string, got {type(reason).__name__}")
    return Answer("pass" if better == "first" else "fail", reason[:MAX_REASON_CHARS])


def panel_verdict(answers: Sequence[Answer], rule: Rule) -> PanelVerdict:
    """The panel's decision; a judge in error counts against a pass under both rules.

    ``majority``: pass when more than half of all judges (errors included) said pass, fail when more
    than half said fail, ``error`` when errors keep both from a majority, ``tie`` otherwise.
    ``unanimous``: pass only when every judge said pass; any error makes it ``error``, any fail ``fail``.
    """
    if not answers:
        return "error"
    passes = sum(1 for answer in answers if answer.verdict == "pass")
    fails = sum(1 for answer in answers if answer.verdict == "fail")
    errors = len(answers) - passes - fails
    if rule == "unanimous":
        if fails:
            return "fail"
        return "error" if errors else "pass"
    if passes * 2 > len(answers):
        return "pass"
    if fails * 2 > len(answers):
        return "fail"
    return "error" if errors else "tie"


def pairwise(first: Answer, swapped: Answer) -> Literal["pass", "fail", "tie"] | None:
    """One judge's pairwise decision from both orders, ``None`` when either answer is an error.

    ``first`` judged "is response 1 better?" with the trial's output as response 1, ``swapped`` with it
    as response 2. A judge that prefers the same position both times is only showing position bias, so
    a verdict that flips with the order is a tie, never a win.
    """
    if first.verdict is None or swapped.verdict is None:
        return None
    if first.verdict == swapped.verdict:
        return "tie"
    return "pass" if first.verdict == "pass" else "fail"


def calibration_misses(
    expected: Sequence[Literal["pass", "fail"]], decided: Sequence[PanelVerdict]
) -> tuple[int, ...]:
    """Indexes (from 0) of the labelled examples the panel did not grade as labelled.

    An error or a tie on an example is a miss too: a panel that cannot grade the known cases has not
    shown that its verdicts on real trials mean anything.
    """
    if len(expected) != len(decided):
        raise ValueError(f"{len(expected)} examples but {len(decided)} panel verdicts")
    return tuple(
        index for index, (want, got) in enumerate(zip(expected, decided, strict=True)) if want != got
    )


@dataclass(frozen=True)
class PairwiseTally:
    """How one judge's pairwise decisions over a compared pair came out, decision by decision.

    ``errors`` counts the decisions where either order's answer was unusable: never a preference.
    """

    with_preferred: int = 0
    without_preferred: int = 0
    ties: int = 0
    errors: int = 0


def tally_pairwise(decisions: Sequence[Literal["pass", "fail", "tie"] | None]) -> PairwiseTally:
    """Count :func:`pairwise` decisions, each made with the ``with`` arm's material as ``first``."""
    return PairwiseTally(
        with_preferred=sum(1 for decision in decisions if decision == "pass"),
        without_preferred=sum(1 for decision in decisions if decision == "fail"),
        ties=sum(1 for decision in decisions if decision == "tie"),
        errors=sum(1 for decision in decisions if decision is None),
    )
