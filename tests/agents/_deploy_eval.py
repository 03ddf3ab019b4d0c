"""The examples' deploy guide as an eval for real agents: one shell call that follows it, and its checks."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

FOLLOW_THE_GUIDE = (
    "acme init --project-id demo --region eu-west"
    ' && printf \'project = "demo"\\nregion = "eu-west"\\nentry = "app/main.py"\\n\' > acme.toml'
    " && acme env pull > .env.local"
    " && python3 app/check.py"
    " && acme deploy --prod"
)
"""What a model scripted to follow the guide runs, in one tool call."""

EXPECTED_CALLS = [
    ["acme", "init", "--project-id", "demo", "--region", "eu-west"],
    ["acme", "env", "pull"],
    ["python3", "app/check.py"],
    ["acme", "deploy", "--prod"],
]

_REST = """
sandbox: {{template: {template}}}
trials: {trials}
shims:
  acme:
    script: |
      case "$1" in
        init) echo "created project $3" ;;
        env) echo "DATABASE_URL=postgres://demo:5432/app" ;;
        deploy) echo "deployed" ;;
      esac
  python3: passthrough
assert:
  - ran_in_order: ["/acme init .*--project-id demo/", "acme env pull", "acme deploy --prod"]
  - not_ran: acme delete
  - file_exists: acme.toml
  - file_contains: {{path: .env.local, pattern: "/^DATABASE_URL=postgres:/"}}
  - succeeds: python3 app/check.py
timeout: 3m
"""


def write_deploy_eval(root: Path, *, secrets: list[str], agents: str, trials: int = 1) -> Path:
    """``root/evals/deploy.eval.yaml`` over the examples' guide and template; ``agents`` is YAML."""
    text = (
        f"prompt: {EXAMPLES / 'docs/deploy-guide.md'}\n"
        "params: {project: demo, region: eu-west}\n"
        f"secrets: [{', '.join(secrets)}]\n"
        "agents:\n"
        + textwrap.indent(textwrap.dedent(agents).strip("\n"), "  ")
        + _REST.format(template=EXAMPLES / "evals/template", trials=trials)
    )
    path = root / "evals/deploy.eval.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def calls_of(trial_folder: Path) -> list[list[str]]:
    """The argv of every shimmed call a trial's transcript folder recorded."""
    lines = (trial_folder / "calls.jsonl").read_text().splitlines()
    return [json.loads(line)["argv"] for line in lines]
