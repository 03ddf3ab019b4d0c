"""Live progress: the status line's words and ETA, colour rules, plain lines off a TTY, Actions groups."""

from __future__ import annotations

import io
import re

from trialbook.cli._progress import TerminalProgress
from trialbook.cli._status import RunningTrial, StatusCounts, colour_wanted, eta_seconds, status_line
from trialbook.runner import TrialFinished, TrialStarted

CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


def test_colour_follows_no_color_and_force_color() -> None:
    assert colour_wanted({}, True) is True
    assert colour_wanted({}, False) is False
    assert colour_wanted({"NO_COLOR": "1"}, True) is False
    assert colour_wanted({"NO_COLOR": ""}, True) is True  # an empty NO_COLOR does not count
    assert colour_wanted({"FORCE_COLOR": "1"}, False) is True
    assert colour_wanted({"FORCE_COLOR": "0"}, True) is False
    assert colour_wanted({"NO_COLOR": "1", "FORCE_COLOR": "1"}, True) is False


def test_eta_comes_from_finished_trials_and_running_ones() -> None:
    assert eta_seconds([], [], 5, now=0.0, parallel=2) is None
    running = [RunningTrial("a", "x", 1, started=0.0)]
    # mean 10s; the running trial has 4s left; 4 waiting share 2 slots: (4 + 40) / 2
    assert eta_seconds([10.0, 10.0], running, 4, now=6.0, parallel=2) == 22.0
    # an overdue trial counts as nearly done, never negative
    assert eta_seconds([10.0], [RunningTrial("a", "x", 1, started=0.0)], 0, now=99.0, parallel=1) == 0.0


def test_the_status_line_fits_and_names_what_runs() -> None:
    running = [RunningTrial(f"eval-{n}", "literal", 1, started=float(n)) for n in range(6)]
    line = status_line(StatusCounts(3, 6, 4), elapsed=75, eta=130, running=running, width=120)
    assert line.startswith("3 done · 6 running · 4 waiting · 1:15 elapsed · ETA 2:10 — eval-0 [literal] #1")
    assert len(line) <= 120 and "running" in line.split(" — ")[1]
    first = status_line(StatusCounts(0, 1, 0), elapsed=2, eta=None, running=running[:1], width=200)
    assert "ETA after the first trial" in first


def _finished(n: int, passed: bool, details: tuple[str, ...] = ()) -> TrialFinished:
    summary = "pass (completed, 1.0s)" if passed else 'FAIL (completed, 1.0s) — ran "x": no call matched'
    return TrialFinished("guide", "literal", n, passed, "completed", 1.0, 0.0, summary, n, 2, details)


def test_off_a_tty_progress_is_plain_lines_without_control_codes() -> None:
    out, err = io.StringIO(), io.StringIO()
    progress = TerminalProgress(out=out, err=err, environ={})
    progress.trial_started(TrialStarted("guide", "literal", 1, 1, 1))
    progress.trial_finished(_finished(1, False, ("| boom", "calls (1): 1. x (exit 2)")))
    progress.close()
    text = out.getvalue()
    assert not CONTROL.search(text.replace("\n", "")), repr(text)
    assert err.getvalue() == ""
    assert text.splitlines() == [
        "start guide [literal] trial 1 (1 running, 1 waiting)",
        '[1/2] guide [literal] trial 1: FAIL (completed, 1.0s) — ran "x": no call matched',
        "    | boom",
        "    calls (1): 1. x (exit 2)",
    ]


def test_in_github_actions_the_evidence_is_a_group_and_cannot_be_a_command() -> None:
    out = io.StringIO()
    progress = TerminalProgress(out=out, err=io.StringIO(), environ={"GITHUB_ACTIONS": "true"})
    progress.trial_finished(_finished(1, False, ("::error::injected", "| 100% done")))
    lines = out.getvalue().splitlines()
    assert lines[0].startswith("::group::[1/2] guide [literal] trial 1: FAIL")
    assert lines[-1] == "::endgroup::"
    assert not any(line.lstrip().startswith("::error") for line in lines)


def test_forced_colour_paints_the_outcome_and_stays_within_the_width() -> None:
    out = io.StringIO()
    progress = TerminalProgress(out=out, err=io.StringIO(), environ={"FORCE_COLOR": "1"})
    long = _finished(1, False, ("| " + "y" * 400,))
    progress.trial_finished(long)
    progress.trial_finished(_finished(2, True))
    text = out.getvalue()
    assert "\x1b[31mFAIL\x1b[0m" in text and "\x1b[32mpass\x1b[0m" in text
    plain = re.sub(r"\x1b\[[0-9;]*m", "", text)
    assert all(len(line) <= 160 for line in plain.splitlines())
