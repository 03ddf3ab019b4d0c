from dataclasses import dataclass
from pathlib import Path

import pytest

from trialbook.assertions import Assertion, FinishedTrial, assert_that, evaluate_all, file_exists, ran
from trialbook.evidence import AssertionRecord, JsonObject

from .dir_trial import DirTrial, make_calls


def has_readme(trial: FinishedTrial) -> bool:
    return trial.exists("README.md")


def test_a_true_or_none_result_passes(tmp_path: Path) -> None:
    (tmp_path / "README.md").write_text("hi")
    trial = DirTrial(tmp_path)
    record = assert_that("has-readme", has_readme).check(trial)
    assert record.passed
    assert record.label == 'assert_that "has-readme"'
    assert record.expected == f"{__name__}:has_readme passes"
    assert assert_that("quiet", lambda t: None).check(trial).passed


def test_false_fails(tmp_path: Path) -> None:
    record = assert_that("has-readme", has_readme).check(DirTrial(tmp_path))
    assert not record.passed
    assert record.actual == "the check returned False"
    assert record.error is None


def test_an_assertion_error_fails_with_its_message(tmp_path: Path) -> None:
    def check(trial: FinishedTrial) -> None:
        if len(trial.calls) != 2:
            raise AssertionError(f"expected 2 calls, saw {len(trial.calls)}")

    record = assert_that("two-calls", check).check(DirTrial(tmp_path, make_calls("neon init")))
    assert not record.passed
    assert record.actual == "expected 2 calls, saw 1"
    assert record.error is None


def test_any_other_exception_is_an_error_of_the_check(tmp_path: Path) -> None:
    def check(trial: FinishedTrial) -> bool:
        raise KeyError("DATABASE_URL")

    record = assert_that("broken", check).check(DirTrial(tmp_path))
    assert not record.passed
    assert record.error == "KeyError: 'DATABASE_URL'"


def test_a_result_that_is_not_a_verdict_is_an_error(tmp_path: Path) -> None:
    record = assert_that("odd", lambda t: "yes").check(DirTrial(tmp_path))  # type: ignore[arg-type,return-value]
    assert not record.passed
    assert record.error == "the check returned 'yes'; return True, False or None"

    async def later(trial: FinishedTrial) -> bool:
        return True

    async_record = assert_that("async", later).check(DirTrial(tmp_path))  # type: ignore[arg-type]
    assert async_record.error is not None
    assert "async" in async_record.error


def test_to_json_names_the_callable_and_hashes_its_source() -> None:
    described = assert_that("has-readme", has_readme).to_json()
    assert described["kind"] == "assert_that"
    assert described["name"] == "has-readme"
    assert described["check"] == f"{__name__}:has_readme"
    digest = described["source_sha256"]
    assert isinstance(digest, str)
    assert digest.startswith("sha256:")
    assert len(digest) == len("sha256:") + 64


@pytest.mark.parametrize(("name", "check"), [("", has_readme), ("x", "not callable")])
def test_assert_that_rejects_bad_arguments(name: str, check: object) -> None:
    with pytest.raises(ValueError, match="assert_that"):
        assert_that(name, check)  # type: ignore[arg-type]


@dataclass(frozen=True)
class Exploding:
    kind = "exploding"
    label = "exploding"

    def check(self, trial: FinishedTrial) -> AssertionRecord:
        raise RuntimeError("disk on fire")

    def to_json(self) -> JsonObject:
        return {"kind": self.kind}


def test_evaluate_all_runs_every_assertion_in_order(tmp_path: Path) -> None:
    assertions: list[Assertion] = [ran("neon deploy"), Exploding(), file_exists("x"), ran("neon init")]
    records = evaluate_all(assertions, DirTrial(tmp_path, make_calls("neon init")))
    assert [(r.kind, r.passed) for r in records] == [
        ("ran", False),
        ("exploding", False),
        ("file_exists", False),
        ("ran", True),
    ]
    assert records[1].error == "RuntimeError: disk on fire"
