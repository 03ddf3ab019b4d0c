"""Trials side by side stay apart, and a run leaves no sandbox behind though folders go in the background.

A finished trial's sandbox is removed or emptied for reuse while the next trial already runs (see
``SandboxRemover``), in worker threads of its own. These tests
run many trials at once and look at what each one saw and what is left once ``run`` returns.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.runner.local import run_local, run_outcomes
from trialbook.runner import RunOptions, run

# Each trial leaves files in every folder it owns, records which sandbox it ran in, and fails if it can
# see anything another trial wrote.
SCRIPT = (
    "set -e; "
    'if [ -n "$(ls -A .)" ] || [ -e "$XDG_CACHE_HOME/mine" ] || [ -e "$TMPDIR/mine" ]; then exit 9; fi; '
    "mkdir -p a/b/c; for n in 1 2 3 4 5 6 7 8; do echo $n > a/b/c/f$n; done; "
    'echo "$PWD" > where.txt; mkdir -p "$XDG_CACHE_HOME"; touch "$XDG_CACHE_HOME/mine" "$TMPDIR/mine"; '
    'mkdir ro && chmod 500 ro; echo "$MY_SECRET" > secret.txt; echo "said $MY_SECRET"; sleep 0.2'
)


def _eval(folder: Path, trials: int) -> Path:
    path = folder / "evals" / "apart.eval.yaml"
    path.parent.mkdir(parents=True)
    path.write_text(
        "prompt_text: work\n"
        f"agents: [{{name: s, script: {json.dumps(SCRIPT)}, env: {{MY_SECRET: '${{secrets.TOKEN}}'}}}}]\n"
        "secrets: [TOKEN]\n"
        f"trials: {trials}\n"
        "assert:\n  - file_contains: {path: a/b/c/f8, pattern: '8'}\n"
    )
    return path


@pytest.mark.parametrize("concurrency", [1, 4, 8])
def test_concurrent_trials_see_fresh_sandboxes_and_leave_none(
    tmp_path: Path, scratch: Path, concurrency: int
) -> None:
    trials = 12
    report = run(
        RunOptions(
            paths=(_eval(tmp_path, trials),),
            concurrency=concurrency,
            unsafe_local=True,
            results_dir=tmp_path / "results",
            environ={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "TOKEN": "hunter2-token"},
        )
    )
    outcomes = [outcome for result in report.results for outcome in result.outcomes]
    assert len(outcomes) == trials
    assert all(outcome.passed for outcome in outcomes), [o.explanation for o in outcomes]
    # Every sandbox is gone when run() returns, the read-only folders included.
    assert sorted(p.name for p in scratch.iterdir() if p.name.startswith("trialbook-")) == []
    # Each trial ran in a sandbox of its own.
    where = {outcome.result.working_directory for outcome in outcomes if outcome.result.working_directory}
    assert len(where) == trials
    # Each trial's transcripts are its own, whole and masked.
    results = sorted((tmp_path / "results").glob("evals/apart/s/trial-*/result.json"))
    assert len(results) == trials
    for path in results:
        document = json.loads(path.read_text())
        assert document["result"]["success"] is True
        assert not list(path.parent.glob("*.tmp"))
    written = "".join(p.read_text() for p in (tmp_path / "results").rglob("*") if p.is_file())
    assert "hunter2-token" not in written
    assert "said ***" in written  # the agent did print it: masked, not missing


def test_at_concurrency_2_a_trial_starts_only_against_what_the_finished_ones_spent(
    tmp_path: Path, scratch: Path
) -> None:
    # $0.5 a trial, $1.2 of budget, two places: trials 1 and 2 start on $0; each one's cost counts as its
    # place frees, so trials 3 and 4 start on $0.5 and $1.0 and every later one finds $1.5 or more.
    # A cost counted late (after the transcripts) would let a fifth trial start on $1.0.
    path = tmp_path / "evals" / "costly.eval.yaml"
    path.parent.mkdir(parents=True)
    path.write_text(
        "prompt_text: work\nagents: [{name: s, script: 'sleep 0.2; touch done', cost_usd: 0.5}]\n"
        "trials: 12\nassert:\n  - file_exists: done\n"
    )
    report = run_local(path, tmp_path / "results", concurrency=2, budget_usd=1.2)
    (result,) = report.results
    assert len(result.outcomes) == 4
    assert result.unstarted == 8
    assert report.ledger.spent_usd == pytest.approx(2.0)
    assert sorted(p.name for p in scratch.iterdir() if p.name.startswith("trialbook-")) == []
    assert len(list((tmp_path / "results").glob("evals/costly/s/trial-*/result.json"))) == 4


def test_every_trial_starts_in_fresh_folders_of_its_own(tmp_path: Path, scratch: Path) -> None:
    # Each trial fails unless its folders start empty, then fills them and names where it ran.
    script = (
        '[ -z "$(ls -A .)" ] && [ -z "$(ls -A "$HOME")" ] && [ -z "$(ls -A "$TMPDIR")" ] || exit 9; '
        '[ "$(ls -A ..)" = "$(printf "home\\ntmp\\nwork")" ] || exit 8; '
        'mkdir -p "$HOME/.cache/x" a/b; touch "$TMPDIR/t" a/b/c ../extra; '
        'echo "inode $(stat -c %i "$HOME") at $PWD"'
    )
    path = tmp_path / "evals" / "again.eval.yaml"
    path.parent.mkdir(parents=True)
    path.write_text(
        f"prompt_text: work\nagents: [{{name: s, script: {json.dumps(script)}}}]\ntrials: 12\n"
        "assert:\n  - file_exists: a/b/c\n"
    )
    outcomes = run_outcomes(path, tmp_path / "results", concurrency=2)
    assert len(outcomes) == 12
    assert all(outcome.passed for outcome in outcomes), [o.explanation for o in outcomes]
    logs = [p.read_text() for p in (tmp_path / "results").glob("evals/again/s/trial-*/script.log")]
    said = [line.split() for log in logs for line in log.splitlines() if line.startswith("inode ")]
    assert len(said) == 12
    assert len({where for *_, where in said}) == 12  # a path of its own for each trial
    assert sorted(p.name for p in scratch.iterdir() if p.name.startswith("trialbook-")) == []
