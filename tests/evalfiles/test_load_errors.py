"""Every kind of eval-file mistake, with the exact ``file:line: field: problem (fix)`` users see."""

from pathlib import Path

import pytest

from .helpers import problems, write

OK = "prompt_text: hi\nagents: [literal]\n"


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (
            OK + "trails: 3\n",
            "evals/x.eval.yaml:3: trails: unknown key 'trails' (did you mean trials?)",
        ),
        (
            OK + "colour: red\n",
            "evals/x.eval.yaml:3: colour: unknown key 'colour' (known keys: agents, assert, compare, id, "
            "instructions, limits, max_cost_usd, negative_control, "
            "params, pass_rate, prompt, prompt_text, sandbox, secrets, shims, skills, timeout, trials, "
            "triggers)",
        ),
        (
            OK + "sandbox:\n  tmplate: t/\n",
            "evals/x.eval.yaml:4: sandbox.tmplate: unknown key 'tmplate' (did you mean template?)",
        ),
        (
            OK + 'trials: "3"\n',
            "evals/x.eval.yaml:3: trials: expected an integer, got '3' (a string) (write e.g. trials: 3)",
        ),
        (
            OK + "trials: 0\n",
            "evals/x.eval.yaml:3: trials: 0 is less than 1 (write e.g. trials: 3)",
        ),
        (
            OK + "params: [a, b]\n",
            "evals/x.eval.yaml:3: params: expected a mapping, got a list (write e.g. params: "
            "{project: demo})",
        ),
        (
            OK + "pass_rate: 1.5\n",
            "evals/x.eval.yaml:3: pass_rate: 1.5 is out of range "
            "(give a share of trials, more than 0 and at most 1, e.g. pass_rate: 0.67; for 1.5% write 0.015)",
        ),
        (
            OK + "pass_rate: 0\n",
            "evals/x.eval.yaml:3: pass_rate: 0 is out of range "
            "(give a share of trials, more than 0 and at most 1, e.g. pass_rate: 0.67)",
        ),
        (
            OK + "timeout: 10 minutes\n",
            "evals/x.eval.yaml:3: timeout: '10 minutes' is not a duration "
            "(use seconds as a number, or a duration such as 90s, 10m, 1h, 1h30m; e.g. timeout: 10m)",
        ),
        (
            OK + "timeout: 0\n",
            "evals/x.eval.yaml:3: timeout: 0 is not a positive duration "
            "(use seconds as a number, or a duration such as 90s, 10m, 1h, 1h30m; e.g. timeout: 10m)",
        ),
        (
            OK + "max_cost_usd: -1\n",
            "evals/x.eval.yaml:3: max_cost_usd: -1 is not positive (give dollars, e.g. 2)",
        ),
        (
            OK + "sandbox: {template: template/}\n",
            "evals/x.eval.yaml:3: sandbox.template: the template folder template/ does not exist "
            "(looked for evals/template; paths are relative to the eval file)",
        ),
        (
            "prompt: ../docs/missing.md\nagents: [literal]\n",
            "evals/x.eval.yaml:1: prompt: the prompt file ../docs/missing.md does not exist "
            "(looked for docs/missing.md; paths are relative to the eval file)",
        ),
        (
            "prompt: p.md\nprompt_text: hi\nagents: [literal]\n",
            "evals/x.eval.yaml:2: prompt_text: prompt and prompt_text are both given (keep only one of them)",
        ),
        (
            "agents: [literal]\n",
            "evals/x.eval.yaml:1: prompt: no prompt is given "
            "(add prompt: path/to/prompt.md, or prompt_text: | with the prompt itself)",
        ),
        (
            "prompt_text: hi\n",
            "evals/x.eval.yaml:1: agents: is missing (write e.g. agents: [literal, {name: copilot, "
            "model: gpt-5.2}])",
        ),
        (
            "prompt_text: hi\nagents: []\n",
            "evals/x.eval.yaml:2: agents: the list is empty "
            "(name at least one agent, e.g. agents: [literal, {name: copilot, model: gpt-5.2}])",
        ),
        (
            "prompt_text: hi\nagents:\n  - literal\n  - copiolt\n",
            "evals/x.eval.yaml:4: agents[1]: unknown agent 'copiolt' (did you mean copilot? known agents: "
            "claude-code, codex, copilot, literal; or give a script: to define a script agent)",
        ),
        (
            "prompt_text: hi\nagents: [{model: gpt-5.2}]\n",
            "evals/x.eval.yaml:2: agents[0].name: is missing (write e.g. {name: copilot, model: gpt-5.2})",
        ),
        (
            "prompt_text: hi\nagents:\n  - name: copilot\n    env: {TOKEN: '{{ secrets.GH_TOKEN }}'}\n",
            "evals/x.eval.yaml:3: agents[0]: {{ secrets.GH_TOKEN }} is used but not declared "
            "(add GH_TOKEN to secrets: [...])",
        ),
        (
            "prompt_text: hi\nagents:\n  - name: copilot\n    env: {DEBUG: true}\n",
            "evals/x.eval.yaml:4: agents[0].env.DEBUG: expected a string or a number (quote "
            "true/false/null), "
            "got true (a boolean) (write e.g. PORT: '3000')",
        ),
        (
            "prompt_text: hi\nagents:\n  - name: codex\n    audit_requests: 'on'\n",
            "evals/x.eval.yaml:4: agents[0].audit_requests: expected true or false, got 'on' (a string) "
            "(write e.g. audit_requests: true)",
        ),
        (
            "prompt_text: Deploy {{ projet }}\nparams: {project: demo}\nagents: [literal]\n",
            "evals/x.eval.yaml:1: prompt_text: {{ projet }} at line 1 of the prompt text is not a param "
            r"(did you mean project? Or write \{{ to keep the braces as text)",
        ),
        (
            "prompt_text: Use {{ secrets.NEON_API_KEY }}\nagents: [literal]\n",
            "evals/x.eval.yaml:1: prompt_text: {{ secrets.NEON_API_KEY }} at line 1 of the prompt "
            "text is not "
            "declared (add NEON_API_KEY to secrets: [...])",
        ),
        (
            OK + "secrets: [neon-key]\n",
            "evals/x.eval.yaml:3: secrets[0]: 'neon-key' is not an environment variable name "
            "(name the environment variable, e.g. NEON_API_KEY)",
        ),
        (
            OK + "shims:\n  npm: passthru\n",
            "evals/x.eval.yaml:4: shims.npm: expected passthrough, stub or {script: ...}, got "
            "'passthru' (a string) "
            "(write e.g. npm: passthrough, neon: stub, or neon: {script: 'echo neon ok'})",
        ),
        (
            OK + "shims:\n  neon: {script: 5}\n",
            "evals/x.eval.yaml:4: shims.neon.script: expected a non-empty string, got 5 (a number) "
            "(write e.g. neon: {script: 'echo neon ok'})",
        ),
        (
            OK + "shims:\n  neon: {script: x, run: y}\n",
            "evals/x.eval.yaml:4: shims.neon.run: unknown key 'run' (known keys: script)",
        ),
        (
            OK + "shims:\n  bin/neon: stub\n",
            "evals/x.eval.yaml:4: shims.bin/neon: 'bin/neon' holds a '/'; shims replace commands looked up "
            "on PATH, so give a bare name (name the command, e.g. npm)",
        ),
        (
            OK + "id: ../escape\n",
            "evals/x.eval.yaml:3: id: '../escape' is not a valid id "
            "(use letters, digits, '.', '_', '-' and '/' between parts, e.g. setup/create-project)",
        ),
        (
            OK + "trials: 1\ntrials: 2\n",
            "evals/x.eval.yaml:4: trials: this key is given twice (keep one of them)",
        ),
        (
            "- prompt_text: hi\n",
            "evals/x.eval.yaml:1: <file>: expected a mapping, got a list (write e.g. prompt: prompt.md)",
        ),
        (
            "",
            "evals/x.eval.yaml:1: <file>: the file is empty (write at least prompt: and agents:)",
        ),
        (
            "prompt_text: hi\nagents: [literal\ntrials: 2\n",
            "evals/x.eval.yaml:3: <file>: not valid YAML: while parsing a flow sequence expected ',' or ']', "
            "but got ':' (fix the YAML syntax at this line)",
        ),
        (
            OK + "limits: {output: 100}\n",
            "evals/x.eval.yaml:3: limits.output: 100 bytes is out of range (give at least 1KiB and at most "
            "1GiB per stream, e.g. limits: {output: 20MiB})",
        ),
        (
            OK + "limits:\n  output: lots\n",
            "evals/x.eval.yaml:4: limits.output: 'lots' is not a size; write bytes (20971520) or a number "
            "with B, KB, MB, GB, KiB, MiB or GiB (e.g. limits: {output: 20MiB})",
        ),
        (
            OK + "limits: {output: 2GiB}\n",
            "evals/x.eval.yaml:3: limits.output: 2147483648 bytes is out of range (give at least 1KiB and at "
            "most 1GiB per stream, e.g. limits: {output: 20MiB})",
        ),
        (
            OK + "limits: {output: true}\n",
            "evals/x.eval.yaml:3: limits.output: expected a number of bytes or a size such as 20MiB (e.g. "
            "limits: {output: 20MiB})",
        ),
        (
            OK + "limits: {outptu: 1MiB}\n",
            "evals/x.eval.yaml:3: limits.outptu: unknown key 'outptu' (did you mean output?)",
        ),
    ],
)
def test_each_mistake_names_file_line_and_field(project: Path, body: str, expected: str) -> None:
    write(project, "evals/x.eval.yaml", body)
    write(project, "evals/p.md", "hi")
    assert problems("evals") == [expected]


@pytest.mark.parametrize(
    ("item", "expected"),
    [
        (
            "- rann: neon",
            "assert[0]: unknown key 'rann' (did you mean ran?)",
        ),
        (
            "- ran: '/neon (deploy/'",
            "assert[0].ran: /neon (deploy/ is not a valid regular expression: missing ), "
            "unterminated subpattern "
            "at position 5 (write a plain command such as 'neon deploy', or a valid /regex/ with special "
            "characters escaped)",
        ),
        (
            "- ran_in_order: [neon init, '/[x/']",
            "assert[0].ran_in_order[1]: /[x/ is not a valid regular expression: unterminated "
            "character set at "
            "position 0 (write a plain command such as 'neon deploy', or a valid /regex/ with "
            "special characters "
            "escaped)",
        ),
        (
            "- ran_in_order: neon init",
            "assert[0].ran_in_order: expected a list, got 'neon init' (a string) "
            """(write e.g. ran_in_order: ["/neon init .*/", "neon deploy"])""",
        ),
        (
            "- not_ran: ''",
            "assert[0].not_ran: the pattern is empty (write the command, e.g. 'neon deploy', or a /regex/)",
        ),
        (
            "- file_exists: /etc/passwd",
            "assert[0].file_exists: /etc/passwd is not relative (paths are relative to the sandbox, "
            "e.g. src/index.ts)",
        ),
        (
            "- file_contains: {path: .env}",
            "assert[0].file_contains.pattern: is missing "
            """(write e.g. file_contains: {path: .env.local, pattern: "DATABASE_URL="})""",
        ),
        (
            "- file_contains: {path: .env, pattern: x, regex: true}",
            "assert[0].file_contains.regex: unknown key 'regex' (known keys: path, pattern)",
        ),
        (
            "- succeeds: {command: npm test, exit_code: '0'}",
            "assert[0].succeeds.exit_code: expected an integer, got '0' (a string) (write e.g. exit_code: 0)",
        ),
        (
            "- succeeds: {command: npm test, timeout: soon}",
            "assert[0].succeeds.timeout: 'soon' is not a duration "
            "(use seconds as a number, or a duration such as 90s, 10m, 1h, 1h30m; e.g. timeout: 5m)",
        ),
        (
            "- assert_that: {name: x, check: 'missing_module_q:f'}",
            "assert[0].assert_that.check: cannot import 'missing_module_q' (No module named "
            "'missing_module_q'); "
            "looked in evals, . (name a function in a module beside the eval file or in a parent folder)",
        ),
        (
            "- assert_that: {name: x, check: no_colon}",
            "assert[0].assert_that.check: 'no_colon' is not of the form module:function "
            "(name a function in a module beside the eval file or in a parent folder)",
        ),
        (
            "- {ran: a, not_ran: b}",
            "assert[0]: an item holds exactly one check, found keys: ran, not_ran (start each check "
            "with its own -)",
        ),
        (
            "- neon deploy",
            "assert[0]: expected a mapping, got 'neon deploy' (a string) (write e.g. - ran: neon deploy)",
        ),
    ],
)
def test_assertion_mistakes(project: Path, item: str, expected: str) -> None:
    write(project, "evals/x.eval.yaml", OK + "assert:\n  " + item + "\n")
    assert problems("evals") == [f"evals/x.eval.yaml:4: {expected}"]


def test_assert_that_names_a_missing_function(project: Path) -> None:
    write(project, "evals/checks_missing_fn.py", "def other(trial):\n    return True\n")
    write(
        project,
        "evals/x.eval.yaml",
        OK + "assert:\n  - assert_that: {name: x, check: 'checks_missing_fn:nope'}\n",
    )
    assert problems("evals") == [
        "evals/x.eval.yaml:4: assert[0].assert_that.check: checks_missing_fn has no 'nope' "
        "(name a function in a module beside the eval file or in a parent folder)"
    ]


def test_every_problem_of_every_file_is_reported_at_once(project: Path) -> None:
    write(
        project,
        "evals/a.eval.yaml",
        """
        prompt_text: "Deploy {{ projet }}"
        agents: [literal, copiolt]
        trials: 0
        assert:
          - ran: '/[x/'
        timeout: forever
        """,
    )
    write(project, "evals/b.eval.yaml", "prompt_text: hi\nagents: [literal]\npass_rate: 2\n")
    write(project, "evals/c.eval.yaml", OK)
    found = problems("evals")
    assert [line.split(": ", 2)[:2] for line in found] == [
        ["evals/a.eval.yaml:1", "prompt_text"],
        ["evals/a.eval.yaml:2", "agents[1]"],
        ["evals/a.eval.yaml:3", "trials"],
        ["evals/a.eval.yaml:5", "assert[0].ran"],
        ["evals/a.eval.yaml:6", "timeout"],
        ["evals/b.eval.yaml:3", "pass_rate"],
    ]


def test_a_prompt_file_placeholder_names_the_prompt_file_and_line(project: Path) -> None:
    write(project, "docs/setup.md", "# Setup\n\nRun `neon init {{ project }}` then {{ region }}.\n")
    write(
        project, "evals/x.eval.yaml", "prompt: ../docs/setup.md\nparams: {project: demo}\nagents: [literal]\n"
    )
    assert problems("evals") == [
        "evals/x.eval.yaml:1: prompt: {{ region }} at docs/setup.md:3 is not a param "
        r"(add it under params, or write \{{ to keep the braces as text)"
    ]


def test_a_template_that_is_a_file_is_refused(project: Path) -> None:
    write(project, "evals/template", "not a folder")
    write(project, "evals/x.eval.yaml", OK + "sandbox: {template: template}\n")
    assert problems("evals") == [
        "evals/x.eval.yaml:3: sandbox.template: the template folder template is not a folder "
        "(looked for evals/template; paths are relative to the eval file)"
    ]


@pytest.mark.parametrize(
    ("sandbox", "expected"),
    [
        (
            "sandbox: {exclude: [node_modules]}\n",
            "evals/x.eval.yaml:3: sandbox.exclude: has no template to exclude from (add sandbox.template: "
            "exclude leaves files of the template out of each trial's copy)",
        ),
        (
            "sandbox: {template: t, exclude: node_modules}\n",
            "evals/x.eval.yaml:3: sandbox.exclude: expected a list, got 'node_modules' (a string) "
            "(write e.g. sandbox: {template: .., exclude: [node_modules, '*.log']})",
        ),
        (
            "sandbox: {template: t, exclude: [ok, ../up]}\n",
            "evals/x.eval.yaml:3: sandbox.exclude[1]: '../up' uses '.' or '..'; write the path from the "
            "template folder, e.g. build/out (write a glob relative to the template, e.g. node_modules, "
            "'*.log' or build/**)",
        ),
    ],
)
def test_sandbox_exclude_mistakes(project: Path, sandbox: str, expected: str) -> None:
    (project / "evals/t").mkdir(parents=True)
    write(project, "evals/x.eval.yaml", OK + sandbox)
    assert problems("evals") == [expected]


def test_sandbox_exclude_is_read(project: Path) -> None:
    from .helpers import load

    (project / "evals/t").mkdir(parents=True)
    write(project, "evals/x.eval.yaml", OK + "sandbox: {template: t, exclude: [node_modules, '*.log']}\n")
    (spec,) = load("evals")
    assert spec.template_exclude == ("node_modules", "*.log")
