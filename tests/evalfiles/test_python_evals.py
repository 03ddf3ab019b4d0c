import os
import sys
from pathlib import Path

import pytest

from trialbook.agents import AgentSpec
from trialbook.evalfiles import define_eval

from ..assertions.dir_trial import DirTrial, make_calls
from .helpers import load, problems, write

DEPLOY = """
from trialbook.agents import AgentSpec
from trialbook.assertions import assert_that, file_exists, ran
from trialbook.evalfiles import define_eval


def two_calls(trial):
    if len(trial.calls) != 2:
        raise AssertionError(f"saw {len(trial.calls)} calls")


EVAL = define_eval(
    prompt_text="Deploy {{ project }}",
    params={"project": "demo"},
    agents=["literal", AgentSpec("copilot", {"model": "gpt-5.2"}), {"name": "echoer", "script": "echo hi"}],
    trials=2,
    timeout="90s",
    assert_=[
        ran("neon deploy"),
        file_exists("neon.ts"),
        assert_that("two-calls", two_calls),
        {"not_ran": "neon delete"},
        {"assert_that": {"name": "inline", "check": lambda trial: True}},
    ],
)
"""


def test_a_python_eval_file_uses_the_same_keys(project: Path) -> None:
    write(project, "evals/deploy.eval.py", DEPLOY)
    (spec,) = load("evals")
    assert spec.id == "deploy"
    assert spec.source == project / "evals" / "deploy.eval.py"
    assert spec.prompt_template == "Deploy {{ project }}"
    assert spec.params == {"project": "demo"}
    assert spec.agents == (
        AgentSpec("literal", {}, source="evals/deploy.eval.py:11"),
        AgentSpec("copilot", {"model": "gpt-5.2"}, source="evals/deploy.eval.py:11"),
        AgentSpec("echoer", {"script": "echo hi"}, source="evals/deploy.eval.py:11"),
    )
    assert (spec.trials, spec.timeout_s) == (2, 90.0)
    assert [a.kind for a in spec.assertions] == [
        "ran",
        "file_exists",
        "assert_that",
        "not_ran",
        "assert_that",
    ]
    trial = DirTrial(project, make_calls("neon init", "neon deploy"))
    assert [a.check(trial).passed for a in spec.assertions] == [True, False, True, True, True]
    assert spec.assertions[2].to_json()["check"] == "deploy.eval.py:two_calls"
    failed = spec.assertions[2].check(DirTrial(project, make_calls("neon init")))
    assert failed.expected == "deploy.eval.py:two_calls passes"
    assert "_trialbook_eval_" not in failed.expected


def test_a_check_reference_does_not_depend_on_where_the_repository_is(tmp_path: Path) -> None:
    """The reference is in the cache key: two checkouts of one eval file must agree on it."""
    keys = []
    for checkout in ("one", "two"):
        root = tmp_path / checkout
        write(root, "evals/deploy.eval.py", DEPLOY)
        (spec,) = load(root / "evals")
        keys.append(spec.assertions[2].to_json())
    assert keys[0] == keys[1]


def test_a_misspelled_assert_in_python_suggests_the_python_keyword(project: Path) -> None:
    write(
        project,
        "evals/x.eval.py",
        """
        from trialbook.evalfiles import define_eval

        EVAL = define_eval(prompt_text="hi", agents=["literal"], asert_=[])
        """,
    )
    assert problems("evals") == ["evals/x.eval.py:3: asert_: unknown key 'asert_' (did you mean assert_?)"]


def test_field_errors_point_at_the_define_eval_call(project: Path) -> None:
    write(
        project,
        "evals/x.eval.py",
        """
        from trialbook.evalfiles import define_eval

        EVAL = define_eval(
            prompt_text="hi",
            agents=["literal", "copiolt"],
            trials=0,
            trails=3,
        )
        """,
    )
    assert problems("evals") == [
        "evals/x.eval.py:3: trails: unknown key 'trails' (did you mean trials?)",
        "evals/x.eval.py:3: agents[1]: unknown agent 'copiolt' (did you mean copilot? known agents: "
        "claude-code, codex, copilot, literal; or give a script: to define a script agent)",
        "evals/x.eval.py:3: trials: 0 is less than 1 (write e.g. trials: 3)",
    ]


def test_errors_while_running_the_file_name_its_line(project: Path) -> None:
    write(project, "evals/boom.eval.py", "from trialbook.assertions import ran\n\nCHECK = ran('/[x/')\n")
    write(project, "evals/syntax.eval.py", "x = (\n")
    found = problems("evals")
    assert found[0].startswith(
        "evals/boom.eval.py:3: <file>: running the file failed: ValueError: /[x/ is not a valid "
        "regular expression"
    )
    assert found[0].endswith("(run python evals/boom.eval.py to see why)")
    assert found[1].startswith("evals/syntax.eval.py:1: <file>: running the file failed: SyntaxError: ")


def test_a_file_without_evals_is_a_problem(project: Path) -> None:
    write(project, "evals/empty.eval.py", "X = 1\n")
    assert problems("evals") == [
        "evals/empty.eval.py:1: <file>: the file defines no eval (assign define_eval(...) to a "
        "module-level name, "
        "e.g. EVAL = define_eval(prompt=..., agents=...))"
    ]


def test_several_evals_in_one_file_need_ids(project: Path) -> None:
    write(
        project,
        "evals/many.eval.py",
        """
        from trialbook.evalfiles import define_eval

        EVALS = [
            define_eval(id="many/one", prompt_text="one", agents=["literal"]),
            define_eval(id="many/two", prompt_text="two", agents=["literal"]),
        ]
        """,
    )
    assert [s.id for s in load("evals")] == ["many/one", "many/two"]
    write(
        project,
        "evals/many.eval.py",
        """
        from trialbook.evalfiles import define_eval

        A = define_eval(prompt_text="one", agents=["literal"])
        B = define_eval(prompt_text="two", agents=["literal"])
        """,
    )
    assert problems("evals") == [
        "evals/many.eval.py:3: id: this file defines 2 evals, so each needs an id "
        "(pass id='...' to each define_eval in this file)",
        "evals/many.eval.py:4: id: this file defines 2 evals, so each needs an id "
        "(pass id='...' to each define_eval in this file)",
    ]


def test_define_eval_records_its_arguments_and_call_site() -> None:
    definition = define_eval(prompt_text="hi", agents=["literal"], assert_=[])
    assert dict(definition.fields) == {"prompt_text": "hi", "agents": ["literal"], "assert": []}
    assert definition.file == Path(__file__)
    assert definition.line > 1


EDITED = """
from trialbook.evalfiles import define_eval

EVAL = define_eval(prompt_text="{word}", agents=["literal"])
"""


def test_an_edited_python_eval_file_is_read_anew_and_leaves_no_bytecode_beside_it(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # As on a machine that writes bytecode (PYTHONDONTWRITEBYTECODE unset). An edit of the same size
    # and modification time (within the second, as an optimisation loop or a script makes it) is what
    # a bytecode cache cannot tell from the old file: it must still be what runs.
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    path = write(project, "evals/edited.eval.py", EDITED.format(word="first"))
    (spec,) = load("evals")
    assert spec.prompt_template == "first"
    stamp = path.stat().st_mtime_ns
    write(project, "evals/edited.eval.py", EDITED.format(word="later"))
    os.utime(path, ns=(stamp, stamp))
    (spec,) = load("evals")
    assert spec.prompt_template == "later"
    assert list(project.rglob("__pycache__")) == []  # nothing written into the user's evals folder
