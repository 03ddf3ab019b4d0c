"""From trials to verdicts: interval statistics, verdict rules, comparisons of arms, agents and runs."""
