from pathlib import Path

import pytest

from trialbook.assertions import succeeds

from .dir_trial import DirTrial


def test_succeeds_runs_in_the_sandbox(tmp_path: Path) -> None:
    (tmp_path / "package.json").write_text("{}")
    record = succeeds("test -f package.json").check(DirTrial(tmp_path))
    assert record.passed
    assert record.label == 'succeeds "test -f package.json"'
    assert record.expected == "`test -f package.json` exits with 0"
    assert record.actual == "exited with 0"


def test_succeeds_failure_keeps_the_end_of_the_output(tmp_path: Path) -> None:
    command = "for i in $(seq 1 40); do echo line $i; done; echo boom >&2; exit 3"
    record = succeeds(command).check(DirTrial(tmp_path))
    assert not record.passed
    head, tail = record.actual.split("\n", 1)
    assert head == "exited with 3; output ends with:"
    assert tail.splitlines()[-1] == "boom"
    assert "line 40" in tail
    assert "line 10\n" not in tail  # only the last 30 lines are kept
    assert len(tail.splitlines()) == 30


def test_succeeds_with_an_expected_exit_code(tmp_path: Path) -> None:
    assertion = succeeds("exit 2", exit_code=2)
    assert assertion.label == 'succeeds {"command": "exit 2", "exit_code": 2}'
    assert assertion.check(DirTrial(tmp_path)).passed
    assert not succeeds("exit 0", exit_code=2).check(DirTrial(tmp_path)).passed


def test_succeeds_times_out(tmp_path: Path) -> None:
    record = succeeds("echo started; sleep 30", timeout_s=0.5).check(DirTrial(tmp_path))
    assert not record.passed
    assert record.actual.startswith("timed out after 0.5s")


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"command": " "}, "the command is empty"),
        ({"command": "x", "exit_code": "0"}, "exit_code must be an integer"),
        ({"command": "x", "timeout_s": 0}, "positive number"),
    ],
)
def test_succeeds_rejects_bad_arguments(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        succeeds(**kwargs)  # type: ignore[arg-type]


def test_to_json_holds_everything_that_decides() -> None:
    assert succeeds("npm run build").to_json() == {
        "kind": "succeeds",
        "command": "npm run build",
        "exit_code": 0,
        "timeout_s": 120.0,
    }
