from pathlib import Path

import pytest

from trialbook.agents import AgentSpec
from trialbook.assertions import evaluate_all
from trialbook.evalfiles import DEFAULT_TIMEOUT_S, ShimSpec

from ..assertions.dir_trial import DirTrial, make_calls
from .helpers import load, write

ARCHITECTURE_EXAMPLE = """
prompt: ../docs/prompts/create-project.md   # a file (relative to this file)
params: {project: demo}                     # {{ project }} in the prompt
secrets: [NEON_API_KEY]
agents: [literal, {name: copilot, model: gpt-5.2}]
trials: 3
pass_rate: 0.67
sandbox: {template: template/}
shims:
  neon: {script: "echo neon ok"}
  npm: passthrough
assert:
  - ran_in_order: ["/neon init .*--project-id/", "neon deploy"]
  - not_ran: "neon delete"
  - file_exists: neon.ts
  - file_contains: {path: .env.local, pattern: "/DATABASE_URL=/"}
  - succeeds: {command: "npm run build", exit_code: 0}
  - assert_that: {name: has-readme, check: "evals.checks:has_readme"}
max_cost_usd: 2
timeout: 10m
"""


def write_example(project: Path) -> None:
    write(
        project, "docs/prompts/create-project.md", "Create {{ project }} with {{ secrets.NEON_API_KEY }}.\n"
    )
    (project / "evals" / "template").mkdir()
    write(project, "evals/checks.py", "def has_readme(trial):\n    return trial.exists('README.md')\n")
    write(project, "evals/create-project.eval.yaml", ARCHITECTURE_EXAMPLE)


def test_the_architecture_example_loads(project: Path) -> None:
    write_example(project)
    (spec,) = load("evals")
    source = project / "evals" / "create-project.eval.yaml"
    assert spec.id == "create-project"
    assert spec.source == source
    assert spec.evals_root == project / "evals"
    assert spec.prompt_path == project / "docs" / "prompts" / "create-project.md"
    assert spec.prompt_template == "Create {{ project }} with {{ secrets.NEON_API_KEY }}.\n"
    assert spec.params == {"project": "demo"}
    assert spec.secrets == ("NEON_API_KEY",)
    assert spec.agents == (
        AgentSpec("literal", {}, source="evals/create-project.eval.yaml:4"),
        AgentSpec("copilot", {"model": "gpt-5.2"}, source="evals/create-project.eval.yaml:4"),
    )
    assert (spec.trials, spec.pass_rate, spec.max_cost_usd, spec.timeout_s) == (3, 0.67, 2.0, 600.0)
    assert spec.template == project / "evals" / "template"
    assert spec.shims == (ShimSpec("neon", "stub", "echo neon ok"), ShimSpec("npm", "passthrough", None))
    assert [a.label for a in spec.assertions] == [
        'ran_in_order ["/neon init .*--project-id/", "neon deploy"]',
        'not_ran "neon delete"',
        'file_exists "neon.ts"',
        'file_contains {"path": ".env.local", "pattern": "/DATABASE_URL=/"}',
        'succeeds "npm run build"',
        'assert_that "has-readme"',
    ]
    assert spec.line_of("secrets.NEON_API_KEY") == 3
    assert spec.line_of("assert[5]") == 17


def test_template_is_relative_to_the_eval_file(project: Path) -> None:
    (project / "evals" / "setup" / "template").mkdir(parents=True)
    write(
        project,
        "evals/setup/x.eval.yaml",
        "prompt_text: hi\nagents: [literal]\nsandbox: {template: template/}\n",
    )
    (spec,) = load("evals")
    assert spec.template == project / "evals" / "setup" / "template"


def test_defaults(project: Path) -> None:
    write(project, "evals/x.eval.yaml", "prompt_text: hi\nagents: [literal]\n")
    (spec,) = load("evals")
    assert spec.prompt_path is None
    assert spec.prompt_template == "hi"
    assert (spec.trials, spec.pass_rate, spec.timeout_s, spec.max_cost_usd) == (
        1,
        1.0,
        DEFAULT_TIMEOUT_S,
        None,
    )
    assert (spec.params, spec.secrets, spec.shims, spec.assertions, spec.template) == ({}, (), (), (), None)


@pytest.mark.parametrize(
    ("written", "seconds"),
    [("90", 90.0), ("90s", 90.0), ("10m", 600.0), ("1h", 3600.0), ("1h30m", 5400.0), ("2.5", 2.5)],
)
def test_timeouts(project: Path, written: str, seconds: float) -> None:
    write(project, "evals/x.eval.yaml", f"prompt_text: hi\nagents: [literal]\ntimeout: {written}\n")
    assert load("evals")[0].timeout_s == seconds


def test_agent_options_script_agents_and_numbers_in_env(project: Path) -> None:
    write(
        project,
        "evals/x.eval.yaml",
        """
        prompt_text: hi
        secrets: [GH_TOKEN]
        agents:
          - name: copilot
            model: gpt-5.2
            env: {TOKEN: "{{ secrets.GH_TOKEN }}", PORT: 3000}
            tool_call_budget: 40
            provider: {type: openai, base_url: "http://127.0.0.1:9/v1"}
          - {name: echoer, script: "echo hello"}
        params: {port: 3000}
        """,
    )
    (spec,) = load("evals")
    copilot, echoer = spec.agents
    assert copilot.options == {
        "model": "gpt-5.2",
        "env": {"TOKEN": "{{ secrets.GH_TOKEN }}", "PORT": "3000"},
        "tool_call_budget": 40,
        "provider": {"type": "openai", "base_url": "http://127.0.0.1:9/v1"},
    }
    assert copilot.source == "evals/x.eval.yaml:4"
    assert echoer == AgentSpec("echoer", {"script": "echo hello"}, source="evals/x.eval.yaml:9")
    assert spec.params == {"port": "3000"}


def test_succeeds_forms_and_stub_shims(project: Path) -> None:
    write(
        project,
        "evals/x.eval.yaml",
        """
        prompt_text: hi
        agents: [literal]
        shims: {neon: stub}
        assert:
          - succeeds: npm test
          - succeeds: {command: "exit 3", exit_code: 3, timeout: 5s}
        """,
    )
    (spec,) = load("evals")
    assert spec.shims == (ShimSpec("neon", "stub", None),)
    assert [a.to_json() for a in spec.assertions] == [
        {"kind": "succeeds", "command": "npm test", "exit_code": 0, "timeout_s": 120.0},
        {"kind": "succeeds", "command": "exit 3", "exit_code": 3, "timeout_s": 5.0},
    ]


def test_assert_that_checks_resolve_from_the_evals_folders_parent_and_run(project: Path) -> None:
    write_example(project)
    (spec,) = load("evals")
    check = spec.assertions[-1]
    workdir = project / "sandbox"
    workdir.mkdir()
    trial = DirTrial(workdir, make_calls("neon init --project-id p", "neon deploy"))
    records = evaluate_all(spec.assertions, trial)
    assert [r.passed for r in records] == [True, True, False, False, False, False]
    (workdir / "README.md").write_text("# demo\n")
    assert check.check(trial).passed
    described = check.to_json()
    assert described["check"] == "evals.checks:has_readme"
    assert str(described["source_sha256"]).startswith("sha256:")


def test_a_check_module_beside_the_eval_file_wins_and_each_project_gets_its_own(tmp_path: Path) -> None:
    verdicts = []
    for name, verdict in [("one", "True"), ("two", "False")]:
        root = tmp_path / name
        write(root, "evals/checks.py", f"def decide(trial):\n    return {verdict}\n")
        write(
            root,
            "evals/x.eval.yaml",
            "prompt_text: hi\nagents: [literal]\nassert:\n  - assert_that: {name: d, check: "
            "'evals.checks:decide'}\n",
        )
        (spec,) = load(root / "evals")
        verdicts.append(spec.assertions[0].check(DirTrial(tmp_path)).passed)
    assert verdicts == [True, False]


def test_escaped_and_github_expression_braces_are_not_placeholders(project: Path) -> None:
    write(
        project,
        "evals/x.eval.yaml",
        'prompt_text: "Use ${{ secrets.GITHUB_TOKEN }} and \\\\{{ name }}"\nagents: [literal]\n',
    )
    (spec,) = load("evals")
    assert spec.prompt_template == "Use ${{ secrets.GITHUB_TOKEN }} and \\{{ name }}"


@pytest.mark.parametrize(
    ("written", "size"),
    [
        ("4096", 4096),
        ("20MiB", 20 * 1024 * 1024),
        ("1.5MB", 1_500_000),
        ("512 KiB", 512 * 1024),
        ("1GiB", 1 << 30),
    ],
)
def test_limits_output_takes_bytes_or_a_size(project: Path, written: str, size: int) -> None:
    write(
        project, "evals/x.eval.yaml", f"prompt_text: hi\nagents: [literal]\nlimits: {{output: {written}}}\n"
    )
    (spec,) = load("evals")
    assert spec.output_limit == size


def test_the_output_limit_defaults_to_10_mib(project: Path) -> None:
    write(project, "evals/x.eval.yaml", "prompt_text: hi\nagents: [literal]\nlimits: {}\n")
    write(project, "evals/y.eval.yaml", "prompt_text: hi\nagents: [literal]\n")
    assert [spec.output_limit for spec in load("evals")] == [10 * 1024 * 1024] * 2
