from click.testing import CliRunner

from trialbook import __version__
from trialbook.cli import cli


def test_version_prints_the_package_version() -> None:
    result = CliRunner().invoke(cli, ["--version"], catch_exceptions=False)
    assert result.exit_code == 0
    assert result.output.strip() == f"trialbook {__version__}"


def test_help_lists_the_tool() -> None:
    result = CliRunner().invoke(cli, ["--help"], catch_exceptions=False)
    assert result.exit_code == 0
    assert "real coding agents" in result.output
