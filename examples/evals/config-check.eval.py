"""A Python eval file: the same guide, with a check written in Python."""

import tomllib

from trialbook import assert_that, define_eval, file_exists, ran
from trialbook.assertions import FinishedTrial


def config_points_at_the_app(trial: FinishedTrial) -> bool:
    """acme.toml must name the app's real entry point, which must exist in the sandbox."""
    text = trial.read_text("acme.toml")
    if text is None:
        raise AssertionError("acme.toml was not written")
    entry = tomllib.loads(text).get("entry")
    if not entry or not trial.exists(entry):
        raise AssertionError(f"entry {entry!r} does not exist in the sandbox")
    return True


EVAL = define_eval(
    prompt="../docs/deploy-guide.md",
    params={"project": "checked", "region": "ap-south"},
    agents=["literal"],
    sandbox={"template": "template/"},
    shims={"acme": {"script": 'echo "acme $*"; [ "$1" != env ] || echo DATABASE_URL=postgres://x'}},
    assert_=[
        ran("acme deploy --prod"),
        file_exists(".env.local"),
        assert_that("config points at the app", config_points_at_the_app),
    ],
    timeout="1m",
)
