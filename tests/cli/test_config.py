"""[tool.trialbook] in pyproject.toml (or trialbook.toml) sets defaults: flag > env > file > default."""

from __future__ import annotations

from pathlib import Path

from ..runner.conftest import Invoke, invoke, write

__all__ = ["invoke"]


def _evals(tmp_path: Path) -> None:
    for name in ("alpha", "beta"):
        write(tmp_path / f"guides/{name}.eval.yaml", "prompt_text: hi\nagents: [literal]\n")


def _running(output: str) -> list[str]:
    return sorted(line.split()[1] for line in output.splitlines() if line.startswith("run "))


def _runs(tmp_path: Path) -> int:
    root = tmp_path / ".trialbook/runs"
    return sum(1 for p in root.iterdir() if p.is_dir() and not p.is_symlink())


def test_pyproject_sets_a_default_and_a_flag_overrides_it(invoke: Invoke, tmp_path: Path) -> None:
    _evals(tmp_path)
    write(
        tmp_path / "pyproject.toml",
        '[project]\nname = "x"\n\n[tool.trialbook]\npaths = ["guides"]\nkeep-runs = 1\nfilter = "alpha"\n',
    )
    assert _running(invoke("list").output) == ["alpha"]
    assert _running(invoke("list", "--filter", "beta").output) == ["beta"]
    # The environment sits between the flag and the file.
    assert _running(invoke("list", env={"TRIALBOOK_FILTER": "beta"}).output) == ["beta"]
    for _ in range(2):
        assert invoke("eval").exit_code == 0
    assert _runs(tmp_path) == 1
    for _ in range(2):
        assert invoke("eval", "--keep-runs", "5").exit_code == 0
    assert _runs(tmp_path) == 3


def test_trialbook_toml_with_a_table_per_command(invoke: Invoke, tmp_path: Path) -> None:
    _evals(tmp_path)
    write(tmp_path / "pyproject.toml", '[tool.trialbook]\nfilter = "alpha"\n')  # trialbook.toml wins
    write(tmp_path / "trialbook.toml", 'paths = ["guides"]\n\n[list]\nfilter = ["beta", "alpha"]\n')
    assert _running(invoke("list").output) == ["alpha", "beta"]
    dry = invoke("eval", "--dry-run")
    assert dry.exit_code == 0, dry.output
    assert _running(dry.output) == ["alpha", "beta"]


def _refused(invoke: Invoke, config: Path, text: str, *args: str) -> str:
    """Write ``text`` as the configuration file ``config`` and run ``args``: exit 2, no traceback."""
    write(config, text)
    result = invoke(*args)
    assert result.exit_code == 2, (text, result.output)
    assert "Traceback" not in result.output
    return result.output


def test_mistakes_in_the_file_name_the_file_and_the_key(invoke: Invoke, tmp_path: Path) -> None:
    _evals(tmp_path)
    cases = [
        ("[tool.trialbook]\nconcurency = 8\n", "concurency: no such option; closest: concurrency"),
        ('[tool.trialbook]\nconcurrency = "many"\n', "concurrency: 'many' is not a valid integer"),
        ("[tool.trialbook]\nkeep-runs = 0\n", "[tool.trialbook] keep-runs: 0 is not in the range"),
        ('[tool.trialbook.list]\njunit = "x.xml"\n', "list] junit: no such option of trialbook list"),
        ("[tool.trialbook]\nfilter = {a = 1}\n", "[tool.trialbook] filter: expected a list"),
        ("[tool.trialbook\n", "not valid TOML"),
    ]
    for text, message in cases:
        output = _refused(invoke, tmp_path / "pyproject.toml", text, "list", "guides")
        assert f"{tmp_path / 'pyproject.toml'}: " in output
        assert message in output, output


def test_true_or_false_for_an_option_that_is_not_on_or_off_is_refused(invoke: Invoke, tmp_path: Path) -> None:
    """TOML's ``true`` would pass as 1 (``keep-runs = true`` pruning to one run) or as the text "True"."""
    _evals(tmp_path)
    cases = [
        ("keep-runs = true\n", "keep-runs: expected integer range, got true"),
        ("concurrency = false\n", "concurrency: expected integer range, got false"),
        ("results-dir = true\n", "results-dir: expected directory, got true"),
    ]
    for text, message in cases:
        output = _refused(
            invoke, tmp_path / "pyproject.toml", "[tool.trialbook]\n" + text, "eval", "guides", "--dry-run"
        )
        assert f"{tmp_path / 'pyproject.toml'}: [tool.trialbook] {message}" in output
    write(tmp_path / "pyproject.toml", "[tool.trialbook]\nforce = true\nunsafe-local = true\n")
    assert invoke("eval", "guides", "--dry-run").exit_code == 0


def test_mistakes_at_the_top_of_trialbook_toml_name_no_table_it_does_not_have(
    invoke: Invoke, tmp_path: Path
) -> None:
    _evals(tmp_path)
    cases = [
        ("concurency = 8\n", ": concurency: no such option; closest: concurrency"),
        ("keep-runs = 0\n", ": keep-runs: 0 is not in the range"),
        ('[list]\njunit = "x.xml"\n', ": [list] junit: no such option of trialbook list"),
        ("list = 3\n", ": list: expected a table of list's options"),
        ("[tool.trialbook]\nkeep-runs = 0\n", ": [tool.trialbook] keep-runs: 0 is not in the range"),
        ("concurency = 8\n[tool.other]\nx = 1\n", ": concurency: no such option; closest: concurrency"),
    ]
    for text, message in cases:
        output = _refused(invoke, tmp_path / "trialbook.toml", text, "list", "guides")
        assert f"{tmp_path / 'trialbook.toml'}{message}" in output, output
        assert "tool.trialbook" not in output or "[tool.trialbook]" in text
