"""How many trials adaptive trials save, and how often their verdict agrees with running every trial.

Replays synthetic histories: for every setting (maximum trials N, pass_rate threshold, true pass rate of
the agent) it draws ``--histories`` sequences of N trial outcomes with a fixed seed, then decides each
sequence twice: the full run (all N trials, the naive floor: nothing saved, verdict by definition right)
and adaptive trials exactly as the runner runs them (waves of ``min`` trials, a stop as soon as
``trialbook.scoring.stats.early_verdict`` decides after a wave). A setting's "saved" is the share of the N
trials per sequence that adaptive trials did not run; "agree" the share of sequences whose adaptive
verdict equals the full run's.

Run: ``uv run --frozen python benchmarks/adaptive.py [--histories 400] [--min 3] [--seed 16]``
"""

from __future__ import annotations

import argparse
import random
from functools import cache

from trialbook.runner._plan import ADAPTIVE_MIN_TRIALS
from trialbook.scoring.stats import EarlyVerdict, early_verdict
from trialbook.scoring.verdict import meets

MAXIMA = (3, 5, 10, 20)
THRESHOLDS = (0.5, 0.6, 0.67, 0.8, 0.9, 1.0)
RATES = tuple(i / 10 for i in range(11))
TARGET_SAVED = 0.30
TARGET_AGREE = 0.95


@cache
def _decide(passed: int, ran: int, planned: int, threshold: float) -> EarlyVerdict | None:
    return early_verdict(passed, ran, planned, threshold)


def adaptive(outcomes: list[bool], least: int, threshold: float) -> tuple[int, bool]:
    """Trials run and the verdict (passed or not), in waves of ``least`` as the runner's engine does."""
    planned = len(outcomes)
    ran = 0
    while ran < planned:
        ran = min(planned, ran + least)
        decided = _decide(sum(outcomes[:ran]), ran, planned, threshold)
        if decided is not None:
            return ran, decided == "pass"
    return planned, meets(sum(outcomes), planned, threshold)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--histories", type=int, default=400, help="sequences per setting")
    parser.add_argument("--min", type=int, default=ADAPTIVE_MIN_TRIALS, dest="least", help="first wave")
    parser.add_argument("--seed", type=int, default=16)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    rows: list[tuple[int, float, float, float, float]] = []
    for planned in MAXIMA:
        least = min(args.least, planned)
        for threshold in THRESHOLDS:
            for rate in RATES:
                ran_total = agree = 0
                for _ in range(args.histories):
                    outcomes = [rng.random() < rate for _ in range(planned)]
                    ran, verdict = adaptive(outcomes, least, threshold)
                    ran_total += ran
                    agree += verdict == meets(sum(outcomes), planned, threshold)
                saved = 1 - ran_total / (planned * args.histories)
                rows.append((planned, threshold, rate, saved, agree / args.histories))

    print(
        f"adaptive trials, min {args.least} (waves of min), {args.histories} histories per setting, "
        f"seed {args.seed}; full run = naive floor (0% saved, 100% agree)\n"
    )
    print(f"{'N':>3} {'threshold':>9} | " + " ".join(f"p={r:.1f}".rjust(11) for r in RATES) + " |  all rates")
    for planned in MAXIMA:
        for threshold in THRESHOLDS:
            mine = [r for r in rows if r[0] == planned and r[1] == threshold]
            cells = " ".join(f"{r[3]:4.0%} {r[4]:5.1%}".rjust(11) for r in mine)
            share = sum(r[3] for r in mine) / len(mine)
            agreeing = sum(r[4] for r in mine) / len(mine)
            print(f"{planned:>3} {threshold:>9.2f} | {cells} | {share:4.0%} {agreeing:5.1%}")
    print("\ncells: share of trials saved, share of verdicts agreeing with the full run\n")
    print(f"{'N':>3} | saved  agree | worst setting's agreement")
    for planned in MAXIMA:
        mine = [r for r in rows if r[0] == planned]
        share = sum(r[3] for r in mine) / len(mine)
        agreeing = sum(r[4] for r in mine) / len(mine)
        print(f"{planned:>3} | {share:5.1%} {agreeing:6.1%} | {min(r[4] for r in mine):.1%}")
    overall_saved = sum(r[3] for r in rows) / len(rows)
    overall_agree = sum(r[4] for r in rows) / len(rows)
    met = overall_saved >= TARGET_SAVED and overall_agree >= TARGET_AGREE
    print(
        f"all | {overall_saved:5.1%} {overall_agree:6.1%} | target: >= {TARGET_SAVED:.0%} saved with "
        f">= {TARGET_AGREE:.0%} agreement: {'met' if met else 'NOT met'}"
    )


if __name__ == "__main__":
    main()
