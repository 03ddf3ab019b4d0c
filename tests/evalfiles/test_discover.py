from pathlib import Path

import pytest

from trialbook.errors import ConfigError
from trialbook.evalfiles import discover_eval_files

from .helpers import load, problems, write

MINIMAL = "prompt_text: hi\nagents: [literal]\n"


def test_folders_are_searched_recursively_and_sorted(project: Path) -> None:
    for name in ["b.eval.yaml", "a/c.eval.yml", "a/b/d.eval.py", "notes.yaml", ".hidden/x.eval.yaml"]:
        write(project, f"evals/{name}", MINIMAL)
    write(project, "evals/node_modules/pkg/y.eval.yaml", MINIMAL)
    found = discover_eval_files([Path("evals")])
    assert [p.relative_to(project).as_posix() for p in found] == [
        "evals/a/b/d.eval.py",
        "evals/a/c.eval.yml",
        "evals/b.eval.yaml",
    ]
    assert all(p.is_absolute() for p in found)


def test_ids_are_paths_relative_to_the_folder_given(project: Path) -> None:
    write(project, "evals/setup/create-project.eval.yaml", MINIMAL)
    write(project, "evals/deploy.eval.yml", MINIMAL)
    specs = load("evals")
    assert [(s.id, s.evals_root) for s in specs] == [
        ("deploy", project / "evals"),
        ("setup/create-project", project / "evals"),
    ]
    nested = load("evals/setup")
    assert [s.id for s in nested] == ["create-project"]


def test_a_file_given_directly_is_taken_as_is_with_its_parent_as_root(project: Path) -> None:
    write(project, "evals/setup/quick.yaml", MINIMAL)
    (spec,) = load("evals/setup/quick.yaml")
    assert spec.id == "quick"
    assert spec.evals_root == project / "evals" / "setup"
    assert spec.source == project / "evals" / "setup" / "quick.yaml"


def test_id_key_overrides_the_path(project: Path) -> None:
    write(project, "evals/x.eval.yaml", "id: setup/custom\n" + MINIMAL)
    assert [s.id for s in load("evals")] == ["setup/custom"]


def test_a_file_reached_twice_is_loaded_once(project: Path) -> None:
    write(project, "evals/x.eval.yaml", MINIMAL)
    assert [s.id for s in load("evals", "evals/x.eval.yaml")] == ["x"]


def test_duplicate_ids_name_both_files(project: Path) -> None:
    write(project, "evals/x.eval.yaml", MINIMAL)
    write(project, "evals/x.eval.yml", MINIMAL)
    expected = [
        "evals/x.eval.yml:1: id: the id 'x' is also used by evals/x.eval.yaml "
        "(rename one of the files, or set a different id: in one of them)"
    ]
    with pytest.raises(ConfigError) as caught:
        discover_eval_files([Path("evals")])
    assert caught.value.problems == expected
    assert problems("evals") == expected


def test_ids_set_with_id_key_must_be_unique_too(project: Path) -> None:
    write(project, "evals/a.eval.yaml", "id: same\n" + MINIMAL)
    write(project, "evals/b.eval.yaml", MINIMAL + "id: same\n")
    assert problems("evals") == [
        "evals/b.eval.yaml:3: id: the id 'same' is also used by evals/a.eval.yaml "
        "(rename one of the files, or set a different id: in one of them)"
    ]


def test_missing_paths_are_problems(project: Path) -> None:
    with pytest.raises(ConfigError, match="nope: no such file or folder"):
        discover_eval_files([Path("nope")])


def test_an_empty_folder_has_no_evals(project: Path) -> None:
    assert discover_eval_files([Path("evals")]) == []
    assert load("evals") == []
