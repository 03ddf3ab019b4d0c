from pathlib import Path

import pytest

from trialbook.assertions import file_contains, file_exists

from .dir_trial import DirTrial


def test_file_exists(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "neon.ts").write_text("export {}\n")
    trial = DirTrial(tmp_path)
    passed = file_exists("src/neon.ts").check(trial)
    assert passed.passed
    assert passed.label == 'file_exists "src/neon.ts"'
    assert passed.expected == "src/neon.ts exists in the sandbox"
    assert file_exists("src").check(trial).passed
    failed = file_exists("neon.ts").check(trial)
    assert not failed.passed
    assert failed.actual == "neon.ts was not found"


@pytest.mark.parametrize(
    ("path", "message"),
    [
        ("", "the path is empty"),
        ("/etc/passwd", "is not relative"),
        ("../x", "leaves the sandbox"),
        ("~/x", "relative"),
    ],
)
def test_paths_must_stay_in_the_sandbox(path: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        file_exists(path)
    with pytest.raises(ValueError, match=message):
        file_contains(path, "x")


def test_file_contains_substring_and_regex(tmp_path: Path) -> None:
    (tmp_path / ".env.local").write_text("PORT=3000\nDATABASE_URL=postgres://user:s3cret@db/x\n")
    trial = DirTrial(tmp_path)
    record = file_contains(".env.local", "DATABASE_URL=").check(trial)
    assert record.passed
    assert record.actual == "found at line 2"
    assert record.label == 'file_contains {"path": ".env.local", "pattern": "DATABASE_URL="}'
    assert (
        file_contains(".env.local", "/^PORT=\\d+$/m").check(trial).passed is False
    )  # flags are not a syntax
    assert file_contains(".env.local", "/PORT=\\d+/").check(trial).passed


def test_file_contains_failures_never_quote_the_file(tmp_path: Path) -> None:
    (tmp_path / ".env.local").write_text("DATABASE_URL=postgres://user:s3cret@db/x\n")
    trial = DirTrial(tmp_path)
    record = file_contains(".env.local", "/REDIS_URL=/").check(trial)
    assert not record.passed
    assert record.expected == '.env.local contains "/REDIS_URL=/"'
    assert record.actual.startswith('no match for "') and record.actual.endswith(
        '" in .env.local (1 lines, 41 characters)'
    )
    assert "s3cret" not in record.actual
    missing = file_contains("missing.txt", "x").check(trial)
    assert not missing.passed
    assert missing.actual == "missing.txt was not found or is not a readable text file"


def test_file_contains_on_a_binary_file_fails_cleanly(tmp_path: Path) -> None:
    (tmp_path / "blob.bin").write_bytes(b"\xff\xfe\x00")
    record = file_contains("blob.bin", "x").check(DirTrial(tmp_path))
    assert not record.passed
    assert "not a readable text file" in record.actual
